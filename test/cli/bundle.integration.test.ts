/**
 * cli/bundle.ts: the project bundle an installed `svc-gen start` loads with
 * plain Node (no TypeScript loader). Each case builds a small project by hand,
 * bundles it, and imports the bundle in a plain `node` child process, where
 * `svc-gen/runtime` is a stand-in module that records what the project passed it.
 * The installed package end to end, with the real runtime and the bundle: test/package.
 */
import { execFile } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { beforeEach, describe, expect, it } from 'vitest';
import { bundlePaths, bundleProject, type Bundled } from '../../cli/bundle.ts';

const run = promisify(execFile);

/** A stand-in for svc-gen/runtime, outside the project: defineService returns what it was given. */
const stubDir = mkdtempSync(join(tmpdir(), 'svc-bundle-stub-'));
writeFileSync(join(stubDir, 'runtime.mjs'), `
  globalThis.defined = (globalThis.defined ?? 0) + 1;
  export function defineService(definition) { return { kind: 'service', ...definition }; }
`);
const resolvePackage = (specifier: string) => {
  if (specifier === 'svc-gen/runtime') return pathToFileURL(join(stubDir, 'runtime.mjs')).href;
  throw new Error(`unexpected ${specifier}`);
};

function write(dir: string, files: Record<string, string>): void {
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(join(dir, name, '..'), { recursive: true });
    writeFileSync(join(dir, name), text);
  }
}

const SERVER = `
  import { defineService } from 'svc-gen/runtime';
  import snapshot from './schema.snapshot.json' with { type: 'json' };
  import { resolvers, here, spelled } from './resolvers/index.ts';
  export default defineService({ snapshot, resolvers, here, spelled, root: new URL('.', import.meta.url).href });
`;

function project(): string {
  const dir = mkdtempSync(join(tmpdir(), 'svc-bundle-'));
  write(dir, {
    'server.ts': SERVER,
    'schema.snapshot.json': JSON.stringify({ models: ['Deal'] }),
    // A `#!` line stays first (the prelude that gives import.meta its values goes after it).
    'resolvers/index.ts': `#!/usr/bin/env node
      import { pad } from 'fake-pad';
      interface Greeting { readonly text: string }
      export const here: string = import.meta.url;
      // Text that only spells import.meta is left as written.
      export const spelled = ["import.meta.url", 'import.meta.dirname', \`import.meta.filename\`];
      export const resolvers = { greet: (name: string): Greeting => ({ text: pad(name) }) };
    `,
    // A package of the project's own node_modules, with an "exports" map.
    'node_modules/fake-pad/package.json': JSON.stringify({ name: 'fake-pad', type: 'module', exports: { '.': { import: './pad.mjs' } } }),
    'node_modules/fake-pad/pad.mjs': `export const pad = (s) => '[' + s + ']'; globalThis.padLoads = (globalThis.padLoads ?? 0) + 1;`,
  });
  return dir;
}

/** Imports the bundle in plain node (no hooks) and reports what the project defined. */
async function load(bundled: Bundled, dir: string): Promise<Record<string, unknown>> {
  if (!('url' in bundled)) throw new Error(`not bundled: ${bundled.reason}`);
  const script = `
    const { default: service } = await import(${JSON.stringify(bundled.url)});
    const again = await import(${JSON.stringify(pathToFileURL(join(dir, 'node_modules/fake-pad/pad.mjs')).href)});
    console.log(JSON.stringify({
      kind: service.kind, snapshot: service.snapshot, root: service.root, here: service.here, spelled: service.spelled,
      greeting: service.resolvers.greet('ada'), padLoads: globalThis.padLoads, defined: globalThis.defined,
      samePad: again.pad('x') === '[x]',
    }));
  `;
  const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], { cwd: dir, env: { ...process.env, NODE_OPTIONS: '' } });
  return JSON.parse(stdout) as Record<string, unknown>;
}

describe('the project bundle for start', { timeout: 60_000 }, () => {
  let dir: string;
  beforeEach(() => {
    dir = project();
  });

  it('runs under plain node: TypeScript, JSON, import.meta.url of each file, packages from the project', async () => {
    const bundled = await bundleProject(dir, resolvePackage);
    expect(bundled).toMatchObject({ built: true });
    expect(await load(bundled, dir)).toEqual({
      kind: 'service', snapshot: { models: ['Deal'] },
      root: pathToFileURL(dir).href + '/', here: pathToFileURL(join(dir, 'resolvers', 'index.ts')).href,
      spelled: ['import.meta.url', 'import.meta.dirname', 'import.meta.filename'],
      greeting: { text: '[ada]' },
      // The package is imported as the file Node resolves, so importing that file again is the same module.
      padLoads: 1, defined: 1, samePad: true,
    });
    const bundle = readFileSync(bundlePaths(dir).bundle, 'utf8');
    expect(bundle).toContain(pathToFileURL(join(stubDir, 'runtime.mjs')).href);
    expect(bundle).toContain('sourceMappingURL=data:application/json');
  });

  it('is reused while its inputs are unchanged, and rebuilt when one changes', async () => {
    expect(await bundleProject(dir, resolvePackage)).toMatchObject({ built: true });
    expect(await bundleProject(dir, resolvePackage)).toMatchObject({ built: false });
    // The bundle itself deleted (its manifest left): rebuilt.
    rmSync(bundlePaths(dir).bundle);
    expect(await bundleProject(dir, resolvePackage)).toMatchObject({ built: true });
    write(dir, { 'resolvers/index.ts': readFileSync(join(dir, 'resolvers/index.ts'), 'utf8').replace('pad(name)', "pad(name + '!')") });
    const rebuilt = await bundleProject(dir, resolvePackage);
    expect(rebuilt).toMatchObject({ built: true });
    expect(await load(rebuilt, dir)).toMatchObject({ greeting: { text: '[ada!]' } });
    // Same size, new mtime (an editor's save of the same length): rebuilt too.
    write(dir, { 'server.ts': SERVER.replace('here,', 'here ,').replace('  export', ' export') });
    utimesSync(join(dir, 'server.ts'), new Date(), new Date(Date.now() + 5_000));
    expect(await bundleProject(dir, resolvePackage)).toMatchObject({ built: true });
    // A package file the bundle imports is gone (a reinstall moved it): rebuilt, not a broken import.
    expect(await bundleProject(dir, resolvePackage)).toMatchObject({ built: false });
    rmSync(join(dir, 'node_modules/fake-pad/pad.mjs'));
    write(dir, { 'node_modules/fake-pad/pad.mjs': 'export const pad = (s) => s;' });
    expect(await bundleProject(dir, resolvePackage)).toMatchObject({ built: false }); // same path again: still current
    // Uninstalled: rebuilt with the import left bare, so importing the bundle fails as the sources would, naming it.
    rmSync(join(dir, 'node_modules/fake-pad'), { recursive: true });
    const orphan = await bundleProject(dir, resolvePackage);
    expect(orphan).toMatchObject({ built: true });
    await expect(load(orphan, dir)).rejects.toThrow(/Cannot find package 'fake-pad'/);
  });

  it('is not reused by a copy of the project (the copy runs its own files)', async () => {
    expect(await bundleProject(dir, resolvePackage)).toMatchObject({ built: true });
    const copy = mkdtempSync(join(tmpdir(), 'svc-bundle-copy-'));
    cpSync(dir, copy, { recursive: true, preserveTimestamps: true });
    const bundled = await bundleProject(copy, resolvePackage);
    expect(bundled).toMatchObject({ built: true });
    expect(await load(bundled, copy)).toMatchObject({ root: pathToFileURL(copy).href + '/' });
  });

  it.each([
    ['an import whose path is computed', `export const load = (name: string) => import('./handlers/' + name + '.ts');`],
    ['a require', `export const os = require('node:os');`],
  ])('is refused for %s (start then uses tsx)', async (_, line) => {
    write(dir, { 'resolvers/extra.ts': line, 'server.ts': `import './resolvers/extra.ts';\n${SERVER}` });
    const bundled = await bundleProject(dir, resolvePackage);
    expect(bundled).toEqual({ reason: expect.stringMatching(/^not bundled: resolvers\/extra\.ts: (import|require)\s*\(/) });
  });

  it('says why when the project does not compile or the folder cannot be written', async () => {
    write(dir, { 'resolvers/index.ts': 'export const resolvers = {' });
    expect(await bundleProject(dir, resolvePackage)).toEqual({ reason: expect.stringMatching(/^esbuild could not bundle .*server\.ts: /) });
    const other = project();
    writeFileSync(join(other, '.svc'), 'a file where the folder would go');
    expect(await bundleProject(other, resolvePackage)).toEqual({ reason: expect.stringMatching(/^cannot write .*\.svc\/start: E(EXIST|NOTDIR)/) });
  });
});
