/**
 * Building parameterised SQL. Every value travels as a bound parameter
 * (`$n`); only identifiers from the IR (quoted) are ever part of the text.
 *
 * Every records statement is built in one tenant scope (CONTRACT section 8):
 * `Params` cannot be made without a TenantScope, and `query()` refuses a
 * statement that never rendered it (`tenant()` as a predicate, `stamp()` as
 * the value an insert writes). A statement that forgets its scope is a bug
 * that fails on its first run, in every test that reaches it.
 */
import type { TenantScope } from '../tenancy/index.ts';
import type { SqlType } from './model.ts';

export class Params {
  readonly values: unknown[] = [];
  private scoped = false;

  constructor(readonly scope: TenantScope) {}

  /** Adds a value; returns its placeholder, cast so that Postgres never guesses. */
  add(value: unknown, type?: SqlType | `${SqlType}[]` | 'int' | 'bigint'): string {
    this.values.push(value);
    return type ? `$${this.values.length}::${type}` : `$${this.values.length}`;
  }

  /** The predicate "this row lies in the scope" for `alias`'s tenant column. */
  tenant(alias = 't'): string {
    this.scoped = true;
    return this.scope.sql(this, `${alias}."tenant_id"`);
  }

  /** The placeholder of the scope's tenant, for the `tenant_id` an insert writes. */
  stamp(): string {
    this.scoped = true;
    return this.add(this.scope.tenantId, 'text');
  }

  /** The statement; throws when it was built without its tenant scope. */
  query(text: string): Query {
    if (!this.scoped) throw new Error('records statement built without its tenant scope');
    return { text, values: this.values };
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
