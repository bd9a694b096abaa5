import { defineSchema } from 'svc-gen/schema';

export type Stage = 'lead' | 'qualified' | 'won';

export interface Company {
  id: string;
  /** @min 2 */
  name: string;
  contacts?: Contact[];
  deals?: Deal[];
}

export interface Contact {
  id: string;
  name?: string;
  /** @email @unique */
  email: string;
  company?: Company;
  /** @default false */
  vip?: boolean;
  /** @default 'lead' */
  stage: Stage;
}

export interface Deal {
  id: string;
  /** @renamedFrom("title") */
  name: string;
  /** @index */
  amount?: string;
  company: Company;
  /** @default 0 */
  probability: number;
}

export default defineSchema({
  models: {
    Company: { access: { create: ['Manager'] } },
    Deal: { access: { read: ['Manager', 'Sales'] } },
  },
});
