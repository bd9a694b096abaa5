/**
 * What closing pooled connections together costs the machine (ADR 001, "Pools
 * shrink one connection at a time"): N connections, each warmed by a catalog
 * query, are ended all at once or one every 20 ms, while an idle process
 * beside them reports the longest its event loop waited. Rounds alternate.
 *
 *   npx tsx bench/db/teardown.ts        BENCH_CONNECTIONS (19), BENCH_ROUNDS (3), DATABASE_URL
 */
import { spawn } from 'node:child_process';
import pg from 'pg';

const URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const N = Number(process.env.BENCH_CONNECTIONS ?? 19);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);

// The idle bystander: answers each line on stdin with its longest event-loop delay since the last one.
const bystander = spawn(process.execPath, ['-e', `
  const { monitorEventLoopDelay } = require('node:perf_hooks');
  const h = monitorEventLoopDelay({ resolution: 2 }); h.enable();
  process.stdin.on('data', () => { console.log((h.max / 1e6).toFixed(1)); h.reset(); });`], { stdio: ['pipe', 'pipe', 'inherit'] });
const ask = () => new Promise<number>((resolve) => {
  bystander.stdout!.once('data', (data) => resolve(Number(String(data).trim())));
  bystander.stdin!.write('?\n');
});
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function round(mode: 'together' | 'spaced'): Promise<{ ms: number; stall: number }> {
  const clients = Array.from({ length: N }, () => new pg.Client({ connectionString: URL }));
  await Promise.all(clients.map((c) => c.connect()));
  await Promise.all(clients.map((c) => c.query(`select count(*) from pg_class join pg_attribute on attrelid = pg_class.oid`)));
  await pause(500);
  await ask();
  const started = performance.now();
  if (mode === 'together') await Promise.all(clients.map((c) => c.end()));
  else for (const c of clients) { await c.end(); await pause(20); }
  const ms = performance.now() - started;
  await pause(300);
  return { ms, stall: await ask() };
}

await pause(300);
console.log(`${N} connections ended, ${ROUNDS} rounds each\n\nmode      end ms  bystander's longest wait ms`);
for (let i = 0; i < ROUNDS; i++) {
  for (const mode of ['together', 'spaced'] as const) {
    const { ms, stall } = await round(mode);
    console.log(`${mode.padEnd(8)}  ${ms.toFixed(0).padStart(6)}  ${stall.toFixed(1).padStart(8)}`);
  }
}
bystander.kill();
