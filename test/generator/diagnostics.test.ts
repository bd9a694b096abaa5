/**
 * One bad schema per diagnostic under fixtures/bad/. The line a diagnostic
 * must point at ends with `// expect: CODE`.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { build, formatDiagnostic, parseSchemaFile, parseSchemaText } from '../../generator/index.ts';
import { FIXTURES, tempDir } from './helpers.ts';

const BAD = join(FIXTURES, 'bad');
const cases = readdirSync(BAD).filter((f) => f.endsWith('.ts')).sort();

function expectations(text: string): { code: string; line: number }[] {
  return text.split('\n').flatMap((line, i) => {
    const match = /\/\/ expect: ([A-Z_]+)/.exec(line);
    return match ? [{ code: match[1], line: i + 1 }] : [];
  });
}

describe('bad schemas', () => {
  it.each(cases)('%s reports its diagnostic with file and line', async (file) => {
    const path = join(BAD, file);
    const expected = expectations(readFileSync(path, 'utf8'));
    expect(expected.length).toBeGreaterThan(0);
    const result = await parseSchemaFile(path);
    if (result.ok) throw new Error(`${file} parsed without diagnostics`);
    const found = result.diagnostics.map((d) => ({ code: d.code, line: d.line }));
    expect(found).toEqual(expect.arrayContaining(expected));
    for (const d of result.diagnostics) {
      expect(d.file.endsWith(file)).toBe(true);
      expect(formatDiagnostic(d)).toMatch(new RegExp(`^\\S*${file}:${d.line}: \\S`));
      expect(formatDiagnostic(d)).not.toContain('\n');
    }
  });

  it('formats as file:line: message', async () => {
    const result = parseSchemaText('export interface Contact {\n  id: string;\n  /** @foo */\n  name: string;\n}\n', 'schema.ts');
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.diagnostics.map(formatDiagnostic)).toEqual(['schema.ts:3: unknown tag @foo on Contact.name (known: @email @min @max @numeric @default @unique @index @sensitive @renamedFrom)']);
  });

  it('build returns diagnostics and writes nothing', async () => {
    const outDir = tempDir('bad');
    const result = await build({ schemaPath: join(BAD, 'unknown-tag.ts'), outDir });
    expect(result).toMatchObject({ ok: false, diagnostics: [{ code: 'UNKNOWN_TAG' }] });
    expect(readdirSync(outDir)).toEqual([]);
  });

  it('reports an unreadable schema file as a diagnostic', async () => {
    const result = await build({ schemaPath: join(BAD, 'no-such-file.ts'), outDir: tempDir('bad') });
    expect(result).toMatchObject({ ok: false, diagnostics: [{ code: 'SCHEMA_UNREADABLE', line: 1 }] });
  });

  it('accepts documentation tags and tags spread over lines', () => {
    const text = 'export interface A {\n  id: string;\n  /**\n   * The name.\n   * @see docs\n   * @min 2\n   * @max 5 @unique\n   */\n  name: string;\n}\n';
    const result = parseSchemaText(text, 'schema.ts');
    if (!result.ok) throw new Error(result.diagnostics.map(formatDiagnostic).join('\n'));
    expect(result.ir.models[0].fields[0]).toMatchObject({ validation: { min: 2, max: 5 }, unique: true });
  });
});
