/**
 * JSDoc tags on a field, read from the comment text. TypeScript's own JSDoc
 * parser does not split `@min 2 @max 120` written on one line, so we scan the
 * text ourselves: a tag is `@word` at the start or after whitespace.
 */
import type { JSDoc } from 'ts-morph';
import type { RawTag } from './facts.ts';

const TAG = /(?<=^|\s)@([A-Za-z][\w-]*)([^@]*)/g;

export function readTags(docs: readonly JSDoc[], file: string): RawTag[] {
  return docs.flatMap((doc) => tagsOf(doc.getText(), doc.getStartLineNumber(), file));
}

function tagsOf(text: string, firstLine: number, file: string): RawTag[] {
  const tags: RawTag[] = [];
  text.split('\n').forEach((raw, offset) => {
    const line = stripDecoration(raw);
    for (const match of line.matchAll(TAG)) {
      tags.push({ name: match[1], value: match[2].trim(), at: { file, line: firstLine + offset } });
    }
  });
  return tags;
}

/** Drops `/**`, `*\/` and the leading `*` of a comment line. */
function stripDecoration(line: string): string {
  return line.replace(/^\s*\/\*\*/, '').replace(/\*\/\s*$/, '').replace(/^\s*\*(?!\/)/, '');
}
