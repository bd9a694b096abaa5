/**
 * The only code that touches the output folder: reads what a build needs to
 * know about DIR, compares, writes, removes. Old migrations are never read
 * for rewriting: their names are listed, and the Citus distribution files
 * (`*_for_citus.sql`) are read to learn which runtime tables they placed.
 */
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';

export interface DirState {
  readonly snapshotText: string | null;
  readonly migrations: readonly string[];
  /** projections/* and resolvers/* contents by relative path. */
  readonly managed: ReadonlyMap<string, string>;
  /** The texts of DIR/migrations/*_for_citus.sql (the distribution files of `--target citus`), by name. */
  readonly citusMigrations: ReadonlyMap<string, string>;
}

export type FileStatus = 'add' | 'change' | 'remove';

export interface WritePlan {
  readonly changes: readonly { readonly path: string; readonly status: FileStatus }[];
  readonly unchanged: readonly string[];
}

const MANAGED_DIRS = ['projections', 'resolvers'];

export async function readDirState(outDir: string): Promise<DirState> {
  const snapshotText = await readIfExists(join(outDir, 'schema.snapshot.json'));
  const migrations = (await list(join(outDir, 'migrations'))).filter((name) => name.endsWith('.sql')).sort();
  const managed = new Map<string, string>();
  for (const dir of MANAGED_DIRS) {
    for (const name of (await list(join(outDir, dir))).sort()) {
      const content = await readIfExists(join(outDir, dir, name));
      if (content !== null) managed.set(`${dir}/${name}`, content);
    }
  }
  const citusMigrations = new Map<string, string>();
  for (const name of migrations.filter((n) => n.endsWith('_for_citus.sql'))) {
    const content = await readIfExists(join(outDir, 'migrations', name));
    if (content !== null) citusMigrations.set(name, content);
  }
  return { snapshotText, migrations, managed, citusMigrations };
}

/** What writing `files` and removing `obsolete` would change in DIR. */
export async function planWrite(outDir: string, files: ReadonlyMap<string, string>, obsolete: readonly string[]): Promise<WritePlan> {
  const changes: { path: string; status: FileStatus }[] = [];
  const unchanged: string[] = [];
  for (const [path, content] of files) {
    const current = await readIfExists(join(outDir, path));
    if (current === content) unchanged.push(path);
    else changes.push({ path, status: current === null ? 'add' : 'change' });
  }
  for (const path of obsolete) changes.push({ path, status: 'remove' });
  return { changes, unchanged };
}

export async function applyWrite(outDir: string, files: ReadonlyMap<string, string>, plan: WritePlan): Promise<void> {
  for (const { path, status } of plan.changes) {
    const target = join(outDir, path);
    if (status === 'remove') {
      await rm(target, { force: true });
      continue;
    }
    await mkdir(dirname(target), { recursive: true });
    await writeFile(target, files.get(path)!);
  }
}

async function readIfExists(path: string): Promise<string | null> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    if (isMissing(error)) return null;
    throw error;
  }
}

async function list(dir: string): Promise<string[]> {
  try {
    return (await readdir(dir, { withFileTypes: true })).filter((e) => e.isFile()).map((e) => e.name);
  } catch (error) {
    if (isMissing(error)) return [];
    throw error;
  }
}

function isMissing(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException).code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}
