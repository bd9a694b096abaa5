import { defineSchema } from 'svc-gen/schema';

/** Two identical tables; only `Bound` enqueues an action (its job commits with each create). */
export interface Plain {
  id: string;
  name: string;
  price: number;
}

export interface Bound {
  id: string;
  name: string;
  price: number;
}

export default defineSchema({
  actions: {
    priced: { input: { pick: { model: 'Bound', fields: ['id', 'name', 'price'] } } },
  },
  models: {
    Plain: { access: { create: 'authenticated' } },
    Bound: { access: { create: 'authenticated' }, on: { created: ['priced'] } },
  },
});
