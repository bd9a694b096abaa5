/** TypeScript literals for generated code: single-quoted strings, `{ key: value }` objects. */

export function quote(text: string): string {
  return `'${text.replace(/\\/g, '\\\\').replace(/'/g, "\\'").replace(/\n/g, '\\n')}'`;
}

export function tsLiteral(value: unknown): string {
  if (typeof value === 'string') return quote(value);
  if (value === null || typeof value !== 'object') return String(value);
  if (Array.isArray(value)) return `[${value.map(tsLiteral).join(', ')}]`;
  const entries = Object.entries(value as Record<string, unknown>).map(([key, v]) => `${/^[A-Za-z_$][\w$]*$/.test(key) ? key : quote(key)}: ${tsLiteral(v)}`);
  return entries.length ? `{ ${entries.join(', ')} }` : '{}';
}
