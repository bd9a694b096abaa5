/**
 * `npx tsx bench/jobs/ablate.ts`: what one drained job costs Postgres, by
 * what the worker plane's statements write. On a database of its own (a
 * clone of the jobs fixture's template), one connection runs the plane's own
 * lease (100 jobs) and batched complete (those 100) over ABLATE_JOBS (default
 * 5000) queued jobs, sequentially (no contention: the statements' own cost),
 * and reads its backend's CPU (Linux /proc) and the WAL it wrote
 * (pg_current_wal_insert_lsn over the window: other databases' writes
 * included, so a quiet-ish figure only). Then again with one part taken
 * away at a time, cumulatively, to say what each part costs per job:
 *
 *   full          the statements as they run (Job events, every index, the counts trigger)
 *   -gin          without svc_jobs_payload (GIN on payload: every non-HOT update re-inserts the payload)
 *   -counts       and without the statement-level counts trigger on update (transition tables)
 *   -secondary    and without the other secondary indexes the updates maintain
 *                 (svc_jobs_tenant_recent, svc_jobs_tenant_status, svc_jobs_finished, svc_jobs_lease_deadline)
 *   -events       and without the Job events (the statements' texts under a history policy that drops them)
 *
 * The last line is close to what graphile-worker pays (one job row, its index
 * entries, no log); the steps between are what svc-gen pays that it does not.
 */
import pg from 'pg';
import { createEventStore } from '../../runtime/events/index.ts';
import { newId } from '../../runtime/ids.ts';
import { workerStatementTexts } from '../../runtime/jobs/plane.ts';
import { hashToken } from '../../runtime/jobs/workers.ts';
import { createTestDatabase } from '../../test/helpers/db.ts';
import { DEFAULT_FIXTURE } from '../../test/helpers/fixtures.ts';
import { processCpuMs } from '../cpu.ts';

const JOBS = Number(process.env.ABLATE_JOBS ?? 5000);
const BATCH = 100;
const ROUNDS = Number(process.env.ABLATE_ROUNDS ?? 2);

const database = await createTestDatabase('h_perf_ablate', { fixture: DEFAULT_FIXTURE });
const client = new pg.Client({ connectionString: database.url, application_name: 'ablate' });
await client.connect();
const token = `wkr_${newId()}`;
await client.query(`insert into svc_worker_tokens (id, name, queues, token_hash) values ($1, 'ablate', array['bench'], $2)`,
  [newId(), hashToken(token)]);
const who = hashToken(token);
const { rows: [{ pid }] } = await client.query<{ pid: number }>('select pg_backend_pid() as pid');

const full = workerStatementTexts(createEventStore(client as never));
const noEvents = workerStatementTexts(createEventStore(client as never, { policy: 'off', retainDays: 30, models: new Set(['Job']) }));

async function seed(): Promise<void> {
  const prefix = newId().slice(0, 16);
  await client.query(`insert into svc_jobs (id, queue, kind, payload, max_attempts, priority, tenant_id, created_by)
    select $1 || lpad(i::text, 10, '0'), 'bench', 'noop', jsonb_build_object('n', i), 5, 0, null, 'bench'
      from generate_series(1, $2::int) i`, [prefix, JOBS]);
  await client.query(`delete from svc_jobs where status = 'succeeded'`);
  await client.query('vacuum analyze svc_jobs');
  await client.query('vacuum analyze svc_events');
}

async function drain(texts: typeof full, variant: string): Promise<{ cpuUs: number; walBytes: number; statements: number }> {
  await seed();
  const cpu = processCpuMs(pid)!;
  const { rows: [{ lsn: before }] } = await client.query<{ lsn: string }>('select pg_current_wal_insert_lsn()::text as lsn');
  let statements = 0;
  let done = 0;
  for (;;) {
    const lease = await client.query<{ id: string | null; lease_id: string }>({
      name: `lease_${variant}`, text: texts.lease.text,
      values: texts.lease.values({ who, queues: ['bench'], capacity: BATCH, visibilitySecs: 60, eventIds: Array.from({ length: BATCH }, () => newId()) }),
    });
    statements++;
    const leased = lease.rows.filter((row) => row.id !== null);
    if (leased.length === 0) break;
    leased.sort((a, b) => (a.id! < b.id! ? -1 : 1));
    await client.query({
      name: `complete_${variant}`, text: texts.complete.text,
      values: texts.complete.values({
        who, ids: leased.map((row) => row.id!), leaseIds: leased.map((row) => row.lease_id), results: leased.map(() => 'null'),
        eventIds: leased.map(() => newId()),
      }),
    });
    statements++;
    done += leased.length;
  }
  if (done !== JOBS) throw new Error(`${variant}: drained ${done} of ${JOBS}`);
  const cpuMs = processCpuMs(pid)! - cpu;
  const { rows: [{ bytes }] } = await client.query<{ bytes: string }>('select pg_wal_lsn_diff(pg_current_wal_insert_lsn(), $1::pg_lsn)::text as bytes', [before]);
  return { cpuUs: (cpuMs * 1000) / JOBS, walBytes: Number(bytes) / JOBS, statements: statements / JOBS };
}

const steps: Array<{ name: string; texts: typeof full; before?: string }> = [
  { name: 'full', texts: full },
  { name: '-gin', texts: full, before: 'drop index svc_jobs_payload' },
  { name: '-counts', texts: full, before: 'drop trigger svc_jobs_count_update on svc_jobs' },
  { name: '-secondary', texts: full, before: 'drop index svc_jobs_tenant_recent, svc_jobs_tenant_status, svc_jobs_finished, svc_jobs_lease_deadline' },
  { name: '-events', texts: noEvents },
];
try {
  // Warm: the statements prepared and the tables' pages cached before the first measured drain.
  await drain(full, 'full');
  await drain(noEvents, 'events');
  console.log(`Postgres per drained job (lease ${BATCH} + complete ${BATCH}, one connection, ${JOBS} jobs, best of ${ROUNDS}):`);
  console.log(`${'variant'.padEnd(12)} ${'CPU µs/job'.padStart(11)} ${'WAL B/job'.padStart(10)}  statements/job`);
  for (const step of steps) {
    if (step.before) await client.query(step.before);
    const runs = [];
    for (let r = 0; r < ROUNDS; r++) runs.push(await drain(step.texts, step.name === '-events' ? 'events' : 'full'));
    const best = runs.reduce((a, b) => (b.cpuUs < a.cpuUs ? b : a));
    console.log(`${step.name.padEnd(12)} ${best.cpuUs.toFixed(1).padStart(11)} ${best.walBytes.toFixed(0).padStart(10)}  ${best.statements.toFixed(3)}`);
  }
} finally {
  await client.end();
  await database.drop();
}
