/**
 * Projection names. The runtime never imports the generator, so the one rule
 * it shares with generator/ir/naming.ts (`<table>_projection`, shortened with a
 * hash past Postgres' 63 bytes) is restated here; a test compares the two.
 */
import { createHash } from 'node:crypto';

const PG_MAX_IDENTIFIER_BYTES = 63;
const HASH_LENGTH = 8;

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

export function projectionTableName(table: string): string {
  return pgIdentifier(`${table}_projection`);
}

/** `"order"`: model identifiers are always quoted (fields may be called `order`, `user`, `select`). */
export function q(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}
