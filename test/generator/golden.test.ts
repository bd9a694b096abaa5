import { cpSync, mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { build } from '../../generator/index.ts';
import { FIXTURES, buildOk, expectGolden, readTree, tempDir } from './helpers.ts';

const CASES = ['crm', 'small'];

describe.each(CASES)('fixture %s', (name) => {
  const schemaPath = join(FIXTURES, name, 'schema.ts');

  it('matches the golden output tree', async () => {
    const outDir = tempDir(name);
    const result = await buildOk({ schemaPath, outDir });
    expect(result.migration?.path).toBe('migrations/0001_initial.sql');
    expectGolden(name, outDir);
  });

  it('is deterministic: two builds are byte-identical, a rebuild writes nothing', async () => {
    const first = tempDir(`${name}-a`);
    const second = tempDir(`${name}-b`);
    await buildOk({ schemaPath, outDir: first });
    await buildOk({ schemaPath, outDir: second });
    expect(readTree(second)).toEqual(readTree(first));
    const again = await buildOk({ schemaPath, outDir: first });
    expect(again.written).toEqual([]);
    expect(again.migration).toBeNull();
    expect(await build({ schemaPath, outDir: first, check: true })).toMatchObject({ ok: true, written: [] });
  });
});

/**
 * The conversion of a deployed project to layout 3 (ADR 025): fixtures/layout-2/<name>
 * is DIR as the layout-2 generator left it; today's build of the same schema adds
 * the conversion (and its contract), and only those files are golden here.
 */
describe.each([
  ['crm', 'crm'],
  ['history', join('history', 'v4')],
])('layout 2 -> 3 conversion of %s', (name, schema) => {
  it('matches the golden conversion migrations', async () => {
    const outDir = tempDir(`layout-2-${name}`);
    cpSync(join(FIXTURES, 'layout-2', name), outDir, { recursive: true });
    const before = new Set(readdirSync(join(outDir, 'migrations')));
    const result = await buildOk({ schemaPath: join(FIXTURES, schema, 'schema.ts'), outDir, name });
    expect(result.migration).not.toBeNull();
    expect(result.contract).not.toBeNull();
    const added = tempDir(`layout-2-${name}-added`);
    mkdirSync(join(added, 'migrations'));
    for (const file of readdirSync(join(outDir, 'migrations')).filter((f) => !before.has(f))) {
      cpSync(join(outDir, 'migrations', file), join(added, 'migrations', file));
    }
    expectGolden(join('layout-2-to-3', name), added);
  });
});
