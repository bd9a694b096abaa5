/**
 * Who may do what: the generated access table (`ctx.access[model][op]`),
 * Admin always allowed; and the tenant scope every statement carries.
 */
import type { Principal } from '../auth/index.ts';
import type { AccessRule, AccessTable, Model, Operation } from '../ir/types.ts';
import { forbidden } from './errors.ts';
import type { Params } from './sql.ts';

/** The caller of a records operation: who, and in which tenant (null = the global scope). */
export interface Caller {
  readonly principal: Principal | null;
  readonly tenantId: string | null;
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
    throw forbidden(`not allowed to ${op} ${model.name}`);
  }
}

/** Rows of the caller's tenant only; the global scope is the rows without a tenant. */
export function tenantSql(caller: Caller, p: Params, alias = 't'): string {
  return caller.tenantId === null ? `${alias}."tenant_id" is null` : `${alias}."tenant_id" = ${p.add(caller.tenantId, 'text')}`;
}
