/** Destructive changes are refused with a diagnostic unless allowDestructive. */
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { build } from '../../generator/index.ts';
import { buildOk, copySchema, readTree, tempDir } from './helpers.ts';

async function builtV2() {
  const schemaPath = copySchema('history/v2');
  const outDir = tempDir('destructive');
  await buildOk({ schemaPath, outDir, name: 'history' });
  return { schemaPath, outDir };
}

function edit(path: string, from: string, to: string): void {
  const text = readFileSync(path, 'utf8');
  if (!text.includes(from)) throw new Error(`fixture does not contain ${from}`);
  writeFileSync(path, text.replace(from, to));
}

const lineOf = (path: string, needle: string) => readFileSync(path, 'utf8').split('\n').findIndex((l) => l.includes(needle)) + 1;

const CASES: { name: string; from: string; to: string; sql: string; line: string }[] = [
  { name: 'drop a field', from: '  vip?: boolean;\n', to: '', sql: 'alter table "contact" drop column "vip";', line: 'export interface Contact' },
  { name: 'drop a model', from: "    Deal: { access: { read: ['Manager', 'Sales'] } },\n", to: '', sql: 'drop table "deal";', line: '' },
  { name: 'change a field type', from: '  title: string;', to: '  title: number;', sql: 'update "deal" set "title_v2" = ("title")::double precision where "title_v2" is null;', line: 'title: number' },
  {
    name: 'make a field required',
    from: '  vip?: boolean;',
    to: '  /** @default false */\n  vip: boolean;',
    sql: '-- step 2 backfill "contact": set Contact.vip to its default where it is null\nupdate "contact" set "vip" = false where "vip" is null;',
    line: 'vip: boolean',
  },
  { name: 'remove an enum value', from: "'lead' | 'qualified'", to: "'lead'", sql: `alter table "contact" add constraint "contact_stage_check" check ("stage" in ('lead')) not valid;`, line: 'stage: Stage' },
];

describe('destructive changes', () => {
  it.each(CASES)('$name is refused, then emitted with --allow-destructive', async ({ name, from, to, sql, line }) => {
    const { schemaPath, outDir } = await builtV2();
    if (name === 'drop a model') {
      edit(schemaPath, '  deals?: Deal[];\n', '');
      const text = readFileSync(schemaPath, 'utf8');
      writeFileSync(schemaPath, text.replace(/export interface Deal \{[^}]*\}\n\n/, ''));
    }
    edit(schemaPath, from, to);
    const before = readTree(outDir);
    const refused = await build({ schemaPath, outDir, name: 'history' });
    if (!('diagnostics' in refused)) throw new Error(`${name} was not refused`);
    expect(refused.diagnostics.map((d) => d.code)).toEqual(['DESTRUCTIVE_CHANGE']);
    expect(refused.diagnostics[0].message).toContain('--allow-destructive');
    expect(refused.diagnostics[0].line).toBe(line ? lineOf(schemaPath, line) : 1);
    expect(readTree(outDir)).toEqual(before);

    const allowed = await buildOk({ schemaPath, outDir, name: 'history', allowDestructive: true });
    const files = [allowed.migration, allowed.contract].flatMap((m) => (m ? [readFileSync(join(outDir, m.path), 'utf8')] : []));
    expect(files.join('\n')).toContain(sql);
    const marked = files.find((f) => f.includes('-- DESTRUCTIVE: '));
    expect(marked, 'the file carrying the destructive change says so in its header').toBeDefined();
    expect(marked!.indexOf('-- DESTRUCTIVE: ')).toBeLessThan(marked!.indexOf('-- step 1 '));
  });

  it('adding an enum value is not destructive', async () => {
    const { schemaPath, outDir } = await builtV2();
    edit(schemaPath, "'lead' | 'qualified'", "'lead' | 'qualified' | 'won'");
    const result = await buildOk({ schemaPath, outDir, name: 'history' });
    const sql = readFileSync(join(outDir, result.migration!.path), 'utf8');
    expect(sql).not.toContain('DESTRUCTIVE');
    expect(sql).toContain(`alter table "contact" drop constraint if exists "contact_stage_check";\nalter table "contact" add constraint "contact_stage_check" check ("stage" in ('lead', 'qualified', 'won')) not valid;\n`);
    expect(sql).toContain('online: validate the values of Contact.stage\nalter table "contact" validate constraint "contact_stage_check";');
  });

  it('a required field without @default on an existing model is an error naming the field', async () => {
    const { schemaPath, outDir } = await builtV2();
    edit(schemaPath, '  vip?: boolean;\n', '  vip?: boolean;\n  score: number;\n');
    const result = await build({ schemaPath, outDir, name: 'history', allowDestructive: true });
    if (!('diagnostics' in result)) throw new Error('expected a diagnostic');
    expect(result.diagnostics).toEqual([
      expect.objectContaining({ code: 'REQUIRED_FIELD_NEEDS_DEFAULT', line: lineOf(schemaPath, 'score: number') }),
    ]);
    expect(result.diagnostics[0].message).toMatch(/Contact\.score.*@default/);
  });

  it('a required field with @default is added NOT NULL with a backfilling default', async () => {
    const { schemaPath, outDir } = await builtV2();
    edit(schemaPath, '  vip?: boolean;\n', '  vip?: boolean;\n  /** @default 0 */\n  score: number;\n');
    const result = await buildOk({ schemaPath, outDir, name: 'history' });
    expect(readdirSync(join(outDir, 'migrations'))).toHaveLength(2);
    expect(readFileSync(join(outDir, result.migration!.path), 'utf8')).toContain('alter table "contact" add column "score" double precision not null default 0;');
  });
});

describe('safe type changes', () => {
  it('an enum becoming a string only drops its check', async () => {
    const schemaPath = copySchema('history/v2');
    const outDir = tempDir('widen');
    await buildOk({ schemaPath, outDir, name: 'history' });
    edit(schemaPath, '  stage: Stage;', '  stage: string;');
    const result = await buildOk({ schemaPath, outDir, name: 'history' });
    const sql = readFileSync(join(outDir, result.migration!.path), 'utf8');
    expect(sql).not.toContain('DESTRUCTIVE');
    expect(sql).toContain('alter table "contact" drop constraint if exists "contact_stage_check";');
    expect(sql).not.toContain('alter column "stage" type');
  });
});
