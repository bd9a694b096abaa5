/** Reads a field's type annotation syntactically (no type checker). */
import { Node, SyntaxKind, type TypeNode } from 'ts-morph';
import type { RawType } from './facts.ts';

const KEYWORDS: Partial<Record<SyntaxKind, 'string' | 'number' | 'boolean'>> = {
  [SyntaxKind.StringKeyword]: 'string',
  [SyntaxKind.NumberKeyword]: 'number',
  [SyntaxKind.BooleanKeyword]: 'boolean',
};

export function readType(node: TypeNode | undefined): RawType {
  if (!node) return { kind: 'unsupported', text: '(missing type)' };
  const element = arrayElement(node);
  if (element) {
    const inner = readElement(element, true);
    return inner ?? unsupported(node);
  }
  return readElement(node, false) ?? unsupported(node);
}

function unsupported(node: TypeNode): RawType {
  return { kind: 'unsupported', text: node.getText() };
}

/** `T[]` or `Array<T>` -> T; anything else -> undefined. */
function arrayElement(node: TypeNode): TypeNode | undefined {
  const bare = unwrap(node);
  if (Node.isArrayTypeNode(bare)) return bare.getElementTypeNode();
  if (Node.isTypeReference(bare) && bare.getTypeName().getText() === 'Array') {
    const args = bare.getTypeArguments();
    return args.length === 1 ? args[0] : undefined;
  }
  return undefined;
}

function unwrap(node: TypeNode): TypeNode {
  return Node.isParenthesizedTypeNode(node) ? unwrap(node.getTypeNode()) : node;
}

function readElement(raw: TypeNode, array: boolean): RawType | undefined {
  const node = unwrap(raw);
  const keyword = KEYWORDS[node.getKind()];
  if (keyword) return { kind: 'keyword', keyword, array };
  if (Node.isTypeReference(node)) {
    if (node.getTypeArguments().length > 0 || !Node.isIdentifier(node.getTypeName())) return undefined;
    return { kind: 'reference', name: node.getTypeName().getText(), array };
  }
  const values = stringLiteralUnion(node);
  return values ? { kind: 'union', values, array } : undefined;
}

/** `'a' | 'b'` (or a single `'a'`) -> ['a', 'b']; anything else -> null. */
export function stringLiteralUnion(node: TypeNode): string[] | null {
  const bare = unwrap(node);
  const members = Node.isUnionTypeNode(bare) ? bare.getTypeNodes() : [bare];
  const values: string[] = [];
  for (const member of members) {
    const inner = unwrap(member);
    if (!Node.isLiteralTypeNode(inner)) return null;
    const literal = inner.getLiteral();
    if (!Node.isStringLiteral(literal) && !Node.isNoSubstitutionTemplateLiteral(literal)) return null;
    values.push(literal.getLiteralValue());
  }
  return values;
}
