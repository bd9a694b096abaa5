/**
 * One svc-gen instance in its own process, for bench:feed. argv[2] is the
 * built project; BENCH_RUNTIME (optional) is the folder of the runtime to
 * run (an older checkout, for the "before" figures). Prints `{"url": ...}`;
 * answers `stats` messages on its IPC channel with the feed reader's stats.
 */
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { pino } from 'pino';

const dir = process.argv[2];
const runtimeRoot = resolve(process.env.BENCH_RUNTIME ?? join(import.meta.dirname, '..', '..', 'runtime'));
const { defineService, runService } = await import(pathToFileURL(join(runtimeRoot, 'service', 'index.ts')).href);
const snapshot = JSON.parse(readFileSync(join(dir, 'schema.snapshot.json'), 'utf8'));
const { access } = await import(pathToFileURL(join(dir, 'access.ts')).href);
const { resolvers } = await import(pathToFileURL(join(dir, 'resolvers', 'index.ts')).href);
const definition = defineService({ snapshot, access, resolvers, root: pathToFileURL(`${dir}/`) });
const running = await runService(definition, { port: 0, host: '127.0.0.1', log: pino({ level: 'warn' }) });
process.on('message', (message) => {
  if (message === 'stats') process.send?.({ stats: running.ctx.services.feed?.stats() ?? null });
});
process.stdout.write(`${JSON.stringify({ url: running.url })}\n`);
