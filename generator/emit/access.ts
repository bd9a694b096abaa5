/** access.ts: the model x operation -> rule table the runtime enforces. */
import { OPERATIONS, type AccessRule, type SchemaIR } from '../../runtime/ir/types.ts';
import { render } from './templates.ts';

export function emitAccess(ir: SchemaIR, schemaFile: string): string {
  const models = ir.models.map((model) => ({
    name: model.name,
    rules: OPERATIONS.map((op) => ({ op, rule: ruleLiteral(model.access[op]) })),
  }));
  return render('access.ts', { schemaFile, models });
}

function ruleLiteral(rule: AccessRule): string {
  if (rule.kind !== 'roles') return `{ kind: '${rule.kind}' }`;
  return `{ kind: 'roles', roles: [${rule.roles.map((r) => `'${r}'`).join(', ')}] }`;
}
