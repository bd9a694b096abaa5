/** Resolver stubs are the operator's code: written once, never overwritten. */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { build } from '../../generator/index.ts';
import { buildOk, copySchema, tempDir } from './helpers.ts';

describe('resolver stubs', () => {
  it('an edited stub survives rebuilds and --check', async () => {
    const schemaPath = copySchema('small');
    const outDir = tempDir('stubs');
    await buildOk({ schemaPath, outDir });
    const stub = join(outDir, 'resolvers', 'Task.ts');
    expect(readFileSync(stub, 'utf8')).not.toContain('DO NOT EDIT');
    const edited = readFileSync(stub, 'utf8').replace('export const hooks: ModelHooks<Task> = {', 'export const hooks: ModelHooks<Task> = {\n  beforeCreate: (data) => ({ ...data, title: data.title?.trim() }),');
    writeFileSync(stub, edited);
    const again = await buildOk({ schemaPath, outDir });
    expect(again.written).not.toContain('resolvers/Task.ts');
    expect(readFileSync(stub, 'utf8')).toBe(edited);
    expect(await build({ schemaPath, outDir, check: true })).toMatchObject({ ok: true });
  });

  it('a deleted stub is written again; a stub of a removed model goes only if untouched', async () => {
    const schemaPath = copySchema('small');
    const outDir = tempDir('stubs');
    await buildOk({ schemaPath, outDir });
    const check = await build({ schemaPath, outDir: tempDir('empty'), check: true });
    expect(check).toMatchObject({ ok: false });
    writeFileSync(join(outDir, 'resolvers', 'Project.ts'), '// mine\nexport const hooks = {};\n');
    const text = readFileSync(schemaPath, 'utf8')
      .replace(/export interface Task \{[^}]*\}\n\n/, '')
      .replace('  tasks?: Task[];\n', '')
      .replace(/    Task: \{[^\n]*\n/, '')
      .replace('export interface Project', 'export interface Board');
    writeFileSync(schemaPath, text.replace("    Project: {", "    Board: {"));
    const result = await buildOk({ schemaPath, outDir, allowDestructive: true });
    expect(result.removed).toEqual(['projections/project.sql', 'projections/task.sql', 'resolvers/Task.ts']);
    expect(existsSync(join(outDir, 'resolvers', 'Project.ts'))).toBe(true);
    expect(existsSync(join(outDir, 'resolvers', 'Board.ts'))).toBe(true);
  });

  it('the custom projections file is written once and an edited one is kept', async () => {
    const schemaPath = copySchema('small');
    const outDir = tempDir('stubs');
    await buildOk({ schemaPath, outDir });
    const file = join(outDir, 'resolvers', '_projections.ts');
    expect(readFileSync(file, 'utf8')).toContain('export const projections: readonly ProjectionDefinition[] = [];');
    const edited = readFileSync(file, 'utf8').replace('= [];', '= [/* mine */];');
    writeFileSync(file, edited);
    const again = await buildOk({ schemaPath, outDir });
    expect(again.written).not.toContain('resolvers/_projections.ts');
    expect(readFileSync(file, 'utf8')).toBe(edited);
    expect(readFileSync(join(outDir, 'server.ts'), 'utf8')).toContain("import { projections } from './resolvers/_projections.ts';");
  });
});
