/**
 * `npx tsx bench/performance/statements.ts`: what one GraphQL create costs
 * in statements, this checkout against BENCH_BEFORE (another built checkout),
 * each installed on a database of its own: BENCH_CREATES creates,
 * BENCH_CONCURRENCY at once,
 * then pg_stat_statements of each database (needs `shared_preload_libraries =
 * 'pg_stat_statements'`): calls per create and server time per create by
 * statement, the service's own background work included.
 */
import { resolve } from 'node:path';
import pg from 'pg';
import { CREATE_BODY, RECORDS_SCHEMA, startInstalled, type InstalledService } from './installed.ts';

const CREATES = Number(process.env.BENCH_CREATES ?? 2000);
/** Clients sending creates at once (BENCH_CONCURRENCY, default 1: sequential). */
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 1);

async function measure(label: string, service: InstalledService): Promise<void> {
  await service.pool.query('create extension if not exists pg_stat_statements');
  const headers = { authorization: `Bearer ${await service.token('Sales', 'bench')}`, 'content-type': 'application/json' };
  for (let i = 0; i < 200; i++) await fetch(`${service.url}/graphql`, { method: 'POST', headers, body: CREATE_BODY }).then((r) => r.text());
  await service.pool.query('select pg_stat_statements_reset()');
  const started = performance.now();
  let sent = 0;
  await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
    while (sent++ < CREATES) {
      const r = await fetch(`${service.url}/graphql`, { method: 'POST', headers, body: CREATE_BODY });
      if (r.status !== 200) throw new Error(`${label}: ${r.status}`);
      await r.text();
    }
  }));
  const ms = performance.now() - started;
  const { rows } = await service.pool.query<{ calls: string; ms: string; query: string }>(`
    select s.calls::text, round(s.total_exec_time::numeric, 1)::text as ms, regexp_replace(s.query, '\\s+', ' ', 'g') as query
      from pg_stat_statements s join pg_database d on d.oid = s.dbid
     where d.datname = current_database() and s.query not ilike '%pg_stat_statements%'
     order by s.total_exec_time desc`);
  const calls = rows.reduce((n, r) => n + Number(r.calls), 0);
  const server = rows.reduce((n, r) => n + Number(r.ms), 0);
  console.log(`\n${label}: ${CREATES} creates (${CONCURRENCY} at once) in ${(ms / 1000).toFixed(1)} s (${(ms / CREATES).toFixed(2)} ms each); `
    + `${(calls / CREATES).toFixed(2)} statements and ${(server / CREATES * 1000).toFixed(0)} µs of server time per create`);
  for (const r of rows.slice(0, 14)) {
    console.log(`  ${(Number(r.calls) / CREATES).toFixed(2).padStart(6)} calls  ${(Number(r.ms) / CREATES * 1000).toFixed(0).padStart(5)} µs  ${r.query.slice(0, 150)}`);
  }
}

const before = process.env.BENCH_BEFORE ? resolve(process.env.BENCH_BEFORE) : undefined;
const now = await startInstalled(RECORDS_SCHEMA, { SVC_DB_POOL_SIZE: '8' });
const then = before ? await startInstalled(RECORDS_SCHEMA, { SVC_DB_POOL_SIZE: '8' }, before) : undefined;
try {
  await measure('this checkout', now);
  if (then) await measure(`before (${before})`, then);
} finally {
  await now.stop();
  await then?.stop();
}
