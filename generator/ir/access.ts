/** `defineSchema` model options -> access rules and publicRead, with defaults applied. */
import { OPERATIONS, ROLES, type AccessRule, type Field, type Operation, type PublicRead, type Role } from '../../runtime/ir/types.ts';
import { DEFAULT_ACCESS } from '../../runtime/ir/snapshot.ts';
import { diagnostic, type Diagnostic } from '../diagnostics.ts';
import type { RawAccessEntry, RawModelOptions } from '../parse/index.ts';

const isOperation = (s: string): s is Operation => (OPERATIONS as readonly string[]).includes(s);
const isRole = (s: string): s is Role => (ROLES as readonly string[]).includes(s);

export function buildAccess(model: string, options: RawModelOptions | undefined, diagnostics: Diagnostic[]): Record<Operation, AccessRule> {
  const access = { ...DEFAULT_ACCESS };
  for (const entry of options?.access ?? []) {
    if (!isOperation(entry.operation)) {
      diagnostics.push(diagnostic('UNKNOWN_OPERATION', entry.at, `unknown operation ${entry.operation} in ${model}.access (expected ${OPERATIONS.join(', ')})`));
      continue;
    }
    const rule = buildRule(model, entry, diagnostics);
    if (rule) access[entry.operation] = rule;
  }
  return access;
}

function buildRule(model: string, entry: RawAccessEntry, diagnostics: Diagnostic[]): AccessRule | null {
  const where = `${model}.access.${entry.operation}`;
  const { value } = entry;
  if (value.kind === 'keyword') {
    if (value.value === 'public' || value.value === 'authenticated') return { kind: value.value };
    diagnostics.push(diagnostic('BAD_ACCESS_RULE', entry.at, `${where} is '${value.value}'; expected 'public', 'authenticated' or a list of roles`));
    return null;
  }
  const roles: Role[] = [];
  for (const role of value.roles) {
    if (!isRole(role.name)) {
      diagnostics.push(diagnostic('UNKNOWN_ROLE', role.at, `unknown role ${role.name} in ${where} (roles: ${ROLES.join(', ')})`));
      return null;
    }
    if (!roles.includes(role.name)) roles.push(role.name);
  }
  return { kind: 'roles', roles };
}

/** Public fields must be real columns of the model (the anonymous endpoint reads the projection). */
export function buildPublicRead(model: string, options: RawModelOptions | undefined, fields: readonly Field[], diagnostics: Diagnostic[]): PublicRead | null {
  const publicRead = options?.publicRead;
  if (!publicRead) return null;
  const known = new Map(fields.filter((f) => f.column !== null).map((f) => [f.name, f]));
  const chosen: string[] = [];
  for (const name of publicRead.fields) {
    if (!known.has(name)) {
      diagnostics.push(diagnostic('UNKNOWN_PUBLIC_FIELD', publicRead.at, `publicRead of ${model} names ${name}, which is not a stored field of ${model}`));
    } else if (!chosen.includes(name)) chosen.push(name);
  }
  return { fields: chosen };
}
