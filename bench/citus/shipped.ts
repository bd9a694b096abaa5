/**
 * `npm run bench:cursor`, the shipped part (ADR 025 decision 4): the
 * runtime's own create (`ctx.services.records.create`, in process: the
 * one-statement create with its event and audit entry, and in tenant mode
 * the head bump `svc_tenant_seq_next` in that statement) on two services
 * side by side, one per feed mode (`SVC_FEED_CURSOR=global|tenant`), each on
 * its own database, at 16 and 64 concurrent creates, over 1,000 tenants or
 * one (the global scope, a single-tenant deployment's sentinel). Rounds
 * alternate the modes on the same clock.
 *
 * Feed lag: a live subscriber on each service receives every create; lag is
 * delivery time minus the event's `occurred_at` (its transaction's start),
 * p50/p99 per cell, and every run checks that each create was delivered once.
 */
import { resolve } from 'node:path';
import { createTestDatabase, type TestDatabase } from '../../test/helpers/db.ts';
import { startTestService, type TestService } from '../../test/helpers/service.ts';
import { TenantScope } from '../../runtime/tenancy/index.ts';
import type { Caller } from '../../runtime/records/index.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const CONNECTIONS = [16, 64];
const SPREADS = [{ name: '1,000 tenants', tenants: 1000 }, { name: 'one tenant', tenants: 1 }];
const MODES = ['global', 'tenant'] as const;
type Mode = (typeof MODES)[number];

interface Cell { readonly rate: number; readonly p99: number; readonly lagP50: number; readonly lagP99: number }

const callers = new Map<string, Caller>();
function callerOf(tenant: string | null): Caller {
  const key = tenant ?? '';
  let caller = callers.get(key);
  if (!caller) {
    caller = { principal: { userId: 'bench', role: 'Admin', tenantId: tenant, sessionId: null, email: null }, scope: TenantScope.of(tenant) };
    callers.set(key, caller);
  }
  return caller;
}

const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))] ?? 0;

async function runCell(svc: TestService, connections: number, tenants: number): Promise<Cell> {
  const records = svc.ctx.services.records;
  const created = new Set<string>();
  const lags: number[] = [];
  let delivered = 0;
  const subscription = svc.ctx.services.feed.subscribe({ streams: ['Item'], maxQueued: 1_000_000 });
  const draining = (async () => {
    for await (const change of subscription) {
      lags.push(Date.now() - Date.parse(change.occurredAt));
      delivered++;
      if (created.has(change.recordId)) created.delete(change.recordId);
      else created.add(change.recordId); // delivered before its create returned
    }
  })();
  const until = performance.now() + SECONDS * 1000;
  const latencies: number[] = [];
  let n = 0;
  const worker = async (w: number) => {
    for (let i = 0; performance.now() < until; i++) {
      const tenant = tenants === 1 ? null : `tenant-${(w * 7919 + i * 104729) % tenants}`;
      const started = performance.now();
      const row = await records.create(callerOf(tenant), 'Item', { name: 'bench', price: 1 });
      latencies.push(performance.now() - started);
      if (created.has(row.id as string)) created.delete(row.id as string);
      else created.add(row.id as string);
      n++;
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: connections }, (_, w) => worker(w)));
  const elapsed = (performance.now() - started) / 1000;
  const deadline = Date.now() + 60_000;
  while (delivered < n && Date.now() < deadline) await new Promise((done) => setTimeout(done, 20));
  subscription.close();
  await draining;
  if (delivered !== n || created.size !== 0) throw new Error(`feed delivered ${delivered} of ${n} creates (${created.size} unmatched)`);
  latencies.sort((a, b) => a - b);
  lags.sort((a, b) => a - b);
  return { rate: n / elapsed, p99: quantile(latencies, 0.99), lagP50: quantile(lags, 0.5), lagP99: quantile(lags, 0.99) };
}

/** tenant_seq gapless per tenant (1..n, no repeat) in tenant mode; never written in global mode. */
async function checkPositions(svc: TestService, mode: Mode): Promise<void> {
  const row = await svc.ctx.db.one(`select
      count(*) filter (where tenant_seq is not null)::int as stamped, count(*)::int as total,
      (select count(*)::int from (select tenant_id, count(*) as n, max(tenant_seq) as top, count(distinct tenant_seq) as d
         from svc_events group by tenant_id) s where n <> top or n <> d) as bad
    from svc_events`);
  if (mode === 'tenant' && (row.stamped !== row.total || row.bad !== 0)) throw new Error(`tenant mode: positions not gapless (${JSON.stringify(row)})`);
  if (mode === 'global' && row.stamped !== 0) throw new Error('global mode wrote tenant positions');
}

export async function benchShipped(): Promise<void> {
  const databases: TestDatabase[] = [];
  const services = new Map<Mode, TestService>();
  try {
    for (const mode of MODES) {
      const database = await createTestDatabase('svc_bench_cursor');
      databases.push(database);
      services.set(mode, await startTestService({
        fixture: resolve(import.meta.dirname, '..', 'records', 'schema.ts'),
        database,
        env: { SVC_FEED_CURSOR: mode, RATE_LIMIT_RPS: '10000000', SVC_DB_POOL_SIZE: String(Math.max(...CONNECTIONS)), SVC_LOG_LEVEL: 'error' },
      }));
    }
    for (const [mode, svc] of services) if (svc.ctx.services.feed.mode !== mode) throw new Error(`${mode}: the service runs ${svc.ctx.services.feed.mode}`);
    const results = new Map<string, Cell[]>();
    for (let round = 1; round <= ROUNDS; round++) {
      for (const spread of SPREADS) {
        for (const connections of CONNECTIONS) {
          for (const mode of MODES) {
            const svc = services.get(mode)!;
            await svc.ctx.db.none('checkpoint');
            const cell = await runCell(svc, connections, spread.tenants);
            const key = `${spread.name}|${connections}|${mode}`;
            results.set(key, [...(results.get(key) ?? []), cell]);
            process.stderr.write(`shipped round ${round} ${key}: ${cell.rate.toFixed(0)}/s p99 ${cell.p99.toFixed(1)} ms, lag p50 ${cell.lagP50} p99 ${cell.lagP99} ms\n`);
          }
        }
      }
    }
    for (const [mode, svc] of services) await checkPositions(svc, mode);
    print(results);
  } finally {
    for (const svc of services.values()) await svc.close();
    for (const database of databases) await database.drop();
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

function print(results: Map<string, Cell[]>): void {
  console.log(`\nshipped: records.create in process, creates/s (p99 ms), ratio to global in the same column; feed lag p50/p99 ms; median of ${ROUNDS} rounds of ${SECONDS} s`);
  console.log('| writes | mode | c=16 | c=64 | lag c=16 | lag c=64 |');
  console.log('| --- | --- | ---: | ---: | ---: | ---: |');
  for (const spread of SPREADS) {
    for (const mode of MODES) {
      const cells = CONNECTIONS.map((c) => results.get(`${spread.name}|${c}|${mode}`)!);
      const rates = CONNECTIONS.map((c, i) => {
        const rate = median(cells[i].map((x) => x.rate));
        const base = median(results.get(`${spread.name}|${c}|global`)!.map((x) => x.rate));
        return `${rate.toFixed(0)} (${median(cells[i].map((x) => x.p99)).toFixed(1)}) ${(rate / base).toFixed(2)}x`;
      });
      const lags = cells.map((cell) => `${median(cell.map((x) => x.lagP50))}/${median(cell.map((x) => x.lagP99))}`);
      console.log(`| ${spread.name} | ${mode} | ${rates.join(' | ')} | ${lags.join(' | ')} |`);
    }
  }
}
