import { defineSchema } from 'svc-gen/schema';

/** The scale bench's one model: many tenants' deals, listed by amount. */
export interface Deal {
  id: string;
  /** @min 1 @max 200 */
  title: string;
  /** @index */
  amount: number;
  stage?: string;
}

export default defineSchema({
  models: {
    Deal: {
      access: { read: 'authenticated', create: 'authenticated', update: 'authenticated', delete: 'authenticated' },
      publicRead: { fields: ['title', 'amount'] },
    },
  },
});
