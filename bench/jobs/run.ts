/**
 * `npm run bench:jobs`: svc-gen's job queue against pg-boss and graphile-worker
 * on the same Postgres, each on a fresh database, in one run.
 *
 *   enqueue: ENQUEUE single jobs, 16 at a time (svc-gen over HTTP POST /jobs).
 *   drain:   DRAIN no-op jobs enqueued in bulk beforehand; svc-gen with WORKERS
 *            SDK workers (capacity 50) over HTTP in a separate process, pg-boss
 *            in process with batches of 50, graphile-worker in process with
 *            concurrency 8.
 */
import { startGraphile, startPgBoss, type Baseline } from './baselines.ts';
import { freshDatabase, rate } from './measure.ts';
import { startSvc } from './svc.ts';

const ENQUEUE = Number(process.env.BENCH_ENQUEUE ?? 2000);
const DRAIN = Number(process.env.BENCH_DRAIN ?? 10_000);
const WORKERS = Number(process.env.BENCH_WORKERS ?? 4);

interface Row {
  name: string;
  enqueue: number;
  drain: number;
}

async function benchSvc(): Promise<Row> {
  const svc = await startSvc();
  try {
    const enqueueMs = await svc.enqueueHttp(ENQUEUE, 16);
    await svc.enqueueBulk(DRAIN);
    const drainMs = await svc.drain(DRAIN, WORKERS, 50);
    return { name: `svc-gen (HTTP, ${WORKERS} SDK workers x 50)`, enqueue: rate(ENQUEUE, enqueueMs), drain: rate(DRAIN, drainMs) };
  } finally {
    await svc.close();
  }
}

async function benchBaseline(name: string, start: (url: string) => Promise<Baseline>): Promise<Row> {
  const database = await freshDatabase();
  try {
    const baseline = await start(database.url);
    try {
      const enqueueMs = await baseline.enqueue(ENQUEUE, 16);
      await baseline.bulk(DRAIN);
      const drainMs = await baseline.drain(DRAIN);
      return { name, enqueue: rate(ENQUEUE, enqueueMs), drain: rate(DRAIN, drainMs) };
    } finally {
      await baseline.close();
    }
  } finally {
    await database.drop();
  }
}

function print(rows: Row[]): void {
  const [svc, boss, graphile] = rows;
  const pad = (s: string | number, n: number) => String(s).padStart(n);
  console.log(`\njobs benchmark: enqueue ${ENQUEUE} (16 concurrent), drain ${DRAIN} no-op jobs\n`);
  console.log(`${'system'.padEnd(40)}${pad('enqueue jobs/s', 16)}${pad('drain jobs/s', 14)}`);
  for (const row of rows) console.log(`${row.name.padEnd(40)}${pad(row.enqueue, 16)}${pad(row.drain, 14)}`);
  const ratio = (a: number, b: number) => `${(a / b).toFixed(2)}x`;
  console.log(`\nsvc-gen / graphile-worker: enqueue ${ratio(svc.enqueue, graphile.enqueue)}, drain ${ratio(svc.drain, graphile.drain)}`);
  console.log(`svc-gen / pg-boss:         enqueue ${ratio(svc.enqueue, boss.enqueue)}, drain ${ratio(svc.drain, boss.drain)}`);
}

// BENCH_ONLY=svc runs svc-gen alone (for profiling); the comparison needs all three.
const only = process.env.BENCH_ONLY;
const started = Date.now();
const rows = [await benchSvc()];
if (only !== 'svc') {
  rows.push(await benchBaseline('pg-boss 12 (in process, batch 50)', startPgBoss));
  rows.push(await benchBaseline('graphile-worker (in process, conc. 8)', startGraphile));
  print(rows);
} else {
  console.log(rows);
}
console.log(`\n(total ${((Date.now() - started) / 1000).toFixed(1)} s)`);
process.exit(0);
