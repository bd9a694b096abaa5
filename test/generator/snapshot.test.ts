import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { fromSnapshot, stableStringify, toSnapshot } from '../../runtime/ir/snapshot.ts';
import { parseSchemaFile } from '../../generator/index.ts';
import { snapshotFile } from '../../generator/emit/index.ts';
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
    expect(Object.keys(json)).toEqual(['actions', 'bindings', 'embeds', 'enums', 'models', 'version', 'workflows']);
    expect(Object.keys(json.models)).toEqual([...Object.keys(json.models)].sort());
    const stage = json.models.Deal.fields.find((f: { name: string }) => f.name === 'stage');
    expect(stage).toEqual({ name: 'stage', column: 'stage', type: { kind: 'enum', enum: 'DealStage' }, required: true, default: 'lead', index: true });
    expect(json.models.LineItem.access).toBeUndefined();
    // @sensitive is stated only where it is set, and survives the round trip.
    expect(json.models.Contact.fields.find((f: { name: string }) => f.name === 'phone').sensitive).toBe(true);
    expect(text.match(/"sensitive"/g)).toHaveLength(1);
    expect(fromSnapshot(json).models.find((m) => m.name === 'Contact')!.fields.find((f) => f.name === 'phone')!.sensitive).toBe(true);
    expect(json.models.Product.publicRead).toEqual({ fields: ['name', 'sku', 'price', 'description'] });
  });

  it('matches the golden snapshot file byte for byte, with the index layout its database has', async () => {
    const ir = await irOf('crm');
    const text = snapshotFile(ir);
    expect(text).toBe(readFileSync(join(import.meta.dirname, '..', 'golden', 'crm', 'schema.snapshot.json'), 'utf8'));
    expect(JSON.parse(text).layout).toBe(4);
    expect(fromSnapshot(JSON.parse(text))).toEqual(ir);
  });

  it('omits empty action, binding and workflow blocks and loads snapshots written before them', async () => {
    const ir = await irOf('small');
    const json = toSnapshot(ir) as Record<string, unknown>;
    expect(Object.keys(json).sort()).toEqual(['embeds', 'enums', 'models', 'version']);
    const old = fromSnapshot(JSON.parse(readFileSync(join(import.meta.dirname, '..', 'golden', 'history', 'schema.snapshot.json'), 'utf8')));
    expect(old).toMatchObject({ actions: [], bindings: [], workflows: [] });
  });

  it('writes actions and workflows as declared, defaults omitted', async () => {
    const json = toSnapshot(await irOf('crm')) as Record<string, Record<string, Record<string, unknown>>>;
    expect(json.actions.notifyWon).toEqual({ input: { pick: { model: 'Deal', fields: ['id', 'title', 'amount', 'currency', 'companyId'] } } });
    expect(json.actions.sendQuote.input).toEqual([
      { name: 'dealId', type: 'string' },
      { name: 'stage', type: 'DealStage' },
      { name: 'recipients', type: 'string[]' },
      { name: 'validUntil', type: 'date?' },
      { name: 'discount', type: 'number?' },
    ]);
    expect(json.bindings.Deal).toEqual({ updated: [{ action: 'notifyWon', when: { changed: ['stage'], equals: { stage: 'won' } } }] });
    expect(json.bindings.Contact).toEqual({ created: ['scoreLead'] });
    expect(json.workflows.followUp.onFailure).toBeUndefined();
    expect(json.workflows.followUp.trigger).toEqual({ manual: ['Manager', 'Sales'] });
    expect(json.workflows.wonDeal.trigger).toEqual({ on: 'Deal.updated', when: { changed: ['stage'], equals: { stage: 'won' } } });
    expect((json.workflows.wonDeal.steps as unknown as unknown[])[1]).toEqual({
      id: 'markInvoiced',
      if: { eq: ['{{steps.invoice.result.ok}}', true] },
      mutation: { update: { model: 'Deal', id: '{{trigger.record.id}}', data: { invoiced: true } } },
    });
    expect((json.workflows.followUp.steps as unknown as unknown[])[1]).toEqual({ id: 'wait', delay: { seconds: 172800 } });
  });

  it('refuses an unknown version', () => {
    expect(() => fromSnapshot({ version: 2, models: {} })).toThrow(/version/);
  });
});
