import { describe, expect, it } from 'vitest';
import { columnName, inputName, nextColumnName, pgIdentifier, quoteIdent, snakeCase, tableName, tenantIndexName, tenantListIndexName } from '../../generator/ir/naming.ts';

describe('naming', () => {
  it.each([
    ['DealStage', 'deal_stage'],
    ['lastContactAt', 'last_contact_at'],
    ['HTTPLog', 'http_log'],
    ['line2Address', 'line2_address'],
    ['order', 'order'],
  ])('snake_case %s -> %s', (name, snake) => expect(snakeCase(name)).toBe(snake));

  it('derives tables, columns and input names', () => {
    expect(tableName('LineItem')).toBe('line_item');
    expect(columnName('company', true)).toBe('company_id');
    expect(inputName('company', true)).toBe('companyId');
    expect(columnName('lastContactAt', false)).toBe('last_contact_at');
  });

  it('keeps identifiers within 63 bytes with a stable hash suffix', () => {
    const long = `${'a'.repeat(70)}_idx`;
    const short = pgIdentifier(long);
    expect(Buffer.byteLength(short)).toBeLessThanOrEqual(63);
    expect(short).toMatch(/^a+_[0-9a-f]{8}$/);
    expect(pgIdentifier(long)).toBe(short);
    expect(pgIdentifier(`${'a'.repeat(70)}_key`)).not.toBe(short);
    expect(pgIdentifier('contact')).toBe('contact');
  });

  it('names a retyped field\'s next column, skipping taken names', () => {
    expect(nextColumnName('amount', new Set(['amount']))).toBe('amount_v2');
    expect(nextColumnName('amount_v2', new Set())).toBe('amount_v3');
    expect(nextColumnName('amount', new Set(['amount_v2']))).toBe('amount_v3');
  });

  it('keeps the tenant index apart from an indexed field called tenant', () => {
    expect(tenantListIndexName('deal')).not.toBe(tenantIndexName('deal', columnName('tenant', false)));
  });

  it('quotes identifiers', () => {
    expect(quoteIdent('order')).toBe('"order"');
    expect(quoteIdent('we"ird')).toBe('"we""ird"');
  });
});
