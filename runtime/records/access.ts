/**
 * Who may do what: the generated access table (`ctx.access[model][op]`),
 * Admin always allowed. The tenant scope every statement carries is the
 * caller's `scope`, rendered by `scope.predicate()` and checked by `scopedQuery` (sql.ts).
 */
import type { Principal } from '../auth/index.ts';
import type { AuditRequest } from '../audit/index.ts';
import type { AccessRule, AccessTable, Model, Operation } from '../ir/types.ts';
import { AccessDenied } from './errors.ts';
import type { TenantScope } from '../tenancy/index.ts';

/** The caller of a records operation: who, and in which scope (from `resolveScope`). */
export interface Caller {
  readonly principal: Principal | null;
  readonly scope: TenantScope;
  /** The HTTP request behind the call, for audit entries; absent for in-process callers. */
  readonly request?: AuditRequest | null;
  /**
   * How many automated hops (an action's write-back, a workflow step) led to
   * this write: 0 or absent for a person's write. Triggers pass `depth + 1` on.
   */
  readonly depth?: number;
}

export function allows(rule: AccessRule | undefined, principal: Principal | null): boolean {
  if (principal?.role === 'Admin') return true;
  if (!rule) return false;
  switch (rule.kind) {
    case 'public': return true;
    case 'authenticated': return principal !== null;
    case 'roles': return principal !== null && rule.roles.includes(principal.role);
  }
}

export function ruleOf(access: AccessTable, model: Model, op: Operation): AccessRule {
  return access[model.name]?.[op] ?? model.access[op];
}

export function assertAllowed(access: AccessTable, model: Model, op: Operation, caller: Caller): void {
  if (!allows(ruleOf(access, model, op), caller.principal)) {
    throw new AccessDenied(model.name, op);
  }
}
