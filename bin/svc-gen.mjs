#!/usr/bin/env node
// The svc-gen command. Runs the TypeScript sources directly (tsx), so that
// `npm ci` is the only setup step, and resolves `svc-gen/*` imports of a
// generated project to this package wherever that project lives on disk.
import { register } from 'node:module';
import { register as registerTsx } from 'tsx/esm/api';

register('../cli/resolve-hook.mjs', import.meta.url);
registerTsx();
const { main } = await import('../cli/main.ts');
process.exitCode = await main(process.argv.slice(2));
