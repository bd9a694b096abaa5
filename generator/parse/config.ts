/**
 * Reads `export default defineSchema({ models: {...} })` as literal syntax.
 * Anything computed (a variable, a spread, a call) is reported with its line,
 * never evaluated.
 */
import { Node, type Expression, type ObjectLiteralExpression, type SourceFile } from 'ts-morph';
import { diagnostic, type Diagnostic, type SourceLocation } from '../diagnostics.ts';
import type { RawAccessEntry, RawAccessValue, RawModelOptions, RawValue } from './facts.ts';
import { readValue } from './value.ts';
import { unwrap } from './unwrap.ts';

export { unwrap } from './unwrap.ts';

interface Ctx {
  readonly file: string;
  readonly diagnostics: Diagnostic[];
}

export function readConfig(source: SourceFile, file: string, diagnostics: Diagnostic[]): RawModelOptions[] {
  const ctx: Ctx = { file, diagnostics };
  const assignment = source.getExportAssignment((d) => !d.isExportEquals());
  if (!assignment) return [];
  const call = unwrap(assignment.getExpression());
  const arg = Node.isCallExpression(call) && call.getExpression().getText() === 'defineSchema' ? call.getArguments()[0] : undefined;
  if (!arg || !Node.isObjectLiteralExpression(unwrap(arg as Expression))) {
    notLiteral(ctx, assignment, 'the default export must be defineSchema({ models: { ... } }) with an object literal');
    return [];
  }
  const models = entries(ctx, unwrap(arg as Expression) as ObjectLiteralExpression, 'defineSchema').find(([key]) => key === 'models');
  if (!models) return [];
  const modelsObject = objectLiteral(ctx, models[1], 'models');
  if (!modelsObject) return [];
  return entries(ctx, modelsObject, 'models').flatMap(([name, value]) => readModel(ctx, name, value));
}

function readModel(ctx: Ctx, name: string, value: Expression): RawModelOptions[] {
  const object = objectLiteral(ctx, value, `models.${name}`);
  if (!object) return [];
  let access: RawAccessEntry[] = [];
  let publicRead: RawModelOptions['publicRead'] = null;
  let on: RawValue | null = null;
  for (const [key, option] of entries(ctx, object, `models.${name}`)) {
    if (key === 'access') access = readAccess(ctx, name, option);
    else if (key === 'publicRead') publicRead = readPublicRead(ctx, name, option);
    else if (key === 'on') on = readValue(option, ctx.file, ctx.diagnostics);
    else ctx.diagnostics.push(diagnostic('UNKNOWN_OPTION', at(ctx, option), `unknown option ${key} on model ${name} (expected access, publicRead or on)`));
  }
  return [{ name, access, publicRead, on, at: at(ctx, value) }];
}

function readAccess(ctx: Ctx, model: string, value: Expression): RawAccessEntry[] {
  const object = objectLiteral(ctx, value, `models.${model}.access`);
  if (!object) return [];
  return entries(ctx, object, `models.${model}.access`).flatMap(([operation, rule]) => {
    const read = readAccessValue(ctx, unwrap(rule), `models.${model}.access.${operation}`);
    return read ? [{ operation, value: read, at: at(ctx, rule) }] : [];
  });
}

function readAccessValue(ctx: Ctx, node: Expression, path: string): RawAccessValue | null {
  const text = stringValue(node);
  if (text !== null) return { kind: 'keyword', value: text };
  const roles = stringArray(ctx, node, path);
  return roles ? { kind: 'roles', roles } : null;
}

function readPublicRead(ctx: Ctx, model: string, value: Expression): RawModelOptions['publicRead'] {
  const object = objectLiteral(ctx, value, `models.${model}.publicRead`);
  if (!object) return null;
  const fields = entries(ctx, object, `models.${model}.publicRead`).find(([key]) => key === 'fields');
  if (!fields) {
    notLiteral(ctx, value, `models.${model}.publicRead needs fields: [...]`);
    return null;
  }
  const list = stringArray(ctx, unwrap(fields[1]), `models.${model}.publicRead.fields`);
  return list ? { fields: list.map((f) => f.name), at: at(ctx, fields[1]) } : null;
}

/** Property assignments of an object literal as [key, value]; reports anything else. */
function entries(ctx: Ctx, object: ObjectLiteralExpression, path: string): [string, Expression][] {
  const out: [string, Expression][] = [];
  for (const property of object.getProperties()) {
    if (!Node.isPropertyAssignment(property)) {
      notLiteral(ctx, property, `${path}: only plain \`key: value\` entries can be read (found ${property.getKindName()})`);
      continue;
    }
    const nameNode = property.getNameNode();
    const key = Node.isIdentifier(nameNode) ? nameNode.getText() : Node.isStringLiteral(nameNode) ? nameNode.getLiteralValue() : null;
    const initializer = property.getInitializer();
    if (key === null || !initializer) {
      notLiteral(ctx, property, `${path}: computed key ${nameNode.getText()} cannot be read`);
      continue;
    }
    out.push([key, initializer]);
  }
  return out;
}

function objectLiteral(ctx: Ctx, value: Expression, path: string): ObjectLiteralExpression | null {
  const node = unwrap(value);
  if (Node.isObjectLiteralExpression(node)) return node;
  notLiteral(ctx, value, `${path} must be an object literal, not the computed value ${node.getText()}`);
  return null;
}

function stringArray(ctx: Ctx, node: Expression, path: string): { name: string; at: SourceLocation }[] | null {
  if (!Node.isArrayLiteralExpression(node)) {
    notLiteral(ctx, node, `${path} must be a string literal or an array of string literals, not ${node.getText()}`);
    return null;
  }
  const out: { name: string; at: SourceLocation }[] = [];
  for (const element of node.getElements()) {
    const text = stringValue(unwrap(element));
    if (text === null) {
      notLiteral(ctx, element, `${path}: ${element.getText()} is not a string literal`);
      return null;
    }
    out.push({ name: text, at: at(ctx, element) });
  }
  return out;
}

function stringValue(node: Expression): string | null {
  return Node.isStringLiteral(node) || Node.isNoSubstitutionTemplateLiteral(node) ? node.getLiteralValue() : null;
}

/** Looks through `x as const`, `x satisfies T` and parentheses. */

function at(ctx: Ctx, node: Node): SourceLocation {
  return { file: ctx.file, line: node.getStartLineNumber() };
}

function notLiteral(ctx: Ctx, node: Node, message: string): void {
  ctx.diagnostics.push(diagnostic('NOT_LITERAL', at(ctx, node), message));
}
