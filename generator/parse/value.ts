/**
 * Reads a literal expression of schema.ts (strings, numbers, booleans, null,
 * arrays, objects) into a RawValue tree with the line of every node. The
 * `actions`, `on` and `workflows` blocks are read this way; what the values
 * mean is decided by the IR stage. Anything computed is a NOT_LITERAL
 * diagnostic, never evaluated.
 */
import { Node, SyntaxKind, type Expression, type ObjectLiteralExpression, type SourceFile } from 'ts-morph';
import { diagnostic, type Diagnostic } from '../diagnostics.ts';
import type { RawValue } from './facts.ts';
import { unwrap } from './unwrap.ts';

export function readValue(node: Expression, file: string, diagnostics: Diagnostic[]): RawValue | null {
  const expr = unwrap(node);
  const at = { file, line: expr.getStartLineNumber() };
  if (Node.isStringLiteral(expr) || Node.isNoSubstitutionTemplateLiteral(expr)) return { kind: 'string', value: expr.getLiteralValue(), at };
  if (Node.isNumericLiteral(expr)) return { kind: 'number', value: expr.getLiteralValue(), at };
  if (Node.isPrefixUnaryExpression(expr) && expr.getOperatorToken() === SyntaxKind.MinusToken && Node.isNumericLiteral(expr.getOperand())) {
    return { kind: 'number', value: -Number(expr.getOperand().getText()), at };
  }
  if (Node.isTrueLiteral(expr) || Node.isFalseLiteral(expr)) return { kind: 'boolean', value: Node.isTrueLiteral(expr), at };
  if (Node.isNullLiteral(expr)) return { kind: 'null', at };
  if (Node.isArrayLiteralExpression(expr)) {
    const items = expr.getElements().map((e) => readValue(e, file, diagnostics));
    return items.every((i) => i !== null) ? { kind: 'array', items: items as RawValue[], at } : null;
  }
  if (Node.isObjectLiteralExpression(expr)) return readObject(expr, file, diagnostics);
  diagnostics.push(diagnostic('NOT_LITERAL', at, `${expr.getText()} is computed; only literal values (strings, numbers, booleans, null, arrays, objects) can be read`));
  return null;
}

function readObject(node: ObjectLiteralExpression, file: string, diagnostics: Diagnostic[]): RawValue | null {
  const entries: { key: string; value: RawValue; at: { file: string; line: number } }[] = [];
  let complete = true;
  for (const property of node.getProperties()) {
    const at = { file, line: property.getStartLineNumber() };
    const nameNode = Node.isPropertyAssignment(property) ? property.getNameNode() : null;
    const key = nameNode && (Node.isIdentifier(nameNode) ? nameNode.getText() : Node.isStringLiteral(nameNode) || Node.isNumericLiteral(nameNode) ? String(nameNode.getLiteralValue()) : null);
    const initializer = Node.isPropertyAssignment(property) ? property.getInitializer() : undefined;
    if (key === null || key === undefined || !initializer) {
      diagnostics.push(diagnostic('NOT_LITERAL', at, `only plain \`key: value\` entries can be read (found ${property.getText().split('\n')[0]})`));
      complete = false;
      continue;
    }
    const value = readValue(initializer, file, diagnostics);
    if (value) entries.push({ key, value, at });
    else complete = false;
  }
  return complete ? { kind: 'object', entries, at: { file, line: node.getStartLineNumber() } } : null;
}

/** The `defineSchema({...})` argument of the default export, when it is an object literal. */
export function schemaObject(source: SourceFile): ObjectLiteralExpression | null {
  const assignment = source.getExportAssignment((d) => !d.isExportEquals());
  const call = assignment ? unwrap(assignment.getExpression()) : null;
  if (!call || !Node.isCallExpression(call) || call.getExpression().getText() !== 'defineSchema') return null;
  const arg = call.getArguments()[0];
  const object = arg ? unwrap(arg as Expression) : null;
  return object && Node.isObjectLiteralExpression(object) ? object : null;
}
