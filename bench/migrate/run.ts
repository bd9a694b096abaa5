/**
 * `npm run bench:migrate`: each change kind the generator emits, applied to a
 * big table under live traffic, in its safe form (a step-format file run by
 * the migration runner, runtime/db/migrate) and as plain DDL in one
 * transaction, side by side. Per change: duration, the worst wait of any
 * client statement, the longest stretch in which no client finished a
 * statement, and failed client statements.
 *
 *   BENCH_ROWS (10,000,000)   rows of the table, seeded with generate_series
 *   BENCH_CLIENTS (8)         client connections, half reads, half single-row writes
 *   BENCH_CHANGES (all)       semicolon-separated names of the changes to run (changes.ts; names hold commas)
 *   BENCH_SAFE_ONLY (unset)   1: the safe forms only (the plain ones stop every client for minutes)
 *   BENCH_SERVER_LOG (unset)  the server's log file (log_checkpoints on): adds the worst wait outside the
 *                             checkpoints other sessions forced (CREATE/DROP DATABASE on a shared server)
 *
 * The database is `runner_bench` on the local server, dropped at the end.
 */
import { mkdtempSync, mkdirSync, readFileSync, statfsSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { admin, databaseUrl } from '../../test/helpers/db.ts';
import pgPromise from '../../runtime/db/pg-promise.ts';
import { migrate, type MigrateLog } from '../../runtime/db/migrate/index.ts';
import type { Db } from '../../runtime/db/types.ts';
import { CHANGES, type Change } from './changes.ts';
import { connect, impact, startTraffic, type Impact, type Window } from './traffic.ts';

const ROWS = Number(process.env.BENCH_ROWS ?? 10_000_000);
const CLIENTS = Number(process.env.BENCH_CLIENTS ?? 8);
const NAME = 'runner_bench';
/** Bytes a row costs on disk with its indexes and the copies the plain forms make, with margin. */
const BYTES_PER_ROW = 700;
const READER_SECONDS = 10;

const say = (line: string) => void process.stderr.write(`${line}\n`);
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Session {
  readonly url: string;
  readonly clients: readonly pg.Client[];
  readonly reader: pg.Client;
  readonly plain: pg.Client;
  /** The runner's pool (it holds one connection while it runs). */
  readonly runner: Db;
}

interface Row { readonly change: string; readonly form: 'safe' | 'plain'; readonly durationMs: number; readonly impact: Impact; readonly error: string | null }

async function main(): Promise<void> {
  await checkDisk();
  await admin(async (c) => {
    await c.query(`drop database if exists "${NAME}" with (force)`);
    await c.query(`create database "${NAME}"`);
  });
  const url = databaseUrl(NAME);
  // Every connection the bench needs, opened once: the server is shared and may run out of slots.
  const client = await connect(url, 'bench-setup');
  const clients = await Promise.all(Array.from({ length: CLIENTS }, () => connect(url, 'bench-client')));
  const session: Session = { url, clients, reader: await connect(url, 'bench-reader'), plain: await connect(url, 'bench-plain'),
    runner: pgPromise({ noWarnings: true })({ connectionString: url, max: 1, idleTimeoutMillis: 0, application_name: 'bench-runner' }),
  };
  await session.runner.one('select 1');
  try {
    await seed(client);
    const rows: Row[] = [];
    const only = process.env.BENCH_CHANGES?.split(';').map((name) => name.trim());
    for (const change of CHANGES.filter((c) => !only || only.includes(c.name))) {
      if (change.setup) await client.query(change.setup);
      rows.push(await measure(session, change, 'safe'));
      if (change.undo) await client.query(change.undo);
      if (change.plain !== undefined && process.env.BENCH_SAFE_ONLY !== '1') rows.push(await measure(session, change, 'plain'));
      if (change.undo) await client.query(change.undo);
      await client.query('vacuum (analyze) "contact"');
    }
    print(rows);
  } finally {
    await Promise.all([client, session.reader, session.plain, ...clients].map((c) => c.end()));
    await session.runner.$pool.end();
    await admin((c) => c.query(`drop database if exists "${NAME}" with (force)`));
  }
}

async function checkDisk(): Promise<void> {
  const dir = await admin(async (c) => (await c.query<{ d: string }>('select current_setting(\'data_directory\') as d')).rows[0].d).catch(() => '/');
  const stats = statfsSync(dir);
  const free = stats.bavail * stats.bsize;
  const needed = ROWS * BYTES_PER_ROW;
  say(`disk: ${(free / 1e9).toFixed(1)} GB free under ${dir}, about ${(needed / 1e9).toFixed(1)} GB needed for ${ROWS.toLocaleString('en-US')} rows`);
  if (free < needed) throw new Error(`not enough free disk for BENCH_ROWS=${ROWS}: set a smaller BENCH_ROWS`);
}

/** A table like a generated model's: text ulid-like id, tenant, data columns; the primary key built after the rows. */
async function seed(client: pg.Client): Promise<void> {
  const started = performance.now();
  await client.query(`create table "company" ("id" text primary key, "tenant_id" text not null, "name" text not null);
    insert into "company" select 'c' || g, 't' || (g % 100), 'Company ' || g from generate_series(0, 999) g;
    create table "contact" (
      "id" text not null, "tenant_id" text not null, "email" text not null, "name" text not null,
      "n" integer not null, "company_id" text, "created_at" timestamptz not null default now(),
      "kind_safe" text, "kind_plain" text, "kind_paced" text, "kind_unthrottled" text
    )`);
  await client.query(`insert into "contact" ("id", "tenant_id", "email", "name", "n", "company_id")
    select lpad(to_hex(g), 26, '0'), 't' || (g % 100), 'user' || g || '@example.com', 'Name ' || g, g, 'c' || (g % 1000)
      from generate_series(1, ${ROWS}) g`);
  await client.query('alter table "contact" add primary key ("id")');
  await client.query('vacuum (analyze) "contact"');
  const size = await client.query<{ size: string }>(`select pg_size_pretty(pg_total_relation_size('contact')) as size`);
  say(`seeded ${ROWS.toLocaleString('en-US')} rows in ${seconds(performance.now() - started)} (generate_series, primary key, vacuum analyze): ${size.rows[0].size} on disk`);
}

/** A file of the step format in a folder of its own, applied by the runner under its own scope. */
function safeSet(change: Change): { scope: string; dir: string } {
  const dir = join(mkdtempSync(join(tmpdir(), 'runner-bench-')), 'migrations');
  mkdirSync(dir);
  writeFileSync(join(dir, '0001_change.sql'), change.safe);
  return { scope: `bench:${change.name}`, dir };
}

/** The runner's lines, each with the seconds since the change started (to place the worst wait). */
let appliedFrom = performance.now();
const at = () => `${((performance.now() - appliedFrom) / 1000).toFixed(1)} s`;
const runnerLog: MigrateLog = {
  info: (_d, message) => say(`  ${at()} runner: ${message}`),
  warn: (_d, message) => say(`  ${at()} runner: ${message.length > 300 ? `${message.slice(0, 300)}...` : message}`),
};

async function apply(session: Session, change: Change, form: 'safe' | 'plain'): Promise<void> {
  if (form === 'safe') {
    await migrate(session.runner, [safeSet(change)], { log: runnerLog, settings: change.settings });
    return;
  }
  await session.plain.query(`begin; ${change.plain ?? ''}; commit`).catch(async (error: Error) => {
    await session.plain.query('rollback');
    throw error;
  });
}

/** Holds an ACCESS SHARE lock on the table for READER_SECONDS, like a long report; resolves once it holds it, with its end. */
async function startReader(client: pg.Client): Promise<{ readonly ended: Promise<unknown> }> {
  await client.query('begin');
  await client.query('select "id" from "contact" limit 1');
  return { ended: client.query(`select pg_sleep(${READER_SECONDS})`).then(() => client.query('commit')) };
}

async function measure(session: Session, change: Change, form: 'safe' | 'plain'): Promise<Row> {
  say(`${change.name}, ${form}: ...`);
  const traffic = startTraffic(session.clients, ROWS);
  await pause(1_000); // plans cached, steady state
  const reader = change.reader ? await startReader(session.reader) : null;
  const from = performance.now();
  appliedFrom = from;
  let error: string | null = null;
  await apply(session, change, form).catch((e: Error) => (error = e.message));
  const to = performance.now();
  await reader?.ended;
  await traffic.stop();
  const row: Row = { change: change.name, form, durationMs: to - from, impact: impact(traffic.samples, from, to, forcedCheckpoints()), error };
  say(`${change.name}, ${form}: ${seconds(row.durationMs)}, worst wait ${Math.round(row.impact.worstWaitMs)} ms at ${seconds(row.impact.worstAtMs)} `
    + `${row.impact.worstOutsideMs === null ? '' : `(${Math.round(row.impact.worstOutsideMs)} ms outside forced checkpoints) `}`
    + `(${new Date(Date.now() - (performance.now() - from - row.impact.worstAtMs)).toISOString().slice(11, 23)} UTC, for the server log)${error ? `, migration failed: ${error}` : ''}`);
  return row;
}

const LOG_LINE = /^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+) UTC \[\d+\] LOG: {2}checkpoint (starting: (?:immediate )?force|complete)/;

/** The server's forced checkpoints (`checkpoint starting: immediate force ...` to its `complete`), from BENCH_SERVER_LOG; null without it. */
function forcedCheckpoints(): Window[] | null {
  const file = process.env.BENCH_SERVER_LOG;
  if (!file) return null;
  const windows: Window[] = [];
  let start: number | null = null;
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const m = LOG_LINE.exec(line);
    if (!m) continue;
    const at = Date.parse(`${m[1].replace(' ', 'T')}Z`);
    if (m[2] !== 'complete') start = at;
    else if (start !== null) {
      windows.push({ from: start, to: at });
      start = null;
    }
  }
  if (start !== null) windows.push({ from: start, to: Infinity });
  return windows;
}

function print(rows: readonly Row[]): void {
  const outside = rows.some((r) => r.impact.worstOutsideMs !== null);
  const head = ['change', 'form', 'duration', 'worst client wait', ...(outside ? ['worst outside forced checkpoints'] : []), 'longest full stall', 'failed client stmts', 'client stmts', 'migration'];
  const lines = rows.map((r) => [
    r.change, r.form, seconds(r.durationMs), `${Math.round(r.impact.worstWaitMs)} ms`,
    ...(outside ? [r.impact.worstOutsideMs === null ? '' : `${Math.round(r.impact.worstOutsideMs)} ms`] : []), `${Math.round(r.impact.longestStallMs)} ms`,
    String(r.impact.failed), r.impact.statements.toLocaleString('en-US'), r.error ? `failed: ${r.error.slice(0, 60)}` : 'ok',
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i].length)));
  const render = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i])).join(' | ')} |`;
  process.stdout.write(`\nmigrations under load: ${ROWS.toLocaleString('en-US')} rows, ${CLIENTS} clients (half single-row reads, half single-row writes), Postgres local\n`);
  process.stdout.write(`${render(head)}\n| ${widths.map((w) => '-'.repeat(w)).join(' | ')} |\n${lines.map(render).join('\n')}\n`);
}

await main();
