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
 * The conversion of a deployed project to today's layout (ADR 025): fixtures/layout-N/<name>
 * is DIR as the layout-N generator left it; today's build of the same schema adds
 * the conversion (and its contract), and only those files are golden here. A
 * layout-2 project goes straight to layout 4; a layout-3 one swaps its
 * set-null relation keys (the rest of layout 4 it has).
 */
describe.each([
  ['2', 'crm', 'crm'],
  ['2', 'history', join('history', 'v4')],
  ['3', 'crm', 'crm'],
])('layout %s -> 4 conversion of %s', (layout, name, schema) => {
  it('matches the golden conversion migrations', async () => {
    const outDir = tempDir(`layout-${layout}-${name}`);
    cpSync(join(FIXTURES, `layout-${layout}`, name), outDir, { recursive: true });
    const before = new Set(readdirSync(join(outDir, 'migrations')));
    const result = await buildOk({ schemaPath: join(FIXTURES, schema, 'schema.ts'), outDir, name });
    expect(result.migration).not.toBeNull();
    expect(result.contract).not.toBeNull();
    const added = tempDir(`layout-${layout}-${name}-added`);
    mkdirSync(join(added, 'migrations'));
    for (const file of readdirSync(join(outDir, 'migrations')).filter((f) => !before.has(f))) {
      cpSync(join(outDir, 'migrations', file), join(added, 'migrations', file));
    }
    expectGolden(join(`layout-${layout}-to-4`, name), added);
  });
});
