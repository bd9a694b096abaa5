import { defineSchema } from 'svc-gen/schema';

/** Where a deal is in the pipeline. */
export type DealStage = 'lead' | 'qualified' | 'proposal' | 'won' | 'lost';

export type TicketPriority = 'low' | 'normal' | 'high' | 'urgent';

/** A postal address, stored inside its owner as jsonb. */
export interface Address {
  street?: string;
  city: string;
  /** @max 12 */
  postcode?: string;
  country: string;
}

export interface Company {
  id: string;
  /** @min 2 @max 120 @unique */
  name: string;
  /** @email */
  email?: string;
  /** @numeric @min 6 @max 20 */
  phone?: string;
  /** @min 0 @max 1000000 */
  employees?: number;
  website?: string;
  address?: Address;
  /** @max 10 */
  tags?: string[];
  contacts?: Contact[];
  deals?: Deal[];
  tickets?: Ticket[];
}

export interface Contact {
  id: string;
  /** @min 1 @max 80 */
  firstName: string;
  /** @max 80 */
  lastName?: string;
  /** @email @unique */
  email: string;
  /** @numeric */
  phone?: string;
  company?: Company;
  /** @default false */
  vip: boolean;
  /** @index */
  lastContactAt?: Date;
  deals?: Deal[];
  activities?: Activity[];
  notes?: Note[];
}

export interface Deal {
  id: string;
  /** @min 3 @max 200 */
  title: string;
  /** @default 'lead' @index */
  stage: DealStage;
  /** @min 0 */
  amount: number;
  /** @default 'EUR' @min 3 @max 3 */
  currency: string;
  closeDate?: Date;
  company: Company;
  contact?: Contact;
  lineItems?: LineItem[];
  activities?: Activity[];
}

export interface Activity {
  id: string;
  kind: 'call' | 'email' | 'meeting' | 'task';
  /** @max 200 */
  subject: string;
  dueAt?: Date;
  /** @default false */
  done: boolean;
  contact?: Contact;
  deal?: Deal;
}

export interface Note {
  id: string;
  /** @min 1 @max 10000 */
  body: string;
  contact: Contact;
  /** @default false */
  pinned?: boolean;
}

export interface Product {
  id: string;
  /** @min 2 @max 120 */
  name: string;
  /** @unique @min 3 @max 32 */
  sku: string;
  /** @min 0 */
  price: number;
  description?: string;
  /** @default true */
  active: boolean;
  lineItems?: LineItem[];
}

export interface LineItem {
  id: string;
  deal: Deal;
  product: Product;
  /** @min 1 @default 1 */
  quantity: number;
  /** Position in the deal; a SQL keyword on purpose. @min 0 */
  order: number;
}

export interface Ticket {
  id: string;
  /** @min 3 @max 200 */
  subject: string;
  /** @default 'normal' */
  priority: TicketPriority;
  /** @default 'open' */
  status: 'open' | 'pending' | 'closed';
  company?: Company;
  /** The support agent's user id; named like a SQL keyword on purpose. */
  user?: string;
  openedAt?: Date;
}

export default defineSchema({
  models: {
    Company: {
      access: {
        read: 'authenticated',
        create: ['Admin', 'Manager', 'Sales'],
        update: ['Admin', 'Manager', 'Sales'],
        delete: ['Admin', 'Manager'],
      },
    },
    Contact: {
      access: {
        read: ['Admin', 'Manager', 'Sales', 'Support'],
        create: ['Manager', 'Sales'],
        update: ['Manager', 'Sales', 'Support'],
      },
    },
    Deal: {
      access: {
        read: ['Manager', 'Sales'],
        create: ['Manager', 'Sales'],
        update: ['Manager', 'Sales'],
        delete: ['Manager'],
      },
    },
    Activity: { access: { create: ['Manager', 'Sales', 'Support'], update: ['Manager', 'Sales', 'Support'] } },
    Note: { access: { create: ['Manager', 'Sales', 'Support'] } },
    Product: {
      access: { read: 'public', create: ['Manager'], update: ['Manager'] },
      publicRead: { fields: ['name', 'sku', 'price', 'description'] },
    },
    Ticket: {
      access: { read: ['Manager', 'Support'], create: 'authenticated', update: ['Support'], delete: ['Manager'] },
    },
  },
});
