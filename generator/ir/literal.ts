/** `@default` values: a literal as written in a tag, checked against the field type. */
import type { FieldType, Literal } from '../../runtime/ir/types.ts';

/** Reads `'x'`, `"x"`, `true`, `12.5`; any other text stays a bare word. */
export function readLiteral(text: string): { value: Literal; quoted: boolean } {
  const quoted = /^(['"])(.*)\1$/s.exec(text);
  if (quoted) return { value: quoted[2].replace(/\\(['"\\])/g, '$1'), quoted: true };
  if (text === 'true' || text === 'false') return { value: text === 'true', quoted: false };
  if (/^-?\d+(\.\d+)?([eE][+-]?\d+)?$/.test(text)) return { value: Number(text), quoted: false };
  return { value: text, quoted: false };
}

const ISO_DATE = /^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$/;

/** The default as stored in the IR, or an explanation of why it does not fit. */
export function fitDefault(text: string, type: FieldType): { value: Literal } | { problem: string } {
  const literal = readLiteral(text);
  const asText = literal.quoted ? String(literal.value) : text;
  if (type.kind === 'enum') {
    return type.values.includes(asText) ? { value: asText } : { problem: `must be one of ${type.values.join(', ')}` };
  }
  if (type.kind !== 'scalar') return { problem: `a ${type.kind} field cannot have a default` };
  switch (type.scalar) {
    case 'string':
      return { value: asText };
    case 'number':
      return typeof literal.value === 'number' && Number.isFinite(literal.value) ? { value: literal.value } : { problem: 'must be a number' };
    case 'boolean':
      return typeof literal.value === 'boolean' ? { value: literal.value } : { problem: 'must be true or false' };
    case 'date':
      return ISO_DATE.test(asText) && !Number.isNaN(Date.parse(asText)) ? { value: asText } : { problem: "must be an ISO date such as '2024-01-31'" };
  }
}
