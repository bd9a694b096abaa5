/**
 * Built fixtures, once per run: a build is cached on disk under a hash of what
 * it depends on (the schema's folder, the generator, its templates, the schema
 * DSL and the IR types the generator shares with the runtime), so only the
 * first test process to need a fixture builds it; the others copy the cached
 * folder. The generator (ts-morph, seconds to load) is imported only on a miss.
 */
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync, utimesSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { withAdvisoryLock } from './db.ts';

export const REPO_ROOT = resolve(import.meta.dirname, '..', '..');
export const DEFAULT_FIXTURE = 'small';

/** Where cached builds live, one folder per key. */
export const FIXTURE_CACHE = join(tmpdir(), 'svc-gen-fixtures');

/** What a build depends on besides its schema's folder. */
const GENERATOR_INPUTS = ['generator', 'templates', 'schema', 'runtime/ir', 'runtime/package.ts', 'package.json'];

/** `fixture` is a folder name under fixtures/ or a path to a schema.ts file. */
export function schemaPathOf(fixture: string): string {
  return fixture.endsWith('.ts') ? resolve(fixture) : join(REPO_ROOT, 'fixtures', fixture, 'schema.ts');
}

function filesUnder(path: string): string[] {
  if (!existsSync(path)) return [];
  if (!statSync(path).isDirectory()) return [path];
  return readdirSync(path, { recursive: true, encoding: 'utf8' })
    .map((name) => join(path, name))
    .filter((file) => statSync(file).isFile())
    .sort();
}

/** Hash of the files' paths (relative to `root`) and contents. */
export function hashFiles(root: string, files: readonly string[]): string {
  const hash = createHash('sha256');
  for (const file of files) hash.update(relative(root, file)).update('\0').update(readFileSync(file)).update('\0');
  return hash.digest('hex');
}

let generatorHash: string | null = null;

/** The cache key of a fixture's build. */
export function fixtureKey(fixture: string): string {
  generatorHash ??= hashFiles(REPO_ROOT, GENERATOR_INPUTS.flatMap((input) => filesUnder(join(REPO_ROOT, input))));
  const schemaPath = schemaPathOf(fixture);
  const schemaDir = dirname(schemaPath);
  const schemaFiles = readdirSync(schemaDir).map((name) => join(schemaDir, name)).filter((file) => statSync(file).isFile()).sort();
  return createHash('sha256').update(generatorHash).update(schemaPath).update(hashFiles(schemaDir, schemaFiles)).digest('hex').slice(0, 24);
}

async function buildInto(fixture: string, outDir: string): Promise<void> {
  const { build } = await import('../../generator/index.ts');
  const result = await build({ schemaPath: schemaPathOf(fixture), outDir });
  if (!('written' in result)) throw new Error(`fixture ${fixture} failed to build: ${JSON.stringify(result)}`);
}

/**
 * The cached build of a fixture, built under an advisory lock so that test
 * processes starting together build it once; the build lands in a temporary
 * folder renamed into place, so a crashed build is never taken for a cached one.
 */
export async function cachedBuild(fixture: string): Promise<string> {
  const key = fixtureKey(fixture);
  const cached = join(FIXTURE_CACHE, key);
  if (existsSync(cached)) {
    const now = new Date();
    utimesSync(cached, now, now); // in use: not stale (dropStaleFixtureBuilds)
    return cached;
  }
  await withAdvisoryLock(`fixture:${key}`, async () => {
    if (existsSync(cached)) return;
    mkdirSync(FIXTURE_CACHE, { recursive: true });
    const building = mkdtempSync(join(FIXTURE_CACHE, `${key}.building-`));
    try {
      await buildInto(fixture, building);
      renameSync(building, cached);
    } finally {
      rmSync(building, { recursive: true, force: true });
    }
  });
  return cached;
}

const built = new Map<string, Promise<string>>();

/**
 * A fixture's build, in a folder of this test process's own, copied once per
 * process from the cache and shared by the test files the process runs
 * (vitest's `isolate: false`): read it, never write into it; a test that
 * changes its project (a hook in resolvers/) takes a privateBuild.
 */
export function buildFixture(fixture: string): Promise<string> {
  let out = built.get(fixture);
  if (!out) {
    out = cachedBuild(fixture).then((cached) => {
      const dir = mkdtempSync(join(tmpdir(), 'svc-build-'));
      cpSync(cached, dir, { recursive: true });
      return dir;
    });
    built.set(fixture, out);
  }
  return out;
}

/** A copy of the fixture's build for this caller alone, free to change (it is not shared like buildFixture's). */
export async function privateBuild(fixture: string): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-build-'));
  cpSync(await buildFixture(fixture), dir, { recursive: true });
  return dir;
}

/** Drops cached builds not used for a day (an old generator's, a changed schema's). */
export function dropStaleFixtureBuilds(maxAgeMs = 24 * 3600_000): void {
  if (!existsSync(FIXTURE_CACHE)) return;
  const cutoff = Date.now() - maxAgeMs;
  for (const name of readdirSync(FIXTURE_CACHE)) {
    const path = join(FIXTURE_CACHE, name);
    if (statSync(path).mtimeMs < cutoff) rmSync(path, { recursive: true, force: true });
  }
}
