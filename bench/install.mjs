#!/usr/bin/env node
// The bench scripts' dependencies (baselines and the load generator) live in
// bench/package.json with their own lockfile, so that the root `npm ci` stays
// free of them (several need a newer Node than svc-gen's `engines`). This
// installs them with `npm ci --prefix bench` when bench/node_modules is
// missing or older than the lockfile; otherwise it does nothing. With --dist
// it then compiles svc-gen (`npm run build`): the benches that run svc-gen as
// an installed package start it from dist/, which must be this checkout's.
import { spawnSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const bench = fileURLToPath(new URL('.', import.meta.url));
const lock = `${bench}package-lock.json`;
const installed = `${bench}node_modules/.package-lock.json`;
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
if (!existsSync(installed) || statSync(installed).mtimeMs < statSync(lock).mtimeMs) {
  process.stderr.write('bench: installing the benchmark baselines (npm ci --prefix bench)\n');
  const result = spawnSync(npm, ['ci', '--prefix', bench, '--no-audit', '--no-fund', '--loglevel=error'], { stdio: 'inherit' });
  if (result.status !== 0) process.exit(result.status ?? 1);
}
if (process.argv.includes('--dist')) {
  const result = spawnSync(npm, ['run', 'build', '--silent'], { stdio: 'inherit', cwd: fileURLToPath(new URL('..', import.meta.url)) });
  process.exit(result.status ?? 1);
}
