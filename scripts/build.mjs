#!/usr/bin/env node
// `npm run build` (and `prepare`, so `npm pack` and `npm ci` build too):
// compile the TypeScript sources into dist/ (JavaScript + declarations), then
// copy the capabilities' SQL migrations beside their compiled code, where
// `new URL('./migrations/', import.meta.url)` looks for them; and build the
// operator console (console/, Vite) into dist/console with precompressed assets.
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const dist = join(root, 'dist');
rmSync(dist, { recursive: true, force: true });

const tsc = join(root, 'node_modules', '.bin', process.platform === 'win32' ? 'tsc.cmd' : 'tsc');
const result = spawnSync(tsc, ['-p', join(root, 'tsconfig.build.json')], { stdio: ['ignore', 2, 2] });
if (result.status !== 0) {
  process.stderr.write(`svc-gen build: tsc failed (exit ${result.status ?? result.signal})\n`);
  process.exit(1);
}

for (const capability of readdirSync(join(root, 'runtime'))) {
  const migrations = join(root, 'runtime', capability, 'migrations');
  if (existsSync(migrations)) cpSync(migrations, join(dist, 'runtime', capability, 'migrations'), { recursive: true });
}
const { buildConsole } = await import('../console/build.mjs');
const { gzipped } = await buildConsole(join(dist, 'console'));
process.stderr.write(`svc-gen build: wrote dist/ (console: ${(gzipped / 1024).toFixed(1)} KiB gzipped)\n`);
