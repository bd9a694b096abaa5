/**
 * The one timestamp format of every response (CONTRACT section 15): ISO 8601
 * in UTC with milliseconds, `2026-11-23T08:44:38.327Z`. SQL that builds a
 * response renders timestamps with `isoUtcSql`; every other timestamp read
 * from Postgres goes through `isoUtc` (the pg type parser of timestamptz and
 * timestamp, runtime/db/index.ts), so no code sees Postgres' own text form.
 * Microseconds are cut to milliseconds (as JavaScript's Date would).
 */

const FORMAT = `'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'`;

/** `expression` (timestamptz) as text in the format, whatever the session's DateStyle and TimeZone. */
export const isoUtcSql = (expression: string): string => `to_char((${expression}) at time zone 'UTC', ${FORMAT})`;

// Postgres' text output: `2026-11-23 08:44:50.587123+05:30` (timestamptz) or without an offset (timestamp).
const PG_TEXT = /^(\d{4,})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(?:(Z)|([+-])(\d{2})(?::?(\d{2}))?(?::?(\d{2}))?)?$/;

function fromPgText(text: string): string {
  const match = PG_TEXT.exec(text);
  // 'infinity', '-infinity' and BC dates have no ISO 8601 form in UTC: passed through.
  if (!match) return text;
  const [, year, month, day, hour, minute, second, fraction = '', , sign, offsetHours = '0', offsetMinutes = '0', offsetSeconds = '0'] = match;
  const date = new Date(0);
  // setUTCFullYear, not Date.UTC: Date.UTC maps years 0..99 to 1900..1999.
  date.setUTCFullYear(Number(year), Number(month) - 1, Number(day));
  date.setUTCHours(Number(hour), Number(minute), Number(second), Number(fraction.padEnd(3, '0').slice(0, 3)));
  const offset = (Number(offsetHours) * 3600 + Number(offsetMinutes) * 60 + Number(offsetSeconds)) * 1000;
  return new Date(date.getTime() - (sign === '-' ? -offset : offset)).toISOString();
}

/**
 * A timestamp in the format: a Date, epoch milliseconds, or Postgres' text
 * (with an offset; without one it is UTC, as the server's timestamps are).
 */
export function isoUtc(value: string | number | Date): string {
  if (typeof value === 'string') return fromPgText(value);
  return (value instanceof Date ? value : new Date(value)).toISOString();
}
