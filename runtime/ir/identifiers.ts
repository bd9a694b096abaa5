/**
 * Postgres identifier rules shared by the generator (which names tables and
 * constraints) and the runtime (which names projection tables at boot).
 * Postgres truncates identifiers at 63 bytes, so longer names get a short,
 * stable hash suffix instead of colliding silently.
 */
import { createHash } from 'node:crypto';

export const PG_MAX_IDENTIFIER_BYTES = 63;
const HASH_LENGTH = 8;

/** Fits a name into 63 bytes: `<prefix>_<hash8>` when longer. */
export function pgIdentifier(name: string): string {
  if (Buffer.byteLength(name) <= PG_MAX_IDENTIFIER_BYTES) return name;
  const hash = createHash('sha256').update(name).digest('hex').slice(0, HASH_LENGTH);
  let prefix = '';
  for (const char of name) {
    if (Buffer.byteLength(prefix + char) > PG_MAX_IDENTIFIER_BYTES - HASH_LENGTH - 1) break;
    prefix += char;
  }
  return `${prefix}_${hash}`;
}

/** The current-state projection table of a model table. */
export function projectionTableName(table: string): string {
  return pgIdentifier(`${table}_projection`);
}
