#!/usr/bin/env node
// The svc-gen command. An installed package runs its compiled code (dist/); a
// checkout of the repository, which has the TypeScript sources beside this
// file, runs them directly so that `npm ci` is the only setup step (ADR 003).
//
// A generated project's server.ts (and its resolver hooks) are TypeScript. An
// installed package's `start` loads the project as one bundle built by esbuild
// (cli/bundle.ts) and needs no loader; otherwise tsx is registered, with a
// resolve hook that makes `svc-gen/*` imports of that project resolve to this
// package wherever it lives on disk. Installed, `start`, `migrate` and
// `compile` also load the compiled runtime before any hook is registered: once
// registered, every module loaded makes a round trip to the hooks' thread,
// which cost a quarter of a cold start's CPU (ADR 009).
import { existsSync } from 'node:fs';
import { register } from 'node:module';

const sources = existsSync(new URL('../cli/main.ts', import.meta.url));
const command = process.argv[2];
let registered = false;
const registerTypeScript = () => {
  if (registered) return;
  registered = true;
  register('../cli/resolve-hook.mjs', import.meta.url, { data: { sources } });
  // tsx's loader is registered by its module name rather than through its API
  // module (tsx/esm/api), which would load tsx and esbuild's client into this
  // thread as well (~85 ms of a cold start) only to make the same call.
  register('tsx/esm', import.meta.url, { data: {} });
};
const loaderFree = !sources && (command === 'start' || command === 'migrate' || command === 'compile');
if (loaderFree) {
  await import('../dist/runtime/index.js');
  await import('../dist/cli/serve.js');
}
// Stack traces name the project's TypeScript lines (the bundle's and tsx's inline source maps).
process.setSourceMapsEnabled(true);
if (!loaderFree) registerTypeScript();
const { main } = await import(sources ? '../cli/main.ts' : '../dist/cli/main.js');
const loading = loaderFree ? { registerTypeScript, resolvePackage: (specifier) => import.meta.resolve(specifier) } : undefined;
process.exitCode = await main(process.argv.slice(2), loading);
