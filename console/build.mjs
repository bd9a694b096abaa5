#!/usr/bin/env node
// Builds the console into OUT (default: dist/console of the package) with Vite,
// then writes a brotli and a gzip sibling of every asset, so that the server
// sends them as they are (runtime/console). Run by scripts/build.mjs.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import { build } from 'vite';

const here = fileURLToPath(new URL('.', import.meta.url));

export async function buildConsole(outDir) {
  // Production whatever the caller's NODE_ENV (vitest sets `test`, which would ship Preact's debug build).
  process.env.NODE_ENV = 'production';
  await build({ configFile: join(here, 'vite.config.ts'), mode: 'production', logLevel: 'warn', build: { outDir } });
  const assets = join(outDir, 'assets');
  let gzipped = 0;
  for (const name of readdirSync(assets)) {
    const raw = readFileSync(join(assets, name));
    const gz = gzipSync(raw, { level: 9 });
    writeFileSync(join(assets, `${name}.gz`), gz);
    writeFileSync(join(assets, `${name}.br`), brotliCompressSync(raw, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }));
    gzipped += gz.length;
  }
  return { gzipped };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const out = process.argv[2] ?? join(here, '..', 'dist', 'console');
  const { gzipped } = await buildConsole(out);
  process.stderr.write(`svc-gen build: wrote ${out} (${(gzipped / 1024).toFixed(1)} KiB gzipped)\n`);
}
