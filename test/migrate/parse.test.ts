/** The step format (docs/adr/019-online-migrations.md): a table of files and what the runner reads from them. */
import { describe, expect, it } from 'vitest';
import { parseBackfill, parseMigration, splitStatements } from '../../runtime/db/migrate/parse.ts';

const HEADER = '-- svc-gen migration 0004: Contact.email unique\n-- generated\n';

describe('parseMigration', () => {
  const cases: Array<{ name: string; text: string; steps: Array<[number, string, string | null, string]>; contractOf?: string }> = [
    { name: 'a file without step lines is one transactional step', text: `${HEADER}create table "a" (id text primary key);\n`,
      steps: [[1, 'transactional', null, 'the whole file']] },
    { name: 'a comment that merely starts with "step" is not a step line', text: '-- step records, one row each\ncreate table "b" (id int);\n',
      steps: [[1, 'transactional', null, 'the whole file']] },
    { name: 'steps of every kind, in order', text: `${HEADER}-- step 1 preflight: no duplicate Contact.email
select "email", count(*) from "contact" group by 1 having count(*) > 1;
-- step 2 online: add unique index on Contact.email
create unique index concurrently if not exists "contact_email_key" on "contact" ("email");
-- step 3 transactional "contact": set the default
alter table "contact" alter column "kind" set default 'lead';
-- step 4 backfill "contact": fill Contact.kind
update "contact" set "kind" = 'lead' where "kind" is null;
`, steps: [[1, 'preflight', null, 'no duplicate Contact.email'], [2, 'online', null, 'add unique index on Contact.email'],
      [3, 'transactional', 'contact', 'set the default'], [4, 'backfill', 'contact', 'fill Contact.kind']] },
    { name: 'the contract marker in the header', text: '-- svc-gen migration 0007\n-- contract of 0006: drop Contact.old_name\n-- step 1 transactional: drop it\nalter table "contact" drop column "old_name";\n',
      steps: [[1, 'transactional', null, 'drop it']], contractOf: '0006' },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const parsed = parseMigration(c.text);
      expect(parsed.steps.map((s) => [s.number, s.kind, s.table, s.description])).toEqual(c.steps);
      expect(parsed.contractOf).toBe(c.contractOf ?? null);
    });
  }

  it('keeps the whole file as the body of a file without steps, and each step\'s lines as its body', () => {
    const text = `${HEADER}create table "a" (id int);\n`;
    expect(parseMigration(text).steps[0].body).toBe(text);
    const parsed = parseMigration('-- step 1 transactional: one\nselect 1;\n-- step 2 online: two\ncreate index concurrently "i" on "a" (id);\n');
    expect(parsed.steps.map((s) => s.body)).toEqual(['select 1;', 'create index concurrently "i" on "a" (id);\n']);
  });

  const refused: Array<[string, string, RegExp]> = [
    ['a gap in the numbers', '-- step 1 transactional: a\nselect 1;\n-- step 3 transactional: b\nselect 2;\n', /line 3: step 3: .*expected step 2/],
    ['a step line out of the grammar', '-- step 1 sometimes: a\nselect 1;\n', /line 1: not a step line/],
    ['two statements in an online step', '-- step 1 online: a\ncreate index concurrently "i" on "a" (x);\ncreate index concurrently "j" on "a" (y);\n', /exactly one statement, found 2/],
    ['a backfill without its table', '-- step 1 backfill: fill\nupdate "a" set x = 1 where x is null;\n', /names its table/],
    ['a backfill of another table', '-- step 1 backfill "a": fill\nupdate "b" set x = 1 where x is null;\n', /one update "a" set/],
    ['a backfill without where', '-- step 1 backfill "a": fill\nupdate "a" set x = 1;\n', /needs a where clause/],
    ['a preflight that is not a select', '-- step 1 preflight: check\ndelete from "a";\n', /one select/],
    ['an empty step', '-- step 1 transactional: nothing\n-- only a comment\n', /has no statement/],
    ['a keyset column on a step that is not a backfill', '-- step 1 online "a" by "x": index\ncreate index concurrently "i" on "a" (x);\n', /only a backfill step names a keyset column/],
  ];
  for (const [name, text, message] of refused) {
    it(`refuses ${name}`, () => expect(() => parseMigration(text)).toThrow(message));
  }
});

describe('a backfill\'s keyset column', () => {
  it('is id unless the step names another (`by "column"`, for a table without id)', () => {
    const { steps } = parseMigration(`-- step 1 backfill "blobs" by "sha256": fill the tenant
update "blobs" set tenant_id = '' where tenant_id is null;
-- step 2 backfill "media": fill the tenant
update "media" set tenant_id = '' where tenant_id is null;
`);
    expect(steps.map((s) => [s.kind, s.table, s.key, s.description])).toEqual([
      ['backfill', 'blobs', 'sha256', 'fill the tenant'], ['backfill', 'media', null, 'fill the tenant']]);
  });
});

describe('statements and backfills', () => {
  it('splits statements outside quotes, dollar quotes and comments', () => {
    const text = `create function f() returns int language sql as $$ select 1; $$;
-- a comment; with a semicolon
insert into "a" (x) values ('a;b'); /* c; */ select "we;ird" from "a"`;
    expect(splitStatements(text)).toEqual([
      'create function f() returns int language sql as $$ select 1; $$',
      `insert into "a" (x) values ('a;b')`,
      'select "we;ird" from "a"',
    ]);
  });

  it('finds the top-level where of a backfill, not one inside a subquery', () => {
    const backfill = parseBackfill('update "contact" set "n" = (select count(*) from "deal" d where d.contact_id = "contact".id) where "n" is null;', 'contact');
    expect(backfill.head).toBe('update "contact" set "n" = (select count(*) from "deal" d where d.contact_id = "contact".id)');
    expect(backfill.condition).toBe('"n" is null');
  });
});
