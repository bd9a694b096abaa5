/**
 * Finds the source text of one top-level member of a JSON object, so that a
 * published payload is forwarded byte for byte: a JSON.parse/stringify round
 * trip would turn 12345678901234567890 into 12345678901234567000 and 1.0
 * into 1. Only called on text that JSON.parse already accepted.
 */

const WHITESPACE = new Set([' ', '\t', '\n', '\r']);

/** The raw text of the last member named `key` (as JSON.parse keeps the last), or undefined. */
export function rawMember(text: string, key: string): string | undefined {
  let i = skipWhitespace(text, 0);
  if (text[i] !== '{') return undefined;
  let found: string | undefined;
  i = skipWhitespace(text, i + 1);
  while (i < text.length && text[i] !== '}') {
    const keyEnd = skipString(text, i);
    const name = JSON.parse(text.slice(i, keyEnd)) as string;
    const valueStart = skipWhitespace(text, skipWhitespace(text, keyEnd) + 1); // past ':'
    const valueEnd = skipValue(text, valueStart);
    if (name === key) found = text.slice(valueStart, valueEnd);
    i = skipWhitespace(text, valueEnd);
    if (text[i] === ',') i = skipWhitespace(text, i + 1);
  }
  return found;
}

function skipWhitespace(text: string, i: number): number {
  while (WHITESPACE.has(text[i])) i++;
  return i;
}

/** `i` is at an opening quote; returns the index after the closing one. */
function skipString(text: string, i: number): number {
  let j = i + 1;
  while (j < text.length && text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
  return j + 1;
}

function skipValue(text: string, i: number): number {
  const first = text[i];
  if (first === '"') return skipString(text, i);
  if (first === '{' || first === '[') return skipNested(text, i);
  let j = i;
  while (j < text.length && !WHITESPACE.has(text[j]) && text[j] !== ',' && text[j] !== '}' && text[j] !== ']') j++;
  return j;
}

function skipNested(text: string, i: number): number {
  let depth = 0;
  let j = i;
  while (j < text.length) {
    const c = text[j];
    if (c === '"') {
      j = skipString(text, j);
      continue;
    }
    if (c === '{' || c === '[') depth++;
    else if ((c === '}' || c === ']') && --depth === 0) return j + 1;
    j++;
  }
  return j;
}
