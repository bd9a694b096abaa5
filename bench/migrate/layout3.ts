/**
 * `npx tsx bench/migrate/layout3.ts`: the layout-3 conversion (ADR 025) of a
 * deployed layout-2 project, applied by the runner under live traffic. The
 * project is fixtures/layout-2/history (Company, Contact -> Company, Deal ->
 * Company), its tables seeded with rows of 100 tenants and of the global scope
 * (null tenant), then today's generator builds the conversion and `migrate`
 * applies it while clients read and write single rows by (tenant_id, id), as
 * the runtime does, and one writer inserts global-scope rows with a null tenant
 * as an instance of the previous build does. Per step: its kind, duration, the
 * worst wait of any client statement while it ran, failed client statements.
 *
 *   BENCH_ROWS (1,000,000)   contacts; deals are half as many
 *   BENCH_CLIENTS (8)        client connections, half reads, half single-row writes
 *   BENCH_DB (layout3_bench) the database, created and dropped
 */
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { build } from '../../generator/index.ts';
import { runMigrations, type MigrationSet } from '../../runtime/db/migrate/index.ts';
import pgPromise from '../../runtime/db/pg-promise.ts';
import { admin, databaseUrl } from '../../test/helpers/db.ts';
import { REPO_ROOT } from '../../test/helpers/fixtures.ts';
import { connect, impact, type Sample } from './traffic.ts';

const ROWS = Number(process.env.BENCH_ROWS ?? 1_000_000);
const CLIENTS = Number(process.env.BENCH_CLIENTS ?? 8);
const NAME = process.env.BENCH_DB ?? 'layout3_bench';
const say = (line: string) => void process.stderr.write(`${line}\n`);
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

/** Contact i: tenant t(i % 100), or the global scope (null) for 3 in 10. */
const SEED = `
  insert into "company" ("id", "name", "tenant_id")
    select 'c' || lpad(i::text, 4, '0'), 'Company ' || i, case when i < 100 then 't' || i end from generate_series(0, 199) i;
  insert into "contact" ("id", "email", "name", "company_id", "tenant_id")
    select lpad(to_hex(i), 26, '0'), 'p' || i || '@x.io', 'n', case when i % 10 < 3 then 'c0100' else 'c' || lpad((i % 100)::text, 4, '0') end,
           case when i % 10 >= 3 then 't' || (i % 100) end
      from generate_series(1, ${ROWS}) i;
  insert into "deal" ("id", "name", "company_id", "tenant_id", "probability")
    select lpad(to_hex(i), 26, '0'), 'd', case when i % 10 < 3 then 'c0100' else 'c' || lpad((i % 100)::text, 4, '0') end,
           case when i % 10 >= 3 then 't' || (i % 100) end, 0
      from generate_series(1, ${ROWS / 2}) i`;

function traffic(clients: readonly pg.Client[], oldWriter: pg.Client) {
  const samples: Sample[] = [];
  let running = true;
  const record = async (work: () => Promise<unknown>) => {
    const start = performance.now();
    let ok = true;
    try {
      await work();
    } catch {
      ok = false;
    }
    samples.push({ start, end: performance.now(), ok });
  };
  const loops = clients.map(async (client, c) => {
    for (let i = 0; running; i++) {
      let n = 1 + Math.floor(Math.random() * ROWS);
      if (n % 10 < 3) n += 3; // a tenant's row
      const args = [`t${n % 100}`, n.toString(16).padStart(26, '0')];
      await record(() => ((i + c) % 2 === 0
        ? client.query('select * from "contact" where "tenant_id" = $1 and "id" = $2', args)
        : client.query('update "contact" set "name" = "name" || \'\' where "tenant_id" = $1 and "id" = $2', args)));
    }
  });
  let written = 0;
  const old = (async () => {
    for (let i = 0; running; i++) {
      await record(() => oldWriter.query(`insert into "deal" ("id", "name", "company_id", "probability") values ($1, 'old', 'c0100', 0)`, [`old-${i}`]));
      written++;
    }
  })();
  return {
    samples,
    async stop() {
      running = false;
      await Promise.all([...loops, old]);
      return written;
    },
  };
}

async function main(): Promise<void> {
  await admin(async (c) => {
    await c.query(`drop database if exists "${NAME}" with (force)`);
    await c.query(`create database "${NAME}"`);
  });
  const url = databaseUrl(NAME);
  const db = pgPromise({ noWarnings: true })({ connectionString: url, max: 1, idleTimeoutMillis: 0, application_name: 'bench-runner' });
  const setup = await connect(url, 'bench-setup');
  const clients = await Promise.all(Array.from({ length: CLIENTS }, () => connect(url, 'bench-client')));
  const oldWriter = await connect(url, 'bench-old-instance');
  try {
    const outDir = mkdtempSync(join(tmpdir(), 'layout3-bench-'));
    cpSync(join(REPO_ROOT, 'fixtures', 'layout-2', 'history'), outDir, { recursive: true });
    const realtime = { scope: 'runtime:realtime', dir: join(REPO_ROOT, 'runtime', 'realtime', 'migrations') };
    const sets: MigrationSet[] = [realtime, { scope: 'schema', dir: join(outDir, 'migrations') }];
    await runMigrations(db, sets, {});
    let started = performance.now();
    await setup.query(SEED);
    for (const table of ['company', 'contact', 'deal']) await setup.query(`vacuum (analyze) "${table}"`);
    say(`seeded ${ROWS.toLocaleString('en-US')} contacts, ${(ROWS / 2).toLocaleString('en-US')} deals (3 in 10 global) in ${seconds(performance.now() - started)}`);
    const result = await build({ schemaPath: join(REPO_ROOT, 'fixtures', 'history', 'v4', 'schema.ts'), outDir, name: 'history' });
    if (!('written' in result) || !result.migration) throw new Error(`build failed: ${JSON.stringify(result)}`);
    // Only the expand: the contract (dropping the trigger) waits for the old instance.
    const expand = result.migration.path.slice('migrations/'.length);
    const only = join(mkdtempSync(join(tmpdir(), 'layout3-bench-')), 'migrations');
    cpSync(join(outDir, 'migrations'), only, { recursive: true });
    if (result.contract) rmSync(join(only, result.contract.path.slice('migrations/'.length)));
    const load = traffic(clients, oldWriter);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const epoch = Date.now() - performance.now();
    started = performance.now();
    await runMigrations(db, [realtime, { scope: 'schema', dir: only }], {});
    const ended = performance.now();
    const written = await load.stop();
    const steps = await setup.query<{ step: number; kind: string; description: string; from: number; to: number }>(`
      select step, kind, description, extract(epoch from started_at) * 1000 as from, extract(epoch from done_at) * 1000 as to
        from svc_migration_steps where name = $1 order by step`, [expand]);
    const lost = await setup.query<{ n: number }>(`select (select count(*) from "contact")::int + (select count(*) from "deal")::int as n`);
    const total = impact(load.samples, started, ended);
    process.stdout.write(`\nlayout-3 conversion under load: ${ROWS.toLocaleString('en-US')} contacts, ${(ROWS / 2).toLocaleString('en-US')} deals, ${CLIENTS} clients + 1 old-build writer\n`);
    process.stdout.write(`total ${seconds(ended - started)}, worst client wait ${Math.round(total.worstWaitMs)} ms, longest full stall ${Math.round(total.longestStallMs)} ms, failed client statements ${total.failed} of ${total.statements.toLocaleString('en-US')}; old-build inserts ${written}; rows now ${lost.rows[0].n.toLocaleString('en-US')} (seeded ${(ROWS + ROWS / 2).toLocaleString('en-US')})\n\n`);
    process.stdout.write('| step | kind | what | duration | worst client wait | failed |\n|---:|---|---|---:|---:|---:|\n');
    for (const s of steps.rows) {
      const from = s.from - epoch;
      const to = s.to - epoch;
      const felt = impact(load.samples, from, to);
      process.stdout.write(`| ${s.step} | ${s.kind} | ${s.description} | ${seconds(to - from)} | ${Math.round(felt.worstWaitMs)} ms | ${felt.failed} |\n`);
    }
  } finally {
    await Promise.all([setup, oldWriter, ...clients].map((c) => c.end()));
    await db.$pool.end();
    await admin((c) => c.query(`drop database if exists "${NAME}" with (force)`));
  }
}

await main();
