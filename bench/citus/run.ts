/**
 * `npm run bench:cursor` (ADR 025): what a per-tenant gapless feed position
 * costs a create, beside today's global feed order, on the same clock.
 *
 * Each create is the runtime's create transaction (the model row, its first
 * event and its audit entry in one statement, as runtime/records writes it)
 * at 16 and 64 concurrent connections, with writes spread over 1,000 tenants
 * or all on one tenant (the sentinel of a single-tenant deployment):
 *
 *   global       today: the feed orders by (tx, seq), pg_current_xact_id() and a sequence
 *   tenant-last  the issue's form: a head row per tenant bumped by the
 *                transaction's last statement, which stamps the event's tenant_seq
 *   tenant-cte   the head row bumped inside the create statement itself
 *
 * Rounds alternate the variants (BENCH_ROUNDS, default 3, of BENCH_SECONDS,
 * default 5, per cell); the table shows each cell's median creates/s and its
 * ratio to `global` in the same column. Tables are emptied before every cell.
 * The database (citus_bench_*) is dropped at the end.
 *
 * Then the shipped part (shipped.ts): the runtime's own create in both feed
 * modes, with the feed lag per mode. BENCH_PART=model|shipped runs one part.
 */
import pg from 'pg';
import { ulid } from 'ulid';
import { admin, databaseUrl } from '../../test/helpers/db.ts';
import { benchShipped } from './shipped.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const CONNECTIONS = [16, 64];
const SPREADS = [{ name: '1,000 tenants', tenants: 1000 }, { name: 'one tenant', tenants: 1 }];
const VARIANTS = ['global', 'tenant-last', 'tenant-cte'] as const;
type Variant = (typeof VARIANTS)[number];

const SCHEMA = `
create table deal (
  id text primary key, tenant_id text not null,
  created_at timestamptz not null default now(), updated_at timestamptz not null default now(), deleted_at timestamptz,
  title text not null, amount double precision);
create index deal_tenant_id_idx on deal (tenant_id);
create table svc_events (
  seq bigserial primary key, id text not null unique, stream_type text not null, stream_id text not null,
  version integer not null, event_type text not null, data jsonb, actor_id text, tenant_id text not null,
  occurred_at timestamptz not null default now(), tx xid8 not null default pg_current_xact_id(),
  tenant_seq bigint,
  constraint svc_events_stream_version unique (stream_type, stream_id, version));
create index svc_events_type_seq on svc_events (stream_type, seq);
create index svc_events_tx_seq on svc_events (tx, seq);
create unique index svc_events_tenant_seq on svc_events (tenant_id, tenant_seq);
create table svc_audit (
  id bigint generated always as identity primary key, occurred_at timestamptz not null default now(),
  tenant_id text not null, actor_kind text not null, actor_id text, actor_role text, action text not null,
  entity_type text, entity_id text, event_id text, outcome text not null, changes jsonb);
create index svc_audit_tenant_id on svc_audit (tenant_id, id);
create index svc_audit_entity on svc_audit (tenant_id, entity_type, entity_id, id);
create index svc_audit_actor on svc_audit (tenant_id, actor_id, id);
create table svc_tenant_heads (tenant_id text primary key, last_seq bigint not null);
`;

/** The create statement; `head` adds the head-row bump as a CTE that stamps the event. */
function createText(head: boolean): string {
  return `with ${head ? `h as (insert into svc_tenant_heads (tenant_id, last_seq) values ($3, 1)
      on conflict (tenant_id) do update set last_seq = svc_tenant_heads.last_seq + 1 returning last_seq),` : ''}
    created as (insert into deal (id, tenant_id, title, amount) values ($1, $3, $4, $5) returning *),
    appended as (insert into svc_events (id, stream_type, stream_id, version, event_type, data, actor_id, tenant_id${head ? ', tenant_seq' : ''})
      select $2, 'Deal', c.id, 1, 'created', to_jsonb(c), $6, c.tenant_id${head ? ', (select last_seq from h)' : ''} from created c)
    insert into svc_audit (tenant_id, actor_kind, actor_id, actor_role, action, entity_type, entity_id, event_id, outcome, changes)
      select c.tenant_id, 'user', $6, 'Admin', 'record.create', 'Deal', c.id, $2, 'success',
             jsonb_build_object('title', c.title, 'amount', c.amount) from created c`;
}

const CREATE = createText(false);
const CREATE_WITH_HEAD = createText(true);
const BUMP_LAST = `with h as (insert into svc_tenant_heads (tenant_id, last_seq) values ($1, 1)
    on conflict (tenant_id) do update set last_seq = svc_tenant_heads.last_seq + 1 returning last_seq)
  update svc_events set tenant_seq = h.last_seq from h where svc_events.id = $2 and svc_events.tenant_id = $1`;

async function createOnce(client: pg.PoolClient, variant: Variant, tenant: string): Promise<void> {
  const eventId = ulid();
  const values = [ulid(), eventId, tenant, 'A deal', 1200, 'user-1'];
  await client.query('begin');
  try {
    await client.query({ name: `create_${variant === 'tenant-cte'}`, text: variant === 'tenant-cte' ? CREATE_WITH_HEAD : CREATE, values });
    if (variant === 'tenant-last') await client.query({ name: 'bump_last', text: BUMP_LAST, values: [tenant, eventId] });
    await client.query('commit');
  } catch (error) {
    await client.query('rollback');
    throw error;
  }
}

interface Cell { readonly rate: number; readonly p99: number }

async function runCell(pool: pg.Pool, variant: Variant, connections: number, tenants: number): Promise<Cell> {
  await pool.query('truncate deal, svc_events, svc_audit; truncate svc_tenant_heads');
  await pool.query('checkpoint');
  const until = performance.now() + SECONDS * 1000;
  const latencies: number[] = [];
  let n = 0;
  const worker = async (w: number) => {
    const client = await pool.connect();
    try {
      for (let i = 0; performance.now() < until; i++) {
        const tenant = tenants === 1 ? '_global' : `tenant-${(w * 7919 + i * 104729) % tenants}`;
        const started = performance.now();
        await createOnce(client, variant, tenant);
        latencies.push(performance.now() - started);
        n++;
      }
    } finally {
      client.release();
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: connections }, (_, w) => worker(w)));
  const elapsed = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  return { rate: n / elapsed, p99: latencies[Math.floor(latencies.length * 0.99)] ?? 0 };
}

/** Checks the per-tenant positions the run wrote: gapless 1..n per tenant. */
async function gapless(pool: pg.Pool): Promise<boolean> {
  const { rows } = await pool.query(`select count(*)::int as bad from (
      select tenant_id, count(*) as n, max(tenant_seq) as top, count(distinct tenant_seq) as d from svc_events group by tenant_id) s
    where n <> top or n <> d`);
  return rows[0].bad === 0;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function main(): Promise<void> {
  const name = `citus_bench_${Date.now()}`;
  await admin((c) => c.query(`create database "${name}"`));
  // The connections are opened once and kept (no idle timeout): the server is shared, and a
  // cell must not fail half-way for a connection another process took meanwhile.
  const pool = new pg.Pool({ connectionString: databaseUrl(name), max: Math.max(...CONNECTIONS), idleTimeoutMillis: 0 });
  try {
    const held = await Promise.all(Array.from({ length: Math.max(...CONNECTIONS) }, () => pool.connect()));
    for (const client of held) client.release();
    await pool.query(SCHEMA);
    const results = new Map<string, Cell[]>();
    for (let round = 1; round <= ROUNDS; round++) {
      for (const spread of SPREADS) {
        for (const connections of CONNECTIONS) {
          for (const variant of VARIANTS) {
            const cell = await runCell(pool, variant, connections, spread.tenants);
            if (variant !== 'global' && !(await gapless(pool))) throw new Error(`${variant}: tenant_seq has a gap or a repeat`);
            const key = `${spread.name}|${connections}|${variant}`;
            results.set(key, [...(results.get(key) ?? []), cell]);
            process.stderr.write(`round ${round} ${key}: ${cell.rate.toFixed(0)}/s p99 ${cell.p99.toFixed(1)} ms\n`);
          }
        }
      }
    }
    print(results);
  } finally {
    await pool.end();
    await admin((c) => c.query(`drop database if exists "${name}" with (force)`));
  }
}

function print(results: Map<string, Cell[]>): void {
  console.log(`\ncreates/s, median of ${ROUNDS} rounds of ${SECONDS} s (p99 ms), ratio to global in the same column`);
  console.log('| writes | variant | c=16 | c=64 |');
  console.log('| --- | --- | ---: | ---: |');
  for (const spread of SPREADS) {
    for (const variant of VARIANTS) {
      const cells = CONNECTIONS.map((c) => {
        const rate = median(results.get(`${spread.name}|${c}|${variant}`)!.map((x) => x.rate));
        const p99 = median(results.get(`${spread.name}|${c}|${variant}`)!.map((x) => x.p99));
        const base = median(results.get(`${spread.name}|${c}|global`)!.map((x) => x.rate));
        return `${rate.toFixed(0)} (${p99.toFixed(1)}) ${(rate / base).toFixed(2)}x`;
      });
      console.log(`| ${spread.name} | ${variant} | ${cells.join(' | ')} |`);
    }
  }
}

// BENCH_PART: `model` (the statements above), `shipped` (the runtime itself: shipped.ts), or both (default).
const part = process.env.BENCH_PART ?? 'both';
process.stderr.write(`load: ${(await import('node:os')).loadavg().map((x) => x.toFixed(2)).join(' ')} (1, 5, 15 min) on ${(await import('node:os')).cpus().length} cores\n`);
if (part !== 'shipped') await main();
if (part !== 'model') await benchShipped();
process.stderr.write(`load after: ${(await import('node:os')).loadavg().map((x) => x.toFixed(2)).join(' ')}\n`);
