import { defineSchema, type Media } from 'svc-gen/schema';

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
  /** The company's logo: an id from POST /media. */
  logo?: Media;
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
  /** @numeric @sensitive */
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
  /** Set by the wonDeal workflow once billing has invoiced the deal. */
  invoiced?: boolean;
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
  actions: {
    scoreLead: { input: { pick: { model: 'Contact', fields: ['id', 'email', 'company'] } }, access: ['Manager', 'Sales'] },
    notifyWon: { input: { pick: { model: 'Deal', fields: ['id', 'title', 'amount', 'currency', 'company'] } } },
    escalateTicket: { input: { pick: { model: 'Ticket', fields: ['id', 'subject', 'priority'] } }, access: ['Manager', 'Support'] },
    enrichCompany: { input: { companyId: 'string', website: 'string?', force: 'boolean?' }, access: 'authenticated' },
    sendQuote: { input: { dealId: 'string', stage: 'DealStage', recipients: 'string[]', validUntil: 'date?', discount: 'number?' }, access: ['Manager', 'Sales'] },
  },
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
      on: { created: ['scoreLead'] },
    },
    Deal: {
      access: {
        read: ['Manager', 'Sales'],
        create: ['Manager', 'Sales'],
        update: ['Manager', 'Sales'],
        delete: ['Manager'],
      },
      on: {
        updated: [{ action: 'notifyWon', when: { changed: ['stage'], equals: { stage: 'won' } } }],
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
      on: {
        created: [{ action: 'escalateTicket', when: { equals: { priority: 'urgent' } } }],
        updated: [{ action: 'escalateTicket', when: { changed: ['priority'], equals: { priority: 'urgent', status: 'open' } } }],
      },
    },
  },
  workflows: {
    // A won deal is invoiced by the billing worker, marked invoiced, and announced by the notifications worker.
    wonDeal: {
      trigger: { on: 'Deal.updated', when: { changed: ['stage'], equals: { stage: 'won' } } },
      steps: [
        {
          id: 'invoice',
          job: {
            queue: 'billing',
            kind: 'invoice',
            payload: { dealId: '{{trigger.record.id}}', amount: '{{trigger.record.amount}}', currency: '{{trigger.record.currency}}' },
            await: true,
          },
        },
        {
          id: 'markInvoiced',
          if: { eq: ['{{steps.invoice.result.ok}}', true] },
          mutation: { update: { model: 'Deal', id: '{{trigger.record.id}}', data: { invoiced: true } } },
        },
        {
          id: 'notify',
          job: {
            queue: 'notifications',
            kind: 'dealWon',
            payload: { dealId: '{{trigger.record.id}}', title: '{{trigger.record.title}}', invoice: '{{steps.invoice.result.invoiceId}}', by: '{{trigger.actor.id}}' },
          },
        },
      ],
      onFailure: { retry: { maxAttempts: 5 } },
    },
    // Weekday mornings: close stale tickets and report how many.
    staleTickets: {
      trigger: { schedule: '0 9 * * 1-5', timezone: 'Europe/Berlin' },
      steps: [
        { id: 'sweep', job: { queue: 'support', kind: 'sweepStaleTickets', payload: { olderThanDays: 7 }, await: true } },
        { id: 'count', set: { stale: '{{steps.sweep.result.closed}}' } },
        { id: 'report', if: { gt: ['{{vars.stale}}', 0] }, http: { method: 'POST', url: 'https://hooks.example.com/support/stale', body: { closed: '{{vars.stale}}' } } },
      ],
      onFailure: 'continue',
    },
    // Started by a salesperson: log a follow-up task, wait two days, remind the contact.
    followUp: {
      trigger: { manual: ['Manager', 'Sales'] },
      steps: [
        { id: 'task', mutation: { create: { model: 'Activity', data: { kind: 'task', subject: 'Follow up', dealId: '{{trigger.input.dealId}}', dueAt: '{{trigger.input.dueAt}}' } } } },
        { id: 'wait', delay: { days: 2 } },
        {
          id: 'remind',
          if: { exists: ['{{trigger.input.contactId}}'] },
          job: { queue: 'email', kind: 'followUpReminder', payload: { activityId: '{{steps.task.result.id}}', contactId: '{{trigger.input.contactId}}', from: '{{trigger.actor.id}}' } },
        },
      ],
    },
  },
});
