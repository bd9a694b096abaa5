/** CPU time from Linux /proc, shared by the benches that report CPU per request or per start. */
import { readFileSync } from 'node:fs';
import type { TestService } from '../test/helpers/service.ts';
import { runLoad, type LoadResult, type LoadSpec } from './records/load.ts';

const CLOCK_TICKS_PER_SECOND = 100; // USER_HZ on Linux

/** CPU ms a process has used so far (user + system, all its threads); null when unreadable (gone, not Linux). */
export function processCpuMs(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS_PER_SECOND; // utime, stime
  } catch {
    return null;
  }
}

/**
 * CPU ms spent so far by this process (the in-process server) and by the
 * Postgres backends serving `database`. Per request it barely depends on what
 * else runs on a shared machine, unlike throughput.
 */
export async function serviceCpuMs(svc: TestService, database: string): Promise<number> {
  const pids = await svc.ctx.db.map('select pid from pg_stat_activity where datname = $1', [database], (row) => row.pid as number);
  const own = process.cpuUsage();
  return pids.reduce((sum, pid) => sum + (processCpuMs(pid) ?? 0), (own.user + own.system) / 1000);
}

export interface Measured extends LoadResult {
  /** CPU milliseconds (server process + its Postgres backends) per request. */
  readonly cpuMs: number;
}

/** One load run with the service's CPU per request beside its throughput. */
export async function measureWithCpu(svc: TestService, database: string, spec: LoadSpec): Promise<Measured> {
  const before = await serviceCpuMs(svc, database);
  const result = await runLoad(spec);
  const spent = (await serviceCpuMs(svc, database)) - before;
  return { ...result, cpuMs: spent / Math.max(1, result.rps * spec.seconds) };
}

/** Busy CPU ms of the whole machine so far, all CPUs (/proc/stat: every state but idle and iowait); null where unreadable. */
export function machineBusyMs(): number | null {
  try {
    const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
    const [user, nice, system, , , irq, softirq, steal] = fields;
    return ((user + nice + system + irq + softirq + steal) * 1000) / CLOCK_TICKS_PER_SECOND;
  } catch {
    return null;
  }
}
