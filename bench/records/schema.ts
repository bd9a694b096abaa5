import { defineSchema } from 'svc-gen/schema';

/** The benchmark's one table: served by svc-gen, by a raw pg server (the floor) and by PostGraphile. */
export interface Item {
  id: string;
  name: string;
  price: number;
  note?: string;
}

export default defineSchema({
  models: {
    Item: { access: { read: 'authenticated', create: 'authenticated', update: 'authenticated', delete: 'authenticated' } },
  },
});
