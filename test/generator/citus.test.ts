/**
 * `svc-gen build --target citus` (generator/emit/citus.ts): the default
 * build plus one migration that distributes the tables; a project built
 * without it first gets that migration from the first build with it; the
 * new models of a distributed project are distributed inside the migration
 * that creates them. The rules the
 * migration must follow are checked on Postgres by test/db/citus-rules.test.ts.
 */
import { cpSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { build } from '../../generator/index.ts';
import { inForeignKeyOrder, placedRuntimeTables, RUNTIME_DISTRIBUTED_TABLES, RUNTIME_REFERENCE_TABLES } from '../../generator/emit/citus.ts';
import { DISTRIBUTED, placement, REFERENCE } from '../../runtime/db/distributed/tables.ts';
import { parseMigration } from '../../runtime/db/migrate/parse.ts';
import { withoutPlacements } from '../helpers/citus.ts';
import { FIXTURES, buildOk, copySchema, expectGolden, readTree, tempDir } from './helpers.ts';

const crm = join(FIXTURES, 'crm', 'schema.ts');
const DISTRIBUTION = 'migrations/0002_distribute_for_citus.sql';

describe('fixture crm with --target citus', () => {
  it('matches the golden output tree', async () => {
    const outDir = tempDir('crm-citus');
    const result = await buildOk({ schemaPath: crm, outDir, target: 'citus' });
    expect(result.migration?.path).toBe('migrations/0001_initial.sql');
    expectGolden('crm-citus', outDir);
  });

  it('is the default build plus the distribution migration and the target in the snapshot; a rebuild writes nothing', async () => {
    const plain = tempDir('crm-plain');
    const citus = tempDir('crm-citus-b');
    await buildOk({ schemaPath: crm, outDir: plain });
    await buildOk({ schemaPath: crm, outDir: citus, target: 'citus' });
    const [a, b] = [readTree(plain), readTree(citus)];
    const differing = [...new Set([...a.keys(), ...b.keys()])].filter((path) => a.get(path) !== b.get(path));
    expect(differing.sort()).toEqual([DISTRIBUTION, 'schema.snapshot.json']);
    expect(JSON.parse(b.get('schema.snapshot.json')!)).toEqual({ ...JSON.parse(a.get('schema.snapshot.json')!), target: 'citus' });
    const again = await buildOk({ schemaPath: crm, outDir: citus, target: 'citus' });
    expect(again.written).toEqual([]);
    expect(await build({ schemaPath: crm, outDir: citus, target: 'citus', check: true })).toMatchObject({ ok: true, written: [] });
  });

  it('distributes a project built without the target as a new migration, the same file a first build with it writes', async () => {
    const outDir = tempDir('crm-later');
    await buildOk({ schemaPath: crm, outDir });
    expect(await build({ schemaPath: crm, outDir, target: 'citus', check: true })).toMatchObject({ ok: false, stale: [DISTRIBUTION, 'schema.snapshot.json'] });
    const later = await buildOk({ schemaPath: crm, outDir, target: 'citus' });
    expect(later.written).toEqual([DISTRIBUTION, 'schema.snapshot.json']);
    expect(later.migration?.path).toBe(DISTRIBUTION);
    const first = tempDir('crm-first');
    await buildOk({ schemaPath: crm, outDir: first, target: 'citus' });
    expect(readTree(outDir)).toEqual(readTree(first));
  });

  it('refuses to build a distributed project without the target', async () => {
    const outDir = tempDir('crm-back');
    await buildOk({ schemaPath: crm, outDir, target: 'citus' });
    const result = await build({ schemaPath: crm, outDir });
    expect(result).toMatchObject({ ok: false, diagnostics: [{ code: 'TARGET_CHANGED' }] });
    expect(JSON.stringify(result)).toMatch(/was built with --target citus .*: its tables are distributed; build it with --target citus/);
  });
});

/**
 * A later build of a distributed project (fixtures/crm-grown: Segment, new and
 * referenced by the existing Contact; Call, new, belonging to the existing Deal
 * and to Segment): each new table is handed to Citus in the migration that
 * creates it, after its `create table` and before any foreign key to or from
 * it. test/db/citus-rules.test.ts applies it on the stub.
 */
describe('a later build of a project built with --target citus', () => {
  const grown = join(FIXTURES, 'crm-grown', 'schema.ts');
  /** After the first build's 0001_initial and 0002_distribute_for_citus; the default build's is 0002 of the same name. */
  const GROWN = 'migrations/0003_add_model_call_and_more.sql';
  const NEW_TABLES = ['segment', 'call'];

  async function grow(target: 'citus' | 'postgres', prefix: string) {
    const dir = tempDir(prefix);
    const schemaPath = copySchema('crm', dir);
    const outDir = join(dir, 'out');
    await buildOk({ schemaPath, outDir, target });
    cpSync(grown, schemaPath);
    const result = await buildOk({ schemaPath, outDir, target });
    const [file] = result.written.filter((p) => p.startsWith('migrations/'));
    return { schemaPath, outDir, result, file, sql: readTree(outDir).get(file)! };
  }

  it('distributes each new table inside the migration that creates it, between its create table and its first foreign key', async () => {
    const { outDir, result, sql } = await grow('citus', 'crm-grown');
    expect(result.written.filter((p) => p.startsWith('migrations/'))).toEqual([GROWN]);
    expect(result.migration?.summary.at(-1)).toMatch(/^Citus \(--target citus\): distribute call, segment and their projections by tenant_id/);
    const added = tempDir('crm-grown-added');
    mkdirSync(join(added, 'migrations'));
    cpSync(join(outDir, GROWN), join(added, GROWN));
    expectGolden('crm-citus-grown', added);

    const { steps } = parseMigration(sql);
    expect(steps[0]).toMatchObject({ kind: 'preflight', description: expect.stringMatching(/^the database has Citus/) });
    const at = (test: (body: string) => boolean) => steps.flatMap((step, i) => (test(step.body) ? [i] : []));
    for (const table of NEW_TABLES) {
      const [created] = at((body) => body.includes(`create table "${table}" (`));
      const distributed = at((body) => body.includes(`create_distributed_table('"${table}"', 'tenant_id', colocate_with => 'svc_events')`));
      const keys = at((body) => new RegExp(`alter table "${table}" add constraint "\\w+" foreign key|references "${table}" \\(`).test(body));
      expect(distributed, table).toHaveLength(1);
      expect(steps[distributed[0]]).toMatchObject({ kind: 'online', description: expect.stringMatching(new RegExp(`^Citus: distribute ${table} by tenant_id, co-located with svc_events, before any foreign key`)) });
      expect(created, table).toBeLessThan(distributed[0]);
      expect(keys.length, table).toBeGreaterThan(0);
      for (const key of keys) expect(key, `${table}: step ${key + 1}`).toBeGreaterThan(distributed[0]);
      const projection = at((body) => body.includes(`create_distributed_table('"${table}_projection"'`));
      expect(projection, table).toHaveLength(1);
      expect(at((body) => body.includes(`create table if not exists "${table}_projection" (`))[0]).toBeLessThan(projection[0]);
    }
    // The existing model's new key to the new table is among them: a key between two distributed tables.
    expect(at((body) => body.includes('alter table "contact" add constraint "contact_segment_id_tfkey" foreign key ("tenant_id", "segment_id") references "segment"'))).toHaveLength(1);
    expect(sql).not.toMatch(/create_reference_table|create_distributed_table\('"svc_/);
  });

  it('is byte-stable: a rebuild writes nothing and --check passes', async () => {
    const { schemaPath, outDir } = await grow('citus', 'crm-grown-check');
    const before = readTree(outDir);
    expect(await build({ schemaPath, outDir, target: 'citus', check: true })).toMatchObject({ ok: true, written: [] });
    expect((await buildOk({ schemaPath, outDir, target: 'citus' })).written).toEqual([]);
    expect(readTree(outDir)).toEqual(before);
  });

  it('is the default target\'s migration, under the same name, plus the Citus steps and their header line', async () => {
    const citus = await grow('citus', 'crm-grown-citus');
    const plain = await grow('postgres', 'crm-grown-plain');
    expect(citus.file).toBe(GROWN);
    expect(plain.file).toBe(GROWN.replace('/0003_', '/0002_'));
    expect(plain.sql).not.toMatch(/citus/i);
    const isCitus = (step: { kind: string; description: string }) => step.description.startsWith('Citus: ') || /^the database has Citus/.test(step.description);
    const strip = ({ kind, table, description, body }: { kind: string; table: string | null; description: string; body: string }) => ({ kind, table, description, body });
    expect(parseMigration(citus.sql).steps.filter((step) => !isCitus(step)).map(strip)).toEqual(parseMigration(plain.sql).steps.map(strip));
    const header = (sql: string) => sql.slice(0, sql.indexOf('\n-- step 1 '));
    // The same header but for its number (the first distribution took 0002) and the line naming the Citus steps.
    expect(header(citus.sql).split('\n').filter((line) => !line.includes('Citus'))).toEqual(header(plain.sql).replace('migration 0002:', 'migration 0003:').split('\n'));
  });
});

/**
 * A project distributed by an svc-gen before the feed heads and the audit
 * rollups existed (its 0002 placed five runtime tables): a later build with
 * the target hands the runtime tables its distribution files did not place to
 * Citus, in a migration of their own after the schema's; once they are
 * placed, nothing more. test/db/citus-rules.test.ts applies it on the stub.
 */
describe('a later build of a project distributed before some runtime tables existed', () => {
  const LATER = ['svc_tenant_heads', 'svc_audit_daily', 'svc_audit_daily_actors'];
  const FILE = 'migrations/0003_distribute_new_runtime_tables_for_citus.sql';

  async function earlier(prefix: string) {
    const dir = tempDir(prefix);
    const schemaPath = copySchema('crm', dir);
    const outDir = join(dir, 'out');
    await buildOk({ schemaPath, outDir, target: 'citus' });
    const path = join(outDir, DISTRIBUTION);
    writeFileSync(path, withoutPlacements(readFileSync(path, 'utf8'), LATER));
    return { schemaPath, outDir };
  }

  it('reads which runtime tables a project\'s distribution files placed', async () => {
    const { outDir } = await earlier('crm-citus-runtime-read');
    const all = [...RUNTIME_REFERENCE_TABLES, ...RUNTIME_DISTRIBUTED_TABLES];
    expect([...placedRuntimeTables([readTree(outDir).get(DISTRIBUTION)!])].sort()).toEqual(all.filter((t) => !LATER.includes(t)).sort());
    const fresh = tempDir('crm-citus-runtime-fresh');
    await buildOk({ schemaPath: crm, outDir: fresh, target: 'citus' });
    expect([...placedRuntimeTables([readTree(fresh).get(DISTRIBUTION)!])].sort()).toEqual([...all].sort());
  });

  it('distributes the runtime tables the earlier distribution did not place, in a migration of their own, once', async () => {
    const { schemaPath, outDir } = await earlier('crm-citus-runtime');
    const result = await buildOk({ schemaPath, outDir, target: 'citus' });
    expect(result.written).toEqual([FILE]);
    expect(result.migration?.path).toBe(FILE);
    expect(result.migration?.summary).toEqual([
      'distribute the runtime tables the earlier distribution did not place, for Citus (--target citus)',
      `distributed by tenant_id, co-located with svc_events: ${LATER.join(', ')}`,
    ]);
    const added = tempDir('crm-citus-runtime-added');
    mkdirSync(join(added, 'migrations'));
    cpSync(join(outDir, FILE), join(added, FILE));
    expectGolden('crm-citus-runtime', added);
    const { steps } = parseMigration(readTree(outDir).get(FILE)!);
    expect(steps.map((step) => step.kind)).toEqual(['preflight', 'online', 'online', 'online']);
    for (const [i, table] of LATER.entries()) {
      expect(steps[i + 1].body).toContain(`create_distributed_table('"${table}"', 'tenant_id', colocate_with => 'svc_events')`);
    }
    // Placed now: a rebuild writes nothing and --check passes.
    expect((await buildOk({ schemaPath, outDir, target: 'citus' })).written).toEqual([]);
    expect(await build({ schemaPath, outDir, target: 'citus', check: true })).toMatchObject({ ok: true, written: [] });
  });

  it('comes after the schema\'s migration when the same build adds models', async () => {
    const { schemaPath, outDir } = await earlier('crm-citus-runtime-grown');
    cpSync(join(FIXTURES, 'crm-grown', 'schema.ts'), schemaPath);
    const result = await buildOk({ schemaPath, outDir, target: 'citus' });
    expect(result.written.filter((p) => p.startsWith('migrations/'))).toEqual([
      'migrations/0003_add_model_call_and_more.sql', 'migrations/0004_distribute_new_runtime_tables_for_citus.sql',
    ]);
  });

  it('writes none for a project whose distribution placed every runtime table', async () => {
    const outDir = tempDir('crm-citus-runtime-none');
    await buildOk({ schemaPath: crm, outDir, target: 'citus' });
    expect((await buildOk({ schemaPath: crm, outDir, target: 'citus' })).written).toEqual([]);
  });
});

describe('the distribution order', () => {
  it('puts every model after the models its belongsTo fields reference', async () => {
    const { parseSchemaFile } = await import('../../generator/index.ts');
    const parsed = await parseSchemaFile(crm);
    if (!parsed.ok) throw new Error('crm does not parse');
    const order = inForeignKeyOrder(parsed.ir.models).map((m) => m.name);
    for (const model of parsed.ir.models) {
      for (const field of model.fields) {
        if (field.type.kind === 'belongsTo' && field.type.model !== model.name) {
          expect(order.indexOf(field.type.model), `${model.name}.${field.name}`).toBeLessThan(order.indexOf(model.name));
        }
      }
    }
  });

  it('names the runtime\'s tables as runtime/db/distributed/tables.ts places them', () => {
    expect([...RUNTIME_DISTRIBUTED_TABLES].sort()).toEqual([...DISTRIBUTED].sort());
    expect([...RUNTIME_REFERENCE_TABLES].sort()).toEqual([...REFERENCE].sort());
    for (const table of RUNTIME_DISTRIBUTED_TABLES) expect(placement(table, undefined)).toBe('distributed');
    for (const table of RUNTIME_REFERENCE_TABLES) expect(placement(table, undefined)).toBe('reference');
  });
});
