/**
 * `svc-gen build --target citus` (generator/emit/citus.ts): the default
 * build plus one migration that distributes the tables; a project built
 * without it first gets that migration from the first build with it; new
 * models of a distributed project get one of their own. The rules the
 * migration must follow are checked on Postgres by test/db/citus-rules.test.ts.
 */
import { writeFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { build } from '../../generator/index.ts';
import { inForeignKeyOrder, RUNTIME_DISTRIBUTED_TABLES, RUNTIME_REFERENCE_TABLES } from '../../generator/emit/citus.ts';
import { DISTRIBUTED, placement, REFERENCE } from '../../runtime/db/distributed/tables.ts';
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

  it('distributes a new model\'s tables in a migration after the one that creates them', async () => {
    const dir = tempDir('crm-grow');
    const schemaPath = copySchema('crm', dir);
    const outDir = join(dir, 'out');
    await buildOk({ schemaPath, outDir, target: 'citus' });
    const source = readFileSync(schemaPath, 'utf8');
    const grown = source
      .replace('\nexport interface Ticket {', '\nexport interface Call {\n  id: string;\n  subject: string;\n  deal: Deal;\n}\n\nexport interface Ticket {')
      .replace('  models: {\n', '  models: {\n    Call: {},\n');
    expect(grown).not.toBe(source);
    writeFileSync(schemaPath, grown);
    const result = await buildOk({ schemaPath, outDir, target: 'citus' });
    expect(result.written.filter((p) => p.startsWith('migrations/'))).toEqual(['migrations/0003_add_model_call.sql', 'migrations/0004_distribute_call_for_citus.sql']);
    const sql = readTree(outDir).get('migrations/0004_distribute_call_for_citus.sql')!;
    expect(sql).not.toMatch(/create_reference_table|create_distributed_table\('"svc_/);
    expect([...sql.matchAll(/perform create_distributed_table\('"(\w+)"', 'tenant_id', colocate_with => 'svc_events'\)/g)].map((m) => m[1]))
      .toEqual(['call', 'call_projection']);
    expect(sql).toMatch(/create table if not exists "call_projection" \(/);
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
