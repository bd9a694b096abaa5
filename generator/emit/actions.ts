/**
 * actions.ts: the input type of every action and the payload a worker gets
 * on queue `actions` (CONTRACT section 11), so a TypeScript worker can type
 * its handler: `(payload: ActionPayload<'scoreLead'>) => ...`.
 */
import type { ActionBinding, ActionDef, EventCondition, InputField } from '../../runtime/ir/automation.ts';
import type { AccessRule, SchemaIR, Scalar } from '../../runtime/ir/types.ts';
import { actionInputTypeName } from '../ir/naming.ts';
import { render } from './templates.ts';
import { quote } from './ts-literal.ts';

const SCALAR_TS: Record<Scalar, string> = { string: 'string', number: 'number', boolean: 'boolean', date: 'string' };

export function emitActions(ir: SchemaIR, schemaFile: string): string {
  const actions = ir.actions.map((action) => {
    const bindings = ir.bindings.filter((b) => b.action === action.name);
    return {
      name: action.name,
      typeName: actionInputTypeName(action.name),
      lines: ['/**', ...[accessText(action.name, action.access), ...bindings.map(bindingText)].map((l) => ` * ${l}`), ' */', ...declaration(action)],
      models: union([...new Set(bindings.map((b) => quote(b.model)))]),
    };
  });
  const imports = new Set(['ModelMap']);
  for (const action of ir.actions) typeImports(action).forEach((name) => imports.add(name));
  return render('actions.ts', { schemaFile, imports: [...imports].sort().join(', '), actions, names: union(ir.actions.map((a) => quote(a.name))) });
}

function declaration(action: ActionDef): string[] {
  const typeName = actionInputTypeName(action.name);
  if (action.input.kind === 'pick') return [`export type ${typeName} = Pick<${action.input.model}, ${union(action.input.fields.map(quote))}>;`];
  if (action.input.fields.length === 0) return [`export type ${typeName} = Record<string, never>;`];
  return [`export interface ${typeName} {`, ...action.input.fields.flatMap(fieldLines).map((l) => `  ${l}`), '}'];
}

function fieldLines(field: InputField): string[] {
  const { type } = field;
  const ts = type.kind === 'scalar' ? SCALAR_TS[type.scalar] : type.kind === 'list' ? `${SCALAR_TS[type.of]}[]` : (type.enum ?? type.values.map(quote).join(' | '));
  const doc = (type.kind === 'scalar' || type.kind === 'list') && (type.kind === 'scalar' ? type.scalar : type.of) === 'date' ? ['/** ISO 8601 */'] : [];
  return [...doc, field.required ? `${field.name}: ${ts};` : `${field.name}?: ${ts} | null;`];
}

function typeImports(action: ActionDef): string[] {
  if (action.input.kind === 'pick') return [action.input.model];
  return action.input.fields.flatMap((f) => (f.type.kind === 'enum' && f.type.enum ? [f.type.enum] : []));
}

function accessText(name: string, rule: AccessRule): string {
  const who = rule.kind === 'roles' ? ['Admin', ...rule.roles.filter((r) => r !== 'Admin')].join(', ') : `any ${rule.kind} user`;
  return `POST /api/actions/${name}: ${who}`;
}

function bindingText(binding: ActionBinding): string {
  return `enqueued on ${binding.model}.${binding.event}${binding.when ? ` when ${conditionText(binding.when)}` : ''}`;
}

function conditionText(when: EventCondition): string {
  const parts = [
    ...(when.changed.length ? [`${when.changed.join(' or ')} changed`] : []),
    ...Object.entries(when.equals).map(([field, value]) => `${field} = ${JSON.stringify(value)}`),
  ];
  return parts.join(' and ');
}

function union(items: readonly string[]): string {
  return items.length ? items.join(' | ') : 'never';
}
