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

const at = (text: string, i: number, code: number) => text.charCodeAt(i) === code;

/**
 * The common case without a Date: a session in UTC prints
 * `2026-11-23 08:44:50.587123+00` (or no fraction); every event and job read
 * passes here. Anything else (another offset, no offset, a 5-digit year, BC)
 * returns null and takes the general path.
 */
function fromUtcText(text: string): string | null {
  const n = text.length;
  if (n < 22 || !at(text, 4, 45) || !at(text, 7, 45) || !at(text, 10, 32) || !at(text, 13, 58) || !at(text, 16, 58)
    || !at(text, n - 3, 43) || !at(text, n - 2, 48) || !at(text, n - 1, 48)) return null;
  const head = `${text.slice(0, 10)}T${text.slice(11, 19)}`;
  if (n === 22) return `${head}.000Z`;
  if (!at(text, 19, 46)) return null;
  return `${head}.${`${text.slice(20, n - 3)}00`.slice(0, 3)}Z`;
}

/**
 * A timestamp in the format: a Date, epoch milliseconds, or Postgres' text
 * (with an offset; without one it is UTC, as the server's timestamps are).
 */
export function isoUtc(value: string | number | Date): string {
  if (typeof value === 'string') return fromUtcText(value) ?? fromPgText(value);
  return (value instanceof Date ? value : new Date(value)).toISOString();
}
