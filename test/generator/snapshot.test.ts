import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { fromSnapshot, stableStringify, toSnapshot } from '../../runtime/ir/snapshot.ts';
import { parseSchemaFile } from '../../generator/index.ts';
import { FIXTURES } from './helpers.ts';

async function irOf(fixture: string) {
  const parsed = await parseSchemaFile(join(FIXTURES, fixture, 'schema.ts'));
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.diagnostics));
  return parsed.ir;
}

describe('schema snapshot', () => {
  it.each(['crm', 'small', 'history/v3'])('%s round-trips through JSON', async (fixture) => {
    const ir = await irOf(fixture);
    const text = stableStringify(toSnapshot(ir));
    const back = fromSnapshot(JSON.parse(text));
    expect(back).toEqual(ir);
    expect(stableStringify(toSnapshot(back))).toBe(text);
    expect(Object.isFrozen(back.models[0].fields[0])).toBe(true);
  });

  it('is canonical: sorted keys, defaults omitted, enum values stated once', async () => {
    const ir = await irOf('crm');
    const text = stableStringify(toSnapshot(ir));
    expect(text.endsWith('}\n')).toBe(true);
    expect(text).not.toMatch(/"unique": false|"index": false|"required": false|"validation": \{\}|"publicRead": null|"kind": "field"/);
    const json = JSON.parse(text);
    expect(Object.keys(json)).toEqual(['embeds', 'enums', 'models', 'version']);
    expect(Object.keys(json.models)).toEqual([...Object.keys(json.models)].sort());
    const stage = json.models.Deal.fields.find((f: { name: string }) => f.name === 'stage');
    expect(stage).toEqual({ name: 'stage', column: 'stage', type: { kind: 'enum', enum: 'DealStage' }, required: true, default: 'lead', index: true });
    expect(json.models.LineItem.access).toBeUndefined();
    expect(json.models.Product.publicRead).toEqual({ fields: ['name', 'sku', 'price', 'description'] });
  });

  it('matches the golden snapshot file byte for byte', async () => {
    const ir = await irOf('crm');
    expect(stableStringify(toSnapshot(ir))).toBe(readFileSync(join(import.meta.dirname, '..', 'golden', 'crm', 'schema.snapshot.json'), 'utf8'));
  });

  it('refuses an unknown version', () => {
    expect(() => fromSnapshot({ version: 2, models: {} })).toThrow(/version/);
  });
});
