/**
 * Trigger conditions (runtime/automation/conditions.ts): the one evaluator of
 * `when: { changed, equals }` that action bindings and workflow triggers
 * share. Its two forms, the test on rows in hand and the SQL over a
 * statement's rows, agree on every case of the table, the SQL run on the
 * real Postgres.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { compileCondition } from '../../runtime/automation/index.ts';
import { compile, sql, type Sql, type SqlValue } from '../../runtime/sql/index.ts';
import type { EventCondition } from '../../runtime/ir/types.ts';
import { fromSnapshot } from '../../runtime/ir/snapshot.ts';
import { compileModels, type ModelInfo } from '../../runtime/records/model.ts';
import type { Row, WrittenRecord } from '../../runtime/records/index.ts';
import { ADMIN_URL, queryOnce } from '../helpers/db.ts';

const ir = fromSnapshot(JSON.parse(readFileSync(`${import.meta.dirname}/../golden/crm/schema.snapshot.json`, 'utf8')));
const deal: ModelInfo = compileModels(ir).get('Deal')!;

const write = (record: object, old: object | null): WrittenRecord => ({
  model: 'Deal', kind: old ? 'updated' : 'created', step: old ? 'Updated' : 'Created', id: 'd1', eventId: 'e1', record: record as never, old: old as never, changed: [],
});

/** An API-shaped row of Deal from the jsonb value `json`: timestamps stay ISO text, the rest takes its SQL type. */
function rowSql(json: Sql | SqlValue): Sql {
  return sql`select ${sql.join(deal.columns.map((c) => {
    const type = c.sqlType === 'timestamptz' ? 'text' : c.sqlType;
    const key = sql.raw(`'${c.name}'`);
    return type === 'jsonb' ? sql`(${json} -> ${key}) as ${sql.ident(c.name)}` : sql`(${json} ->> ${key})::${sql.raw(type)} as ${sql.ident(c.name)}`;
  }), ', ')}`;
}

/** The condition's SQL form over `record` (and `old`), as a where clause reads it (null is false). */
async function holdsInSql(when: EventCondition, record: Row, old: Row): Promise<boolean> {
  const condition = compileCondition(deal, when).sql(sql.alias('r'), sql.alias('o')) ?? sql`true`;
  const query = compile(sql`select coalesce((${condition}), false) as ok
    from (${rowSql(sql.value(JSON.stringify(record), 'jsonb'))}) r, (${rowSql(sql.value(JSON.stringify(old), 'jsonb'))}) o`);
  const [{ ok }] = await queryOnce<{ ok: boolean }>(ADMIN_URL, query.text, query.values);
  return ok;
}

const base = { id: 'd1', title: 'Big', stage: 'proposal', amount: 10, currency: 'EUR', closeDate: null, invoiced: false, companyId: 'c1', contactId: null };
const STAGE_WON: EventCondition = { changed: ['stage'], equals: { stage: 'won' } };

/** [name, when, old, new]: updates, as the IR allows `changed` on updated events only. */
const CASES: Array<[string, EventCondition, Row, Row]> = [
  ['changed to the literal', STAGE_WON, base, { ...base, stage: 'won' }],
  ['set to what it was', STAGE_WON, { ...base, stage: 'won' }, { ...base, stage: 'won' }],
  ['changed to another value', STAGE_WON, base, { ...base, stage: 'lost' }],
  ['only another field changed', STAGE_WON, { ...base, stage: 'won' }, { ...base, stage: 'won', amount: 11 }],
  ['one of two fields changed', { changed: ['stage', 'amount'], equals: {} }, base, { ...base, amount: 11 }],
  ['a belongsTo by its IR name', { changed: ['company'], equals: {} }, base, { ...base, companyId: 'c2' }],
  ['null to a value', { changed: ['contact'], equals: {} }, base, { ...base, contactId: 'p1' }],
  ['a value to null', { changed: ['company'], equals: {} }, base, { ...base, companyId: null }],
  ['equals null on null', { changed: [], equals: { contact: null } }, base, base],
  ['equals null on a value', { changed: [], equals: { company: null } }, base, base],
  ['equals a value on null', { changed: [], equals: { contact: 'p1' } }, base, base],
  ['equals a number', { changed: [], equals: { amount: 10 } }, base, base],
  ['a different number', { changed: [], equals: { amount: 10.5 } }, base, base],
  ['equals a boolean', { changed: [], equals: { invoiced: false } }, base, base],
  ['a different boolean', { changed: [], equals: { invoiced: true } }, base, base],
  ['a date, spelt otherwise', { changed: [], equals: { closeDate: '2024-05-01' } }, base, { ...base, closeDate: '2024-05-01T00:00:00.000Z' }],
  ['another date', { changed: [], equals: { closeDate: '2024-05-02' } }, base, { ...base, closeDate: '2024-05-01T00:00:00.000Z' }],
  ['a date on null', { changed: [], equals: { closeDate: '2024-05-01' } }, base, base],
  ['two equals, one holds', { changed: [], equals: { stage: 'proposal', currency: 'USD' } }, base, base],
  ['two equals, both hold', { changed: [], equals: { stage: 'proposal', currency: 'EUR' } }, base, base],
];

describe('trigger conditions: one evaluator, two forms', () => {
  it.each(CASES)('%s: the TypeScript and the SQL form agree', async (_name, when, old, record) => {
    const inTs = compileCondition(deal, when).matches(write(record, old));
    expect(await holdsInSql(when, record, old)).toBe(inTs);
  });

  it('hold where they should (the table is not all false)', () => {
    const held = CASES.filter(([, when, old, record]) => compileCondition(deal, when).matches(write(record, old))).map(([name]) => name);
    expect(held).toEqual([
      'changed to the literal', 'one of two fields changed', 'a belongsTo by its IR name', 'null to a value', 'a value to null',
      'equals null on null', 'equals a number', 'equals a boolean', 'a date, spelt otherwise', 'two equals, both hold',
    ]);
  });

  it('need a changed field to differ from the old row, and equals to hold on the new one', () => {
    const holds = (when: EventCondition | null, w: WrittenRecord) => compileCondition(deal, when).matches(w);
    const when = { changed: ['stage'], equals: { stage: 'won' } };
    expect(holds(when, write({ stage: 'won' }, { stage: 'proposal' }))).toBe(true);
    expect(holds(when, write({ stage: 'won' }, { stage: 'won' }))).toBe(false);
    expect(holds(when, write({ stage: 'lost' }, { stage: 'proposal' }))).toBe(false);
    expect(holds({ changed: ['company'], equals: {} }, write({ companyId: 'c2' }, { companyId: 'c1' }))).toBe(true);
    expect(holds({ changed: [], equals: { company: null } }, write({ companyId: null }, null))).toBe(true);
    expect(holds(null, write({}, null))).toBe(true);
  });

  it('leave `changed` out of the SQL of a create (no old row)', () => {
    const created = sql.alias('created');
    expect(compile(compileCondition(deal, STAGE_WON).sql(created)!).text).toMatch(/^created\."stage" = \$1(::\w+)?$/);
    expect(compileCondition(deal, { changed: ['stage'], equals: {} }).sql(created)).toBeNull();
    expect(compileCondition(deal, null).sql(created, sql.alias('old'))).toBeNull();
  });
});
