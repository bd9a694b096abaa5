/**
 * The one tenant scope (CONTRACT section 8). Every path that touches tenant
 * data (records, jobs, media, audit, subscriptions, realtime, public read)
 * takes its scope from `resolveScope` and renders its predicate with
 * `scope.predicate(alias)`, a SQL fragment (runtime/sql) marked as this
 * scope's, so that `compile(statement, { scope })` refuses a statement that
 * never rendered it; no path writes `tenant_id = $n` by hand.
 *
 * A scope is a tenant or the global scope (tenant null). No request spans scopes.
 */
import type Koa from 'koa';
import type { Principal } from '../core/index.ts';
import { forbidden } from '../http/errors.ts';
import { sql, type Sql } from '../sql/index.ts';


const TENANT_COLUMN = sql.ident('tenant_id');
const aliased = new Map<string, Sql>();

/** `alias."tenant_id"`, made once per alias (aliases are constants of the code). */
function tenantColumn(alias: string | null): Sql {
  if (alias === null) return TENANT_COLUMN;
  let column = aliased.get(alias);
  if (!column) aliased.set(alias, (column = sql`${sql.alias(alias)}.${TENANT_COLUMN}`));
  return column;
}

export class TenantScope {
  private constructor(
    /** The tenant, or null for the global scope. */
    readonly tenantId: string | null,
  ) {}

  static readonly GLOBAL = new TenantScope(null);

  static of(tenantId: string | null): TenantScope {
    return tenantId === null ? TenantScope.GLOBAL : new TenantScope(tenantId);
  }

  get isGlobal(): boolean {
    return this.tenantId === null;
  }

  /** The predicate "this row lies in the scope" for `alias`'s tenant column (null: the column unqualified). */
  predicate(alias: string | null = 't'): Sql {
    return this.over(tenantColumn(alias));
  }

  /** The scope's tenant as the value an insert writes to `tenant_id`. */
  stamp(): Sql {
    return sql.scoped(this, sql`${sql.value(this.tenantId, 'text')}`);
  }

  /** The predicate over any tenant-id expression `column`. */
  over(column: Sql): Sql {
    return sql.scoped(this, this.tenantId === null ? sql`${column} is null` : sql`${column} = ${sql.value(this.tenantId, 'text')}`);
  }

  /** True when a row stamped with `tenantId` lies in the scope (for in-memory filtering: feeds, channels). */
  contains(tenantId: string | null | undefined): boolean {
    return (tenantId ?? null) === this.tenantId;
  }
}

/**
 * The system's view: rows of every scope, for the runtime's own work that no
 * request drives (the workflow engine reading a run it advances, sweeps,
 * reclaim). An explicit value where a reader takes a `ReadScope`, never
 * `undefined`: "every tenant" is written, not implied by a missing argument.
 * Its predicate is `true`; it has no `stamp()`, so nothing is inserted in it.
 */
export class SystemScope {
  static readonly ALL = new SystemScope();

  private constructor() {}

  predicate(_alias: string | null = 't'): Sql {
    return sql.scoped(this, sql`true`);
  }

  over(_column: Sql): Sql {
    return sql.scoped(this, sql`true`);
  }

  contains(_tenantId: string | null | undefined): boolean {
    return true;
  }
}

/** What a read may be scoped to: one tenant or the global scope (requests), or every scope (the system). */
export type ReadScope = TenantScope | SystemScope;

/**
 * The scope a request acts in (CONTRACT section 8):
 * - a tenant-bound user acts in its tenant; naming another is 403;
 * - a tenant-less Admin (the platform operator) acts in the tenant it names, else the global scope;
 * - any other tenant-less user acts in the global scope; naming a tenant is 403.
 */
export function resolveScope(principal: Pick<Principal, 'role' | 'tenantId'>, requested: string | null | undefined): TenantScope {
  const named = requested?.trim() || null;
  if (principal.tenantId !== null) {
    if (named !== null && named !== principal.tenantId) throw forbidden('tenant not allowed');
    return TenantScope.of(principal.tenantId);
  }
  if (named === null) return TenantScope.GLOBAL;
  if (principal.role !== 'Admin') throw forbidden('tenant not allowed');
  return TenantScope.of(named);
}

/** The scope of an HTTP request: its principal and its `X-Tenant-ID` header. */
export function requestScope(koa: Koa.Context, principal: Pick<Principal, 'role' | 'tenantId'>): TenantScope {
  return resolveScope(principal, koa.get('x-tenant-id'));
}
