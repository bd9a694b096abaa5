/** The lock report's classifier: each statement the generator emits, and its plain form, with the lock Postgres 15 takes. */
import { describe, expect, it } from 'vitest';
import { binaryCompatible, classifyStatement, type TableFacts } from '../../runtime/db/migrate/classify.ts';

const facts = (over: Partial<TableFacts> = {}): TableFacts => ({
  isNew: () => false,
  hasNotNullCheck: () => false,
  columnType: (_t, c) => ({ name: 'character varying(40)', n: 'integer', price: 'numeric(10,2)' } as Record<string, string>)[c] ?? null,
  tableOfIndex: (i) => (i === 'contact_email_idx' ? 'contact' : null),
  ...over,
});

type Expect = [lock: string, brief: boolean, rewrites: boolean, scans: boolean];

const CASES: Array<[string, Expect, Partial<TableFacts>?]> = [
  ['create index concurrently if not exists "contact_email_idx" on "contact" ("email")', ['SHARE UPDATE EXCLUSIVE', false, false, true]],
  ['create unique index "contact_email_key" on "contact" ("email")', ['SHARE', false, false, true]],
  ['drop index concurrently if exists "contact_email_idx"', ['SHARE UPDATE EXCLUSIVE', true, false, false]],
  ['drop index "contact_email_idx"', ['ACCESS EXCLUSIVE', true, false, false]],
  ['alter table "contact" add column "score" integer', ['ACCESS EXCLUSIVE', true, false, false]],
  ['alter table "contact" add column "score" integer not null default 0', ['ACCESS EXCLUSIVE', true, false, false]],
  ['alter table "contact" add column "token" uuid default gen_random_uuid()', ['ACCESS EXCLUSIVE', false, true, false]],
  ['alter table "contact" add column "seq" bigserial', ['ACCESS EXCLUSIVE', false, true, false]],
  ['alter table "deal" add constraint "deal_contact_fk" foreign key ("contact_id") references "contact" ("id") not valid', ['SHARE ROW EXCLUSIVE', true, false, false]],
  ['alter table "deal" add constraint "deal_contact_fk" foreign key ("contact_id") references "contact" ("id")', ['SHARE ROW EXCLUSIVE', false, false, true]],
  ['alter table "contact" add constraint "contact_kind_nn" check ("kind" is not null) not valid', ['ACCESS EXCLUSIVE', true, false, false]],
  ['alter table "contact" add constraint "contact_kind_nn" check ("kind" is not null)', ['ACCESS EXCLUSIVE', false, false, true]],
  ['alter table "contact" validate constraint "contact_kind_nn"', ['SHARE UPDATE EXCLUSIVE', false, false, true]],
  ['alter table "contact" alter column "kind" set not null', ['ACCESS EXCLUSIVE', false, false, true]],
  ['alter table "contact" alter column "kind" set not null', ['ACCESS EXCLUSIVE', true, false, false], { hasNotNullCheck: () => true }],
  ['alter table "contact" alter column "kind" drop not null', ['ACCESS EXCLUSIVE', true, false, false]],
  ['alter table "contact" alter column "kind" set default \'lead\'', ['ACCESS EXCLUSIVE', true, false, false]],
  ['alter table "contact" alter column "name" type varchar(64)', ['ACCESS EXCLUSIVE', true, false, false]],
  ['alter table "contact" alter column "name" type text', ['ACCESS EXCLUSIVE', true, false, false]],
  ['alter table "contact" alter column "name" type varchar(20)', ['ACCESS EXCLUSIVE', false, true, false]],
  ['alter table "contact" alter column "n" type bigint', ['ACCESS EXCLUSIVE', false, true, false]],
  ['alter table "contact" add constraint "contact_email_key" unique using index "contact_email_key"', ['ACCESS EXCLUSIVE', true, false, false]],
  ['alter table "contact" add constraint "contact_email_key" unique ("email")', ['ACCESS EXCLUSIVE', false, false, true]],
  ['alter table "contact" rename column "name" to "full_name"', ['ACCESS EXCLUSIVE', true, false, false]],
  ['update "contact" set "kind" = \'lead\' where "kind" is null', ['ROW EXCLUSIVE', false, false, false]],
  ['select "email", count(*) from "contact" group by 1 having count(*) > 1', ['ACCESS SHARE', false, false, true]],
  ['drop trigger if exists "contact_name_sync" on "contact"', ['ACCESS EXCLUSIVE', true, false, false]],
  ['create trigger "contact_name_sync" before insert or update on "contact" for each row execute function contact_name_sync()', ['SHARE ROW EXCLUSIVE', true, false, false]],
  ['create table "note" (id text primary key, body text)', ['none', true, false, false]],
  ['create index "note_body_idx" on "note" ("body")', ['SHARE', true, false, false], { isNew: (t) => t === 'note' }],
];

describe('classifyStatement', () => {
  for (const [statement, [lock, brief, rewrites, scans], over] of CASES) {
    it(`${statement}${over ? ' (with database facts)' : ''}`, () => {
      const c = classifyStatement(statement, facts(over));
      expect({ lock: c.lock, brief: c.brief, rewrites: c.rewrites, scans: c.scans, known: c.known }).toEqual({ lock, brief, rewrites, scans, known: true });
    });
  }

  it('says it does not know a statement instead of guessing', () => {
    expect(classifyStatement('cluster "contact" using "contact_pkey"', facts())).toMatchObject({ known: false, lock: 'ACCESS EXCLUSIVE' });
  });

  it('names the table of a dropped index from the database', () => {
    expect(classifyStatement('drop index concurrently "contact_email_idx"', facts()).table).toBe('contact');
  });
});

describe('binaryCompatible', () => {
  const table: Array<[string, string, boolean]> = [
    ['character varying(40)', 'varchar(64)', true], ['character varying(40)', 'varchar(40)', true],
    ['character varying(40)', 'varchar(39)', false], ['character varying(40)', 'text', true], ['text', 'varchar', true],
    ['text', 'varchar(10)', false], ['numeric(10,2)', 'numeric(12,2)', true], ['numeric(10,2)', 'numeric(12,3)', false],
    ['integer', 'bigint', false], ['integer', 'int', true],
  ];
  for (const [from, to, ok] of table) it(`${from} -> ${to}: ${ok ? 'in place' : 'rewrite'}`, () => expect(binaryCompatible(from, to)).toBe(ok));
});
