/**
 * Drains timed alike for every job system (systems.ts): the system's workers
 * are started in their own process and left idle; the jobs are queued in one
 * commit; the clock runs from that commit until the bench process, counting
 * in the database every POLL_MS, finds none left. CPU is that of the
 * system's processes and its Postgres backends over the same window.
 *
 * The systems are interleaved: in each of `rounds` rounds every system
 * drains once (its workers started afresh, warmed by an unmeasured drain of
 * `warm` jobs), so that the background load of a shared machine falls on all
 * of them alike; medians are reported.
 */
import { consumerArgs, type JobSystem } from './systems.ts';
import { cpuSpent, CpuMeter, spawnChild } from '../performance/processes.ts';

const POLL_MS = 25;
const STALLED_MS = 30_000;
/** A drain this short says little: the sizes are chosen to run longer (see `sizeFor`). */
export const MIN_DRAIN_SECONDS = 3;

export interface Drained {
  readonly jobs: number;
  readonly ms: number;
  /** CPU ms per job: the system's processes and Postgres backends. */
  readonly cpuPerJob: number;
  /** The same by part: its workers' process, its server's (svc-gen), its Postgres backends. */
  readonly parts: { readonly workers: number; readonly server: number; readonly postgres: number };
}

export interface DrainSummary {
  readonly system: JobSystem;
  readonly runs: readonly Drained[];
  /** Median jobs/s over the rounds. */
  readonly rate: number;
  /** Median CPU ms per job. */
  readonly cpuPerJob: number;
  /** The shortest measured drain, in s. */
  readonly shortestSeconds: number;
}

const median = (values: readonly number[]) => [...values].sort((a, b) => a - b)[Math.floor((values.length - 1) / 2)];

async function drainOnce(system: JobSystem, jobs: number, meter: CpuMeter, consumer: number): Promise<Drained> {
  const pids = [consumer, ...system.servers];
  let before = new Map<number, number>();
  let started = 0;
  await system.seed(jobs, async () => {
    before = await meter.sample(pids, system.backends);
    started = performance.now();
  });
  let last = { left: jobs, at: performance.now() };
  for (;;) {
    const left = await system.remaining();
    if (left === 0) break;
    if (left !== last.left) last = { left, at: performance.now() };
    else if (performance.now() - last.at > STALLED_MS) throw new Error(`${system.name}: ${left} jobs left, none done for ${STALLED_MS / 1000} s`);
    await new Promise((wake) => setTimeout(wake, POLL_MS));
  }
  const ms = performance.now() - started;
  const after = await meter.sample(pids, system.backends);
  await system.tidy();
  const spentBy = (pid: number) => (after.get(pid) ?? 0) - (before.get(pid) ?? 0);
  const total = cpuSpent(before, after);
  const workers = spentBy(consumer);
  const server = system.servers.reduce((sum, pid) => sum + spentBy(pid), 0);
  return {
    jobs, ms, cpuPerJob: total / jobs,
    parts: { workers: workers / jobs, server: server / jobs, postgres: (total - workers - server) / jobs },
  };
}

const rateOf = (drained: Drained) => (drained.jobs / drained.ms) * 1000;

/** Jobs for a drain of about `seconds` at `rate` jobs/s (whole thousands, at least `least`). */
function sizeFor(rate: number, seconds: number, least: number): number {
  return Math.max(least, Math.ceil((rate * seconds) / 1000) * 1000);
}

/**
 * Starts the system's workers, drains `warm` jobs unmeasured, then at least
 * `least` measured (about 5 s at the warm-up's rate); a measured drain under
 * MIN_DRAIN_SECONDS is run again, larger, and only the last one kept. Stops the workers.
 */
async function round(system: JobSystem, least: number, warm: number, meter: CpuMeter): Promise<{ warmed: Drained; drained: Drained }> {
  const consumer = await spawnChild(consumerArgs, system.consumer, system.name);
  try {
    const warmed = await drainOnce(system, warm, meter, consumer.pid);
    let drained = await drainOnce(system, sizeFor(rateOf(warmed), 5, least), meter, consumer.pid);
    while (drained.ms < MIN_DRAIN_SECONDS * 1000) drained = await drainOnce(system, sizeFor(rateOf(drained), 5, least), meter, consumer.pid);
    return { warmed, drained };
  } finally {
    await consumer.stop();
  }
}

export interface DrainOptions {
  readonly rounds: number;
  readonly warm: number;
  /** The fewest jobs a measured drain has; more when the system is fast enough to drain them in under ~5 s. */
  readonly least: number;
  readonly log: (line: string) => void;
}

/**
 * Each system's drains, interleaved; a system drains as many jobs in every
 * round as in its first measured drain (see `round`), more if one was short.
 */
export async function compareDrains(systems: readonly JobSystem[], options: DrainOptions): Promise<DrainSummary[]> {
  const meter = await CpuMeter.open();
  try {
    const sizes = new Map<JobSystem, number>();
    const runs = new Map<JobSystem, Drained[]>(systems.map((system) => [system, []]));
    for (let r = 0; r < options.rounds; r++) {
      for (const system of systems) {
        const { warmed, drained } = await round(system, sizes.get(system) ?? options.least, options.warm, meter);
        runs.get(system)!.push(drained);
        sizes.set(system, drained.jobs); // the next rounds drain as many
        options.log(`  round ${r + 1} ${system.name}: ${drained.jobs} jobs in ${(drained.ms / 1000).toFixed(2)} s, `
          + `${Math.round(rateOf(drained))} jobs/s, CPU ${drained.cpuPerJob.toFixed(3)} ms/job `
          + `(workers ${drained.parts.workers.toFixed(3)}, server ${drained.parts.server.toFixed(3)}, Postgres ${drained.parts.postgres.toFixed(3)}; warm-up ${Math.round(rateOf(warmed))} jobs/s)`);
      }
    }
    return systems.map((system) => {
      const all = runs.get(system)!;
      return {
        system, runs: all,
        rate: median(all.map(rateOf)),
        cpuPerJob: median(all.map((run) => run.cpuPerJob)),
        shortestSeconds: Math.min(...all.map((run) => run.ms / 1000)),
      };
    });
  } finally {
    await meter.close();
  }
}
