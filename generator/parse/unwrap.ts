/** `x as T`, `x satisfies T` and `(x)` read as `x`: what every literal reader of the parser looks through. */
import { Node, type Expression } from 'ts-morph';

export function unwrap(node: Expression): Expression {
  if (Node.isAsExpression(node) || Node.isSatisfiesExpression(node) || Node.isParenthesizedExpression(node)) {
    return unwrap(node.getExpression());
  }
  return node;
}
