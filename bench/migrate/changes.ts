/**
 * Each change kind the generator emits, in its two forms: the step-format
 * file the runner applies (the safe form) and the plain DDL in one
 * transaction (what a migration tool without lock discipline runs). `setup`
 * and `undo` run without traffic, outside the measurement.
 */

import type { MigrateSettings } from '../../runtime/db/migrate/index.ts';

export interface Change {
  readonly name: string;
  readonly safe: string;
  /** Absent for a variant of the safe form (the plain form is measured by the change it varies). */
  readonly plain?: string;
  /** The runner's settings for the safe form, over the environment's. */
  readonly settings?: Partial<MigrateSettings>;
  readonly setup?: string;
  /** Puts the table back as it was before the change, between the two forms. */
  readonly undo?: string;
  /** A reader holding the table for 10 s while the migration starts. */
  readonly reader?: boolean;
}

const HEADER = (what: string) => `-- svc-gen migration 0001: ${what}\n`;

/** "make required" on column `column`: default, backfill, check not valid, validate, set not null. */
const makeRequired = (column: string) => `${HEADER('Contact.kind required')}-- step 1 transactional: new rows get the default
alter table "contact" alter column "${column}" set default 'lead';
-- step 2 backfill "contact": fill Contact.kind
update "contact" set "${column}" = 'lead' where "${column}" is null;
-- step 3 transactional: check Contact.kind not null, not valid
alter table "contact" add constraint "contact_${column}_nn" check ("${column}" is not null) not valid;
-- step 4 online: validate the check
alter table "contact" validate constraint "contact_${column}_nn";
-- step 5 transactional: Contact.kind not null (the check spares the scan), the check dropped
alter table "contact" alter column "${column}" set not null;
alter table "contact" drop constraint "contact_${column}_nn";
`;

export const CHANGES: readonly Change[] = [
  {
    // The noise floor: the same traffic while the runner changes nothing for 60 s (a preflight that sleeps and finds no row).
    name: 'control: no change, 60 s',
    safe: `${HEADER('nothing')}-- step 1 preflight: sleep 60 s, find nothing
select 1 as offending from pg_sleep(60) where random() < 0;
`,
  },
  {
    name: 'add index',
    safe: `${HEADER('index Contact.email')}-- step 1 online: index Contact.email
create index concurrently if not exists "contact_email_idx" on "contact" ("email");
`,
    plain: 'create index "contact_email_idx" on "contact" ("email")',
    undo: 'drop index if exists "contact_email_idx"',
  },
  {
    name: 'add unique (preflight)',
    safe: `${HEADER('Contact.email unique')}-- step 1 preflight: no duplicate Contact.email
select "email", count(*) as duplicates from "contact" group by "email" having count(*) > 1;
-- step 2 online: unique index on Contact.email
create unique index concurrently if not exists "contact_email_key" on "contact" ("email");
-- step 3 transactional: the unique constraint, from the index
alter table "contact" add constraint "contact_email_key" unique using index "contact_email_key";
`,
    plain: 'alter table "contact" add constraint "contact_email_key" unique ("email")',
    undo: 'alter table "contact" drop constraint if exists "contact_email_key"',
  },
  {
    name: 'add relation',
    safe: `${HEADER('Contact belongsTo Company')}-- step 1 transactional: the foreign key, not valid
alter table "contact" add constraint "contact_company_fk" foreign key ("company_id") references "company" ("id") not valid;
-- step 2 online: validate the foreign key
alter table "contact" validate constraint "contact_company_fk";
`,
    plain: 'alter table "contact" add constraint "contact_company_fk" foreign key ("company_id") references "company" ("id")',
    undo: 'alter table "contact" drop constraint if exists "contact_company_fk"',
  },
  {
    name: 'make required',
    safe: makeRequired('kind_safe'),
    plain: `update "contact" set "kind_plain" = 'lead' where "kind_plain" is null;
alter table "contact" alter column "kind_plain" set not null`,
  },
  {
    // The same change paced to the server's WAL (SVC_MIGRATE_WAL_PACE_SECS=30), on a column of its own, to compare in one run.
    name: 'make required, WAL paced',
    safe: makeRequired('kind_paced'),
    settings: { walPaceSecs: 30 },
  },
  {
    // The same change with the closing vacuum unthrottled (SVC_MIGRATE_VACUUM_COST_DELAY_MS=0, a manual vacuum's Postgres default), to compare in one run.
    name: 'make required, vacuum unthrottled',
    safe: makeRequired('kind_unthrottled'),
    settings: { vacuumCostDelayMs: 0 },
  },
  {
    name: 'add column, volatile default',
    safe: `${HEADER('Contact.token')}-- step 1 transactional: Contact.token, new rows get a fresh one
alter table "contact" add column "token_safe" uuid;
alter table "contact" alter column "token_safe" set default gen_random_uuid();
-- step 2 backfill "contact": fill Contact.token
update "contact" set "token_safe" = gen_random_uuid() where "token_safe" is null;
`,
    plain: 'alter table "contact" add column "token_plain" uuid default gen_random_uuid()',
  },
  {
    name: 'drop index',
    setup: 'create index if not exists "contact_n_idx" on "contact" ("n")',
    safe: `${HEADER('drop the index of Contact.n')}-- step 1 online: drop the index of Contact.n
drop index concurrently if exists "contact_n_idx";
`,
    plain: 'drop index "contact_n_idx"',
    undo: 'create index if not exists "contact_n_idx" on "contact" ("n")',
  },
  {
    name: 'lock queue: add column behind a 10 s reader',
    reader: true,
    safe: `${HEADER('Contact.note')}alter table "contact" add column "note_safe" text;\n`,
    plain: 'alter table "contact" add column "note_plain" text',
  },
];
