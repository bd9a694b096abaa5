/**
 * Building parameterised SQL. Every value travels as a bound parameter
 * (`$n`); only identifiers from the IR (quoted) are ever part of the text.
 */
import type { SqlType } from './model.ts';

export class Params {
  readonly values: unknown[] = [];

  /** Adds a value; returns its placeholder, cast so that Postgres never guesses. */
  add(value: unknown, type?: SqlType | `${SqlType}[]` | 'int' | 'bigint'): string {
    this.values.push(value);
    return type ? `$${this.values.length}::${type}` : `$${this.values.length}`;
  }
}

/** A query for pg-promise: sent with the extended protocol, values bound server-side. */
export interface Query {
  readonly text: string;
  readonly values: unknown[];
}

/** jsonb values must reach pg as JSON text (pg would turn a JS array into a Postgres array). */
export function toDbValue(value: unknown, type: SqlType): unknown {
  if (value === null || value === undefined) return null;
  return type === 'jsonb' ? JSON.stringify(value) : value;
}
