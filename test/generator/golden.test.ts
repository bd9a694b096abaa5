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
