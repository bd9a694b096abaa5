/**
 * Helpers for generator tests: temp output folders, reading a whole output
 * tree, and the golden-file comparison (`UPDATE_GOLDEN=1` rewrites locally,
 * refused when `CI` is set).
 */
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { afterAll, expect } from 'vitest';
import { build, type BuildOptions, type BuildResult } from '../../generator/index.ts';

export const REPO_ROOT = resolve(import.meta.dirname, '..', '..');
export const FIXTURES = join(REPO_ROOT, 'fixtures');
export const GOLDEN = join(REPO_ROOT, 'test', 'golden');

const created: string[] = [];
afterAll(() => {
  for (const dir of created.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A fresh folder under the OS temp dir, removed after the test file. */
export function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), `svc-gen-${prefix}-`));
  created.push(dir);
  return dir;
}

/** Every file below `dir` (relative path -> content), skipping node_modules. */
export function readTree(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (current: string) => {
    for (const entry of readdirSync(current, { withFileTypes: true })) {
      if (entry.name === 'node_modules') continue;
      const path = join(current, entry.name);
      if (entry.isDirectory()) walk(path);
      else out.set(relative(dir, path).split('\\').join('/'), readFileSync(path, 'utf8'));
    }
  };
  walk(dir);
  return new Map([...out].sort(([a], [b]) => (a < b ? -1 : 1)));
}

/** Compares a whole output tree with test/golden/<name>. */
export function expectGolden(name: string, outDir: string): void {
  const golden = join(GOLDEN, name);
  const actual = readTree(outDir);
  if (process.env.UPDATE_GOLDEN === '1') {
    if (process.env.CI) throw new Error('UPDATE_GOLDEN is refused when CI is set: golden files change only in a reviewed commit');
    rmSync(golden, { recursive: true, force: true });
    for (const [path, content] of actual) {
      mkdirSync(dirname(join(golden, path)), { recursive: true });
      writeFileSync(join(golden, path), content);
    }
    return;
  }
  const expected = readTree(golden);
  expect([...actual.keys()], `file list of ${name} (run with UPDATE_GOLDEN=1 to accept)`).toEqual([...expected.keys()]);
  for (const [path, content] of actual) {
    expect(content, `${name}/${path} differs from golden (run with UPDATE_GOLDEN=1 to accept)`).toBe(expected.get(path));
  }
}

/** Copies a fixture schema to a temp schema.ts so a test can edit it. */
export function copySchema(fixture: string, dir = tempDir('schema')): string {
  const target = join(dir, 'schema.ts');
  cpSync(join(FIXTURES, fixture, 'schema.ts'), target);
  return target;
}

export async function buildOk(options: BuildOptions): Promise<Extract<BuildResult, { written: readonly string[] }>> {
  const result = await build(options);
  if (!('written' in result)) throw new Error(`build failed: ${JSON.stringify(result, null, 2)}`);
  return result;
}
