/**
 * Each change kind becomes its online-safe steps (docs/migrations.md): the
 * kinds and their order, per change, from fixtures/history v3 plus one edit.
 */
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { build } from '../../generator/index.ts';
import { formatPlan, parseMigration, planFilesOffline, readSet } from '../../runtime/db/migrate/index.ts';
import { FIXTURES, buildOk, copySchema, tempDir } from './helpers.ts';

function edit(path: string, from: string, to: string): void {
  const text = readFileSync(path, 'utf8');
  if (!text.includes(from)) throw new Error(`fixture does not contain ${from}`);
  writeFileSync(path, text.replace(from, to));
}

async function afterEdit(edits: [string, string][], allowDestructive = false) {
  const schemaPath = copySchema('history/v3');
  const outDir = tempDir('steps');
  await buildOk({ schemaPath, outDir, name: 'history' });
  for (const [from, to] of edits) edit(schemaPath, from, to);
  const result = await buildOk({ schemaPath, outDir, name: 'history', allowDestructive });
  const read = (m: { path: string } | null | undefined) => (m ? readFileSync(join(outDir, m.path), 'utf8') : null);
  return { expand: read(result.migration), contract: read(result.contract), result };
}

/** Each step as the runner reads it: `kind[ table]: description`. */
const outline = (text: string | null) => (text === null ? null : parseMigration(text).steps.map((s) => `${s.kind}${s.table ? ` ${s.table}` : ''}: ${s.description}`));
const contractOf = (text: string) => parseMigration(text).contractOf;

const CONTACT_END = '  /** @default \'lead\' */\n  stage: Stage;\n';

const CASES: { name: string; edits: [string, string][]; expand: string[] | null; contract?: string[]; destructive?: boolean }[] = [
  { name: 'add an optional field', edits: [[CONTACT_END, `${CONTACT_END}  phone?: string;\n`]], expand: ['transactional: add field Contact.phone'] },
  {
    name: 'add a required field with a default',
    edits: [[CONTACT_END, `${CONTACT_END}  /** @default 1 */\n  score: number;\n`]],
    expand: ['transactional: add field Contact.score'],
  },
  {
    name: 'add an enum field',
    edits: [[CONTACT_END, `${CONTACT_END}  /** @default 'lead' */\n  origin: Stage;\n`]],
    expand: ['transactional: add field Contact.origin', 'online: validate the values of Contact.origin'],
  },
  {
    name: 'add a reference to an existing table',
    edits: [['  probability: number;\n', '  probability: number;\n  owner?: Contact;\n']],
    expand: [
      'transactional: add field Deal.owner',
      'online: add index on Deal.owner (tenant_id, owner_id)',
      'transactional: reference Contact from Deal.owner, for new rows only',
      'online: validate the reference Deal.owner',
    ],
  },
  {
    name: 'add a model',
    edits: [
      ['export default', 'export interface Task {\n  id: string;\n  /** @index */\n  due: Date;\n  deal?: Deal;\n}\n\nexport default'],
      ['    Deal: {', '    Task: {},\n    Deal: {'],
    ],
    expand: ['transactional: add model Task (a new, empty table and its indexes)', 'transactional: reference Deal from Task.deal (a new, empty table)'],
  },
  { name: 'add @index', edits: [['  title: string;', '  /** @index */\n  title: string;']], expand: ['online: add index on Deal.title (tenant_id, title, id)'] },
  { name: 'remove @index', edits: [['  /** @index */\n  amount?: number;', '  amount?: number;']], expand: ['online: drop index on Deal.amount ("deal_amount_tidx")'] },
  {
    name: 'add @unique',
    edits: [['  title: string;', '  /** @unique */\n  title: string;']],
    expand: ['preflight: no duplicates for the unique on Deal.title', 'online: add unique on Deal.title (tenant_id, title)'],
  },
  { name: 'remove @unique', edits: [['/** @email @unique */', '/** @email */']], expand: ['online: drop unique on Contact.email ("contact_email_tkey")'] },
  {
    name: 'make a field required (with a default)',
    edits: [['  /** @default false */\n  vip?: boolean;', '  /** @default false */\n  vip: boolean;']],
    destructive: true,
    expand: [
      'backfill contact: set Contact.vip to its default where it is null',
      'transactional: check Contact.vip is not null, for new rows only',
      'online: validate Contact.vip is not null',
      'transactional: set Contact.vip not null (the validated check spares the scan) and drop the check',
    ],
  },
  {
    name: 'make a field required and give it a default',
    edits: [['  title: string;\n  /** @index */\n  amount?: number;', '  title: string;\n  /** @index @default 0 */\n  amount: number;']],
    destructive: true,
    expand: [
      'transactional: set the default of Deal.amount',
      'backfill deal: set Deal.amount to its default where it is null',
      'transactional: check Deal.amount is not null, for new rows only',
      'online: validate Deal.amount is not null',
      'transactional: set Deal.amount not null (the validated check spares the scan) and drop the check',
    ],
  },
  { name: 'make a field optional', edits: [['  title: string;', '  title?: string;']], expand: ['transactional: make Deal.title optional'] },
  { name: 'drop a default', edits: [['  /** @default false */\n  vip?: boolean;', '  vip?: boolean;']], expand: ['transactional: drop the default of Contact.vip'] },
  {
    name: 'add an enum value',
    edits: [["'lead' | 'qualified' | 'won'", "'lead' | 'qualified' | 'won' | 'lost'"]],
    expand: ['transactional: replace the allowed values of Contact.stage', 'online: validate the values of Contact.stage'],
  },
  {
    name: 'an enum becomes a string (in place)',
    edits: [['  stage: Stage;', '  stage: string;']],
    expand: ['transactional: change type of Contact.stage in place (same column type, no rewrite)'],
  },
  {
    name: 'a string becomes an enum (in place)',
    edits: [['  title: string;', "  title: 'a' | 'b';"]],
    destructive: true,
    expand: ['transactional: change type of Deal.title in place (same column type, no rewrite)', 'online: validate the values of Deal.title'],
  },
  {
    name: 'drop an optional field',
    edits: [['  /** @default false */\n  vip?: boolean;\n', '']],
    destructive: true,
    expand: null,
    contract: ['transactional: drop field Contact.vip'],
  },
  {
    name: 'drop a required field',
    edits: [['  title: string;\n', '']],
    destructive: true,
    expand: ['transactional: let Deal.title be null until the contract drops it'],
    contract: ['transactional: drop field Deal.title'],
  },
  {
    name: 'rename a field (@renamedFrom)',
    edits: [['  title: string;', '  /** @renamedFrom("title") */\n  name: string;']],
    expand: [
      'transactional: add column "name" for Deal.name, kept in step with "title" by a trigger',
      'backfill deal: copy "title" into "name"',
      'transactional: check Deal.name is not null, for new rows only',
      'online: validate Deal.name is not null',
      'transactional: set Deal.name not null (the validated check spares the scan) and drop the check',
    ],
    contract: ['transactional: drop the trigger and the old column "title" of Deal.name'],
  },
  {
    name: 'change a type that rewrites (number -> string)',
    edits: [['  /** @index */\n  amount?: number;', '  /** @index */\n  amount?: string;']],
    expand: [
      'transactional: add column "amount_v2" for Deal.amount, kept in step with "amount" by a trigger',
      'backfill deal: copy "amount" into "amount_v2"',
      'online: add index on Deal.amount (tenant_id, amount_v2, id)',
    ],
    contract: ['transactional: drop the trigger and the old column "amount" of Deal.amount'],
  },
];

describe('steps per change kind', () => {
  it.each(CASES)('$name', async ({ edits, expand, contract, destructive }) => {
    if (destructive) {
      const schemaPath = copySchema('history/v3');
      const outDir = tempDir('steps-refused');
      await buildOk({ schemaPath, outDir, name: 'history' });
      for (const [from, to] of edits) edit(schemaPath, from, to);
      const refused = await build({ schemaPath, outDir, name: 'history' });
      expect(refused).toMatchObject({ ok: false, diagnostics: [expect.objectContaining({ code: 'DESTRUCTIVE_CHANGE' })] });
    }
    const files = await afterEdit(edits, destructive);
    const [first, second] = expand === null ? [files.expand, null] : [files.expand, files.contract];
    if (expand === null) {
      expect(outline(first)).toEqual(contract);
      expect(contractOf(first!)).toBe('0001');
      return;
    }
    expect(outline(first)).toEqual(expand);
    expect(first).not.toMatch(/^-- contract of/m);
    expect(outline(second)).toEqual(contract ?? null);
    if (second) {
      expect(contractOf(second)).toBe(files.result.migration!.path.slice('migrations/'.length, 'migrations/'.length + 4));
      expect(first).toContain(`-- expand: ${contractOf(second) === '0002' ? '0003' : '?'} is its contract`);
    }
  });

  it('a required field dropped: the expand says why it relaxes the column, the contract drops it', async () => {
    const { result } = await afterEdit([['  title: string;\n', '']], true);
    expect(result.migration!.path).toBe('migrations/0002_let_deal_title_be_null_until_the_contract_drops_it.sql');
    expect(result.contract!.path).toBe('migrations/0003_contract_drop_field_deal_title.sql');
  });

  it('never guesses a rename: a field removed and one added is a drop and an add', async () => {
    const { expand, contract } = await afterEdit([['  title: string;', '  name?: string;']], true);
    expect(outline(expand)).toEqual(['transactional: add field Deal.name', 'transactional: let Deal.title be null until the contract drops it']);
    expect(outline(contract)).toEqual(['transactional: drop field Deal.title']);
  });

  it('a rename keeps working on later builds: the tag left in place changes nothing', async () => {
    const schemaPath = copySchema('history/v3');
    const outDir = tempDir('steps-rename');
    await buildOk({ schemaPath, outDir, name: 'history' });
    edit(schemaPath, '  title: string;', '  /** @renamedFrom("title") */\n  name: string;');
    await buildOk({ schemaPath, outDir, name: 'history' });
    const again = await buildOk({ schemaPath, outDir, name: 'history' });
    expect(again.migration).toBeNull();
    expect(again.written).toEqual([]);
  });

  it('a retyped field keeps its new column on later builds, and moves again on the next rewrite', async () => {
    const schemaPath = copySchema('history/v3');
    const outDir = tempDir('steps-retype');
    await buildOk({ schemaPath, outDir, name: 'history' });
    edit(schemaPath, '  amount?: number;', '  amount?: string;');
    await buildOk({ schemaPath, outDir, name: 'history' });
    expect((await buildOk({ schemaPath, outDir, name: 'history' })).written).toEqual([]);
    edit(schemaPath, '  amount?: string;', '  amount?: boolean;');
    const third = await buildOk({ schemaPath, outDir, name: 'history', allowDestructive: true });
    expect(readFileSync(join(outDir, third.migration!.path), 'utf8')).toContain('add column "amount_v3" boolean;');
  });

  it('a project built before index layout 2 converts to layout 3: tenant not null, keys, then new indexes before the old ones go', async () => {
    const outDir = tempDir('steps-layout-1');
    cpSync(join(FIXTURES, 'layout-1', 'history'), outDir, { recursive: true });
    const result = await buildOk({ schemaPath: join(FIXTURES, 'history', 'v3', 'schema.ts'), outDir, name: 'history' });
    const text = readFileSync(join(outDir, result.migration!.path), 'utf8');
    expect(result.migration!.summary).toEqual(['Company', 'Contact', 'Deal'].map((m) => `convert ${m} to layout 3 (tenant_id not null, primary key (tenant_id, id), indexes led by tenant_id)`));
    const steps = outline(text)!;
    expect(steps.filter((s) => s.startsWith('online: add') || s.startsWith('online: drop') || s.startsWith('preflight: no dup'))).toEqual([
      'online: add the unique (tenant_id, id) of Company, its primary key to be',
      'preflight: no duplicates for the unique on Contact.email',
      'online: add unique on Contact.email (tenant_id, email)',
      'online: add index on Contact.company (tenant_id, company_id)',
      'online: add the unique (tenant_id, id) of Contact, its primary key to be',
      'online: add index on Deal.amount (tenant_id, amount, id)',
      'online: add index on Deal.company (tenant_id, company_id)',
      'online: add the unique (tenant_id, id) of Deal, its primary key to be',
      'online: drop tenant index of Company ("company_tenant_id_idx")',
      'online: drop tenant index of Contact ("contact_tenant_id_idx")',
      'online: drop unique on Contact.email ("contact_email_key")',
      'online: drop index on Contact.company ("contact_company_id_idx")',
      'online: drop tenant index of Deal ("deal_tenant_id_idx")',
      'online: drop index on Deal.amount ("deal_amount_idx")',
      'online: drop index on Deal.company ("deal_company_id_idx")',
    ]);
    expect(JSON.parse(readFileSync(join(outDir, 'schema.snapshot.json'), 'utf8')).layout).toBe(4);
    expect(outline(readFileSync(join(outDir, result.contract!.path), 'utf8'))).toEqual(['Company', 'Contact', 'Deal'].map((m) => `transactional: drop the trigger that fills ${m}.tenant_id (no instance of an older build writes null any more)`));
    expect((await buildOk({ schemaPath: join(FIXTURES, 'history', 'v3', 'schema.ts'), outDir, name: 'history' })).migration).toBeNull();
  });

  it('a layout-2 project converts to layout 3 in the order the keys need; the trigger goes in the contract', async () => {
    const outDir = tempDir('steps-layout-2');
    cpSync(join(FIXTURES, 'layout-2', 'history'), outDir, { recursive: true });
    const result = await buildOk({ schemaPath: join(FIXTURES, 'history', 'v4', 'schema.ts'), outDir, name: 'history' });
    expect(result.migration!.path).toBe('migrations/0006_convert_company_to_layout_3_and_more.sql');
    expect(result.contract!.path).toBe('migrations/0007_contract_drop_the_tenant_id_trigger_of_company_and_more.sql');
    const steps = outline(readFileSync(join(outDir, result.migration!.path), 'utf8'))!;
    const deal = steps.filter((s) => /Deal|"deal"/.test(s));
    expect(deal).toEqual([
      "transactional: fill Deal.tenant_id with '' (the global scope) where a writer of an older build leaves it null, until the contract",
      "backfill deal: set Deal.tenant_id to '' (the global scope) where it is null",
      'transactional: check Deal.tenant_id is not null, for new rows only',
      'online: validate Deal.tenant_id is not null',
      'transactional: set Deal.tenant_id not null (the validated check spares the scan) and drop the check',
      'online: add index on Deal.company (tenant_id, company_id)',
      'online: add the unique (tenant_id, id) of Deal, its primary key to be',
      'preflight: no Deal.company refers to a Company of another tenant',
      'transactional: reference Company from Deal.company by (tenant_id, id), for new rows only',
      'online: validate the reference Deal.company',
      'transactional: drop the single-column reference Deal.company (the validated (tenant_id, id) one replaces it)',
      'transactional: key Deal by (tenant_id, id): the validated unique index becomes the primary key (catalog only)',
      'online: drop tenant index of Deal ("deal_tenant_id_tidx")',
      'online: drop index on Deal.company ("deal_company_id_idx")',
    ]);
    // Every old key that holds Company's primary key is gone before that key is swapped.
    const index = (s: string) => steps.indexOf(s);
    const companyKey = index('transactional: key Company by (tenant_id, id): the validated unique index becomes the primary key (catalog only)');
    expect(index('transactional: drop the single-column reference Deal.company (the validated (tenant_id, id) one replaces it)')).toBeLessThan(companyKey);
    expect(index('transactional: drop the single-column reference Contact.company (the validated (tenant_id, id) one replaces it)')).toBeLessThan(companyKey);
    expect(JSON.parse(readFileSync(join(outDir, 'schema.snapshot.json'), 'utf8')).layout).toBe(4);

    // The lock report `build --check` prints without a database (cli/build.ts): every step classified, the catalog-only ones brief.
    const files = readSet({ scope: 'schema', dir: join(outDir, 'migrations') }).filter((f) => /^000[67]_/.test(f.name));
    const plan = planFilesOffline(files);
    expect(plan.filter((p) => !p.lock.known)).toEqual([]);
    const at = (description: string) => plan.find((p) => p.description === description)!.lock;
    expect(at("fill Deal.tenant_id with '' (the global scope) where a writer of an older build leaves it null, until the contract")).toMatchObject({ lock: 'SHARE ROW EXCLUSIVE', table: 'deal', brief: true });
    expect(at('set Deal.tenant_id not null (the validated check spares the scan) and drop the check')).toMatchObject({ lock: 'ACCESS EXCLUSIVE', brief: true, scans: false });
    expect(at('key Deal by (tenant_id, id): the validated unique index becomes the primary key (catalog only)')).toMatchObject({ lock: 'ACCESS EXCLUSIVE', table: 'deal', brief: true, scans: false, rewrites: false });
    expect(at('reference Company from Deal.company by (tenant_id, id), for new rows only')).toMatchObject({ lock: 'SHARE ROW EXCLUSIVE', brief: true });
    expect(at('validate the reference Deal.company')).toMatchObject({ lock: 'SHARE UPDATE EXCLUSIVE', scans: true });
    expect(formatPlan(plan)).toContain('0007_contract_drop_the_tenant_id_trigger_of_company_and_more.sql step 3 transactional: drop the trigger that fills Deal.tenant_id (no instance of an older build writes null any more)\n  lock: ACCESS EXCLUSIVE on deal (brief, catalog only; blocks reads and writes for milliseconds)');
  });

  it('a layout-2 project that drops a belongsTo while converting drops its old key in the expand (it holds the old primary key)', async () => {
    const outDir = tempDir('steps-layout-2-drop');
    cpSync(join(FIXTURES, 'layout-2', 'history'), outDir, { recursive: true });
    const schemaPath = copySchema('history/v4');
    edit(schemaPath, '  company: Company;\n', '');
    edit(schemaPath, '  deals?: Deal[];\n', '');
    const result = await buildOk({ schemaPath, outDir, name: 'history', allowDestructive: true });
    const expand = outline(readFileSync(join(outDir, result.migration!.path), 'utf8'))!;
    const release = expand.indexOf('transactional: drop the reference key of Deal.company (the column goes in the contract; the key holds the old primary key of its target)');
    expect(release).toBeGreaterThan(-1);
    expect(release).toBeLessThan(expand.indexOf('transactional: key Company by (tenant_id, id): the validated unique index becomes the primary key (catalog only)'));
    expect(outline(readFileSync(join(outDir, result.contract!.path), 'utf8'))).toContain('transactional: drop field Deal.company');
  });

  it('a layout-3 project swaps only its optional relation keys; one made required in the same build becomes restrict', async () => {
    const outDir = tempDir('steps-layout-3');
    cpSync(join(FIXTURES, 'layout-3', 'crm'), outDir, { recursive: true });
    const schemaPath = copySchema('crm');
    edit(schemaPath, "  status: 'open' | 'pending' | 'closed';\n  company?: Company;", "  status: 'open' | 'pending' | 'closed';\n  company: Company;");
    const result = await buildOk({ schemaPath, outDir, name: 'crm', allowDestructive: true });
    const expand = readFileSync(join(outDir, result.migration!.path), 'utf8');
    const keys = expand.split('\n').filter((l) => l.includes(' foreign key '));
    expect(keys.map((l) => /^alter table "(\w+)" add constraint "(\w+)" .* on delete ([a-z ]+) not valid;$/.exec(l)?.slice(1))).toEqual([
      ['activity', 'activity_contact_id_nfkey', 'no action'],
      ['activity', 'activity_deal_id_nfkey', 'no action'],
      ['contact', 'contact_company_id_nfkey', 'no action'],
      ['deal', 'deal_contact_id_nfkey', 'no action'],
      ['ticket', 'ticket_company_id_nfkey', 'restrict'],
    ]);
    expect(outline(expand)).toContain('transactional: check Ticket.company is not null, for new rows only');
    expect(outline(expand)).toContain('transactional: reference Company from Ticket.company on delete restrict beside the set null key, for new rows only');
    expect(outline(readFileSync(join(outDir, result.contract!.path), 'utf8'))).toEqual(['activity_contact_id', 'activity_deal_id', 'contact_company_id', 'deal_contact_id', 'ticket_company_id'].map((key) => {
      const [, model, field] = /^(\w+?)_(\w+)_id$/.exec(key)!;
      const name = `${model === 'activity' ? 'Activity' : model === 'contact' ? 'Contact' : model === 'deal' ? 'Deal' : 'Ticket'}.${field}`;
      return `transactional: drop the on delete set null key of ${name} (the validated no action one replaces it) and give the new key its name`;
    }));
    expect(JSON.parse(readFileSync(join(outDir, 'schema.snapshot.json'), 'utf8')).layout).toBe(4);
    // Built again: nothing more to swap.
    expect((await buildOk({ schemaPath, outDir, name: 'crm' })).migration).toBeNull();
  });

  it('a snapshot of an index layout this svc-gen does not know is refused, naming the snapshot', async () => {
    const schemaPath = copySchema('history/v3');
    const outDir = tempDir('steps-layout');
    await buildOk({ schemaPath, outDir, name: 'history' });
    const snapshot = join(outDir, 'schema.snapshot.json');
    writeFileSync(snapshot, readFileSync(snapshot, 'utf8').replace('"layout": 4', '"layout": 5'));
    const result = await build({ schemaPath, outDir, name: 'history' });
    if (!('diagnostics' in result)) throw new Error('expected a diagnostic');
    expect(result.diagnostics).toEqual([expect.objectContaining({ code: 'BAD_SNAPSHOT' })]);
    expect(result.diagnostics[0].message).toContain('unsupported index layout 5 (this svc-gen knows 1, 2, 3, 4)');
  });

  it('@renamedFrom onto a name the previous schema already has is refused (which column holds what?)', async () => {
    const schemaPath = copySchema('history/v3');
    const outDir = tempDir('steps-swap');
    await buildOk({ schemaPath, outDir, name: 'history' });
    edit(schemaPath, '  title: string;', '  /** @renamedFrom("probability") */\n  title: string;');
    edit(schemaPath, '  /** @default 0 */\n  probability: number;\n', '');
    const result = await build({ schemaPath, outDir, name: 'history', allowDestructive: true });
    if (!('diagnostics' in result)) throw new Error('expected a diagnostic');
    expect(result.diagnostics.map((d) => d.code)).toEqual(['BAD_TAG_VALUE']);
    expect(result.diagnostics[0].message).toContain('rename one field per build');
  });

  it('@renamedFrom names a field that is gone', async () => {
    const schemaPath = copySchema('history/v3');
    edit(schemaPath, '  title: string;', '  /** @renamedFrom("amount") */\n  title: string;');
    const result = await build({ schemaPath, outDir: tempDir('steps-bad-rename'), name: 'history' });
    expect(result).toMatchObject({ ok: false, diagnostics: [expect.objectContaining({ code: 'BAD_TAG_VALUE' })] });
    if (!('diagnostics' in result)) throw new Error('expected a diagnostic');
    expect(result.diagnostics[0].message).toContain('Deal.amount is still declared');
  });
});
