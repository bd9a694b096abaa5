/**
 * The one tenant scope (CONTRACT section 8). Every path that touches tenant
 * data (records, jobs, media, audit, subscriptions, realtime, public read)
 * takes its scope from `resolveScope` and renders its predicate with
 * `scope.predicate(alias)`, a SQL fragment (runtime/sql) marked as this
 * scope's, so that `compile(statement, { scope })` refuses a statement that
 * never rendered it; no path writes `tenant_id = $n` by hand.
 *
 * A scope is a tenant or the global scope (tenant null). No request spans scopes.
 *
 * Layout 3 (ADR 025): a distributed table (a model table, its projection,
 * svc_events, svc_changes, svc_audit, svc_media, svc_media_blobs) stores the
 * global scope as the empty string `GLOBAL_TENANT` in a NOT NULL `tenant_id`;
 * `stamp()` writes it and `predicate()` matches it. The reference and
 * coordinator-local tables (svc_users, svc_jobs, svc_workflow_runs, ...) keep a
 * nullable tenant: `localStamp()` / `localPredicate()` write and match null.
 * The API always answers `tenantId: null` for the global scope: a row of a
 * distributed table is mapped with `tenantOf`, a nullable tenant inserted
 * into one with `tenantKey`.
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

/** The stored `tenant_id` of the global scope in a distributed table (ADR 025 decision 2). */
export const GLOBAL_TENANT = '';

/** The `tenant_id` a distributed table stores for `tenantId` (null, the global scope: `''`). */
export function tenantKey(tenantId: string | null | undefined): string {
  return tenantId ?? GLOBAL_TENANT;
}

/** The API's tenant of a distributed table's row: `''` (the global scope) is null. */
export function tenantOf(key: string | null | undefined): string | null {
  return key === undefined || key === null || key === GLOBAL_TENANT ? null : key;
}

/** `tenantOf` for an SQL expression: `nullif(column, '')`, for statements that shape rows for the API. */
export function tenantOfSql(column: Sql): Sql {
  return sql`nullif(${column}, '')`;
}

export class TenantScope {
  private constructor(
    /** The tenant, or null for the global scope. */
    readonly tenantId: string | null,
  ) {}

  static readonly GLOBAL = new TenantScope(null);

  /** The scope of `tenantId`: null or `''` (a distributed row's global scope) is GLOBAL. */
  static of(tenantId: string | null | undefined): TenantScope {
    const tenant = tenantOf(tenantId);
    return tenant === null ? TenantScope.GLOBAL : new TenantScope(tenant);
  }

  get isGlobal(): boolean {
    return this.tenantId === null;
  }

  /** The `tenant_id` this scope's rows carry in a distributed table (`''` for the global scope). */
  get key(): string {
    return tenantKey(this.tenantId);
  }

  /** The predicate "this row lies in the scope" for `alias`'s tenant column of a distributed table (null: the column unqualified). */
  predicate(alias: string | null = 't'): Sql {
    return this.over(tenantColumn(alias));
  }

  /** The scope's tenant as the value an insert writes to a distributed table's `tenant_id` (`''` for the global scope). */
  stamp(): Sql {
    return sql.scoped(this, sql`${sql.value(this.key, 'text')}`);
  }

  /** The predicate over any tenant-id expression `column` of a distributed table: `= $n` (`''` for the global scope). */
  over(column: Sql): Sql {
    return sql.scoped(this, sql`${column} = ${sql.value(this.key, 'text')}`);
  }

  /** The predicate for a reference or coordinator-local table, whose global scope is a null `tenant_id` (svc_jobs, svc_workflow_runs, ...). */
  localPredicate(alias: string | null = 't'): Sql {
    const column = tenantColumn(alias);
    return sql.scoped(this, this.tenantId === null ? sql`${column} is null` : sql`${column} = ${sql.value(this.tenantId, 'text')}`);
  }

  /** The value an insert writes to a reference or coordinator-local table's nullable `tenant_id`. */
  localStamp(): Sql {
    return sql.scoped(this, sql`${sql.value(this.tenantId, 'text')}`);
  }

  /** True when a row stamped with `tenantId` (null or `''` for the global scope) lies in the scope (in-memory filtering: feeds, channels). */
  contains(tenantId: string | null | undefined): boolean {
    return tenantOf(tenantId) === this.tenantId;
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

  localPredicate(_alias: string | null = 't'): Sql {
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
