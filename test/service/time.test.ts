/** The one timestamp format: Postgres' text forms, Dates and epoch milliseconds all become ISO 8601 UTC with milliseconds. */
import { describe, expect, it } from 'vitest';
import { isoUtc, isoUtcSql } from '../../runtime/db/index.ts';

describe('isoUtc', () => {
  it.each([
    ['2026-11-23 08:44:50.587+00', '2026-11-23T08:44:50.587Z'],
    ['2026-11-23 08:44:50.587123+00', '2026-11-23T08:44:50.587Z'],
    ['2026-11-23 08:44:50+00', '2026-11-23T08:44:50.000Z'],
    ['2026-11-23 08:44:50.5+00', '2026-11-23T08:44:50.500Z'],
    ['2026-11-23 08:44:50.58+00', '2026-11-23T08:44:50.580Z'],
    ['2026-11-23 08:44:50.000001+00', '2026-11-23T08:44:50.000Z'],
    ['12026-11-23 08:44:50.5+00', '+012026-11-23T08:44:50.500Z'],
    ['2026-11-23 08:44:50.5+05:30', '2026-11-23T03:14:50.500Z'],
    ['2026-11-23 01:00:00-03', '2026-11-23T04:00:00.000Z'],
    ['1883-11-18 12:00:00+00:03:58', '1883-11-18T11:56:02.000Z'],
    ['0099-01-01 00:00:00+00', '0099-01-01T00:00:00.000Z'],
    ['2026-11-23 08:44:50.587123', '2026-11-23T08:44:50.587Z'],
    ['2026-11-23T08:44:50.587Z', '2026-11-23T08:44:50.587Z'],
  ])('%s -> %s', (text, iso) => {
    expect(isoUtc(text)).toBe(iso);
  });

  it('passes through values without a UTC form', () => {
    expect(isoUtc('infinity')).toBe('infinity');
    expect(isoUtc('2026-11-23 08:44:50+00 BC')).toBe('2026-11-23 08:44:50+00 BC');
  });

  it('formats Dates and epoch milliseconds', () => {
    expect(isoUtc(new Date(Date.UTC(2026, 10, 23, 8, 44, 38, 327)))).toBe('2026-11-23T08:44:38.327Z');
    expect(isoUtc(0)).toBe('1970-01-01T00:00:00.000Z');
  });

  it('renders SQL that does not depend on the session', () => {
    expect(isoUtcSql('t.created_at')).toBe(`to_char((t.created_at) at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`);
  });
});
