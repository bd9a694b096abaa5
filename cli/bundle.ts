/**
 * The generated project as one JavaScript file, for `svc-gen start` of an
 * installed package (ADR 003, "Starting without a loader").
 *
 * The project is TypeScript (server.ts, the resolvers the operator edits), so
 * running it needs a TypeScript loader: tsx's module hooks, which run on a
 * thread of their own and cost a cold start ~200 ms (the thread, tsx, and a
 * round trip per module). Instead, esbuild bundles the project's own files into
 * `DIR/.svc/start/server.mjs`, which plain Node imports:
 *
 * - `svc-gen` and `svc-gen/*` become the file URLs of this package's compiled
 *   entry points (the runtime the CLI has already loaded: one copy);
 * - every other bare import (node_modules) stays an import, of the file Node
 *   itself would resolve from the importing file, so a package is the same
 *   module instance whoever imports it;
 * - `import.meta.url` (and `dirname`, `filename`) in a project file keeps
 *   meaning that file, not the bundle: esbuild's `define` turns each into an
 *   identifier that every file declares for itself (so a string that merely
 *   spells `import.meta.url` is left alone);
 * - a source map is inlined, so stack traces name the TypeScript lines.
 *
 * The bundle is reused while `manifest.json` still matches: every input's size
 * and mtime, the imported packages' files still present, the same project
 * folder, and the same svc-gen (at the same place) and Node. Anything this cannot bundle faithfully (an import whose
 * path is computed at run time, a `require`) or cannot write (a read-only
 * folder) is a reason: the caller then loads the project through tsx as before.
 */
import { mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { dirname, extname, join, relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { BuildResult, Loader, Plugin } from 'esbuild';
import { PACKAGE_VERSION } from '../runtime/package.ts';

/** The file URL of one of this package's entry points (`svc-gen/runtime`, ...). */
export type PackageResolver = (specifier: string) => string;

export type Bundled = { readonly url: string; readonly built: boolean } | { readonly reason: string };

interface Manifest {
  readonly key: string;
  /** Absolute path -> [size, mtimeMs] of every file bundled. */
  readonly inputs: Record<string, [number, number]>;
  /** Files of node_modules the bundle imports (they must still exist). */
  readonly externals: string[];
}

const SELF = /^svc-gen(\/.*)?$/;
/** esbuild's loader for each extension the onLoad filter lets through. */
const LOADERS: Record<string, Loader> = {
  '.ts': 'ts', '.mts': 'ts', '.cts': 'ts', '.tsx': 'tsx', '.js': 'js', '.mjs': 'js', '.cjs': 'js', '.jsx': 'jsx',
};
/**
 * `import.meta.*` → an identifier per property (esbuild's `define`, applied to
 * the syntax tree), which each file's prelude declares with that file's value.
 * esbuild renames the declarations apart, so each file's references stay its own.
 */
const META = { url: '__svc_import_meta_url', dirname: '__svc_import_meta_dirname', filename: '__svc_import_meta_filename' } as const;
/** `require(...)`, or an `import(...)` whose argument is not one string literal: its target is not known when bundling. */
const COMPUTED = /\brequire\s*\(|\bimport\s*\((?!\s*(['"])[^'"`$]*\1\s*[,)])/;

export function bundlePaths(root: string) {
  const folder = join(resolve(root), '.svc', 'start');
  return { folder, bundle: join(folder, 'server.mjs'), manifest: join(folder, 'manifest.json') };
}

/** The bundle of `root`'s server.ts: reused when current, otherwise (re)built; or why it cannot be. */
export async function bundleProject(root: string, resolvePackage: PackageResolver): Promise<Bundled> {
  const base = resolve(root);
  const entry = join(base, 'server.ts');
  const paths = bundlePaths(root);
  // The folder is part of the key: a copied project (its .svc/ included) must not run the original's files.
  const key = JSON.stringify([base, PACKAGE_VERSION, process.version, resolvePackage('svc-gen/runtime')]);
  const cached = readManifest(paths.manifest);
  if (cached?.key === key && current(cached, paths.bundle)) return { url: pathToFileURL(paths.bundle).href, built: false };
  let esbuild: typeof import('esbuild');
  try {
    esbuild = await import('esbuild');
  } catch {
    return { reason: 'esbuild is not installed' };
  }
  const externals = new Set<string>();
  const unbundled: string[] = [];
  let result: BuildResult<{ write: false; metafile: true }>;
  try {
    result = await esbuild.build({
      entryPoints: [entry], bundle: true, format: 'esm', platform: 'node', target: `node${process.versions.node.split('.')[0]}`,
      absWorkingDir: base, write: false, metafile: true, sourcemap: 'inline', sourcesContent: false, logLevel: 'silent', outfile: paths.bundle,
      define: Object.fromEntries(Object.entries(META).map(([name, id]) => [`import.meta.${name}`, id])),
      plugins: [{
        name: 'svc-gen-start',
        setup(build) {
          build.onResolve({ filter: SELF }, (args) => ({ path: resolvePackage(args.path), external: true }));
          // Bare imports: resolved where Node would resolve them, and kept as imports of that file.
          build.onResolve({ filter: /^[^./]/ }, async (args) => {
            if (args.pluginData === 'svc-gen-resolving' || args.path.startsWith('node:')) return undefined;
            const found = await build.resolve(args.path, { kind: args.kind, resolveDir: args.resolveDir, pluginData: 'svc-gen-resolving' });
            if (found.errors.length > 0 || found.external) return { path: args.path, external: true };
            externals.add(found.path);
            return { path: pathToFileURL(found.path).href, external: true };
          });
          build.onLoad({ filter: /\.[cm]?[jt]sx?$/ }, (args) => {
            const source = readFileSync(args.path, 'utf8');
            const dynamic = COMPUTED.exec(source);
            if (dynamic) unbundled.push(`${relative(base, args.path)}: ${dynamic[0].trim()}`);
            return { contents: withMetaPrelude(source, args.path), loader: LOADERS[extname(args.path)] };
          });
        },
      } satisfies Plugin],
    });
  } catch (error) {
    if (unbundled.length > 0) return { reason: `not bundled: ${unbundled[0]}` };
    const first = (error as { errors?: Array<{ text: string }> }).errors?.[0]?.text ?? (error as Error).message;
    return { reason: `esbuild could not bundle ${entry}: ${first}` };
  }
  for (const warning of result.warnings) {
    // "This call to "require" will not be bundled", an import whose path is only known at run time, ...: not faithful.
    if (/will not be bundled|cannot be bundled|unsupported/i.test(warning.text)) unbundled.push(warning.text);
  }
  if (unbundled.length > 0) return { reason: `not bundled: ${unbundled[0]}` };
  const inputs: Manifest['inputs'] = {};
  for (const input of Object.keys(result.metafile.inputs)) {
    const path = resolve(base, input);
    const stat = statSync(path);
    inputs[path] = [stat.size, stat.mtimeMs];
  }
  const manifest: Manifest = { key, inputs, externals: [...externals] };
  try {
    mkdirSync(paths.folder, { recursive: true });
    // Written under temporary names, then renamed: a server starting beside this one reads a whole file or none.
    const suffix = `.${process.pid}.tmp`;
    writeFileSync(paths.bundle + suffix, result.outputFiles[0].contents);
    writeFileSync(paths.manifest + suffix, JSON.stringify(manifest));
    renameSync(paths.bundle + suffix, paths.bundle);
    renameSync(paths.manifest + suffix, paths.manifest);
  } catch (error) {
    return { reason: `cannot write ${relative(process.cwd(), paths.folder) || '.'}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}` };
  }
  return { url: pathToFileURL(paths.bundle).href, built: true };
}

/**
 * `source` with the declarations `META`'s identifiers refer to, on its first
 * line (after a `#!` line), so that every later line keeps its number for the
 * source map. Declarations a file does not use are dropped by the bundler.
 */
function withMetaPrelude(source: string, path: string): string {
  const values = { url: pathToFileURL(path).href, dirname: dirname(path), filename: path };
  const prelude = `const ${Object.entries(META).map(([name, id]) => `${id} = ${JSON.stringify(values[name as keyof typeof META])}`).join(', ')};`;
  if (!source.startsWith('#!')) return prelude + source;
  const lineEnd = source.indexOf('\n');
  return lineEnd === -1 ? `${source}\n${prelude}` : source.slice(0, lineEnd + 1) + prelude + source.slice(lineEnd + 1);
}

function readManifest(path: string): Manifest | null {
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as Manifest;
  } catch {
    return null;
  }
}

function current(manifest: Manifest, bundle: string): boolean {
  try {
    statSync(bundle);
    for (const [path, [size, mtimeMs]] of Object.entries(manifest.inputs)) {
      const stat = statSync(path);
      if (stat.size !== size || stat.mtimeMs !== mtimeMs) return false;
    }
    for (const path of manifest.externals) statSync(path);
    return true;
  } catch {
    return false;
  }
}
