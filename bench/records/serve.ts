/**
 * One of the records benches' baselines in a process of its own (SYSTEM:
 * floor, postgraphile, stack or enqueue-floor; see baselines.ts) on
 * DATABASE_URL with a pool of POOL_SIZE, its connections named after it
 * (application_name: the bench counts their CPU as its). Prints `ready <url>`.
 */
import { startEnqueueFloor, startFloor, startPostGraphile, startStackFloor } from './baselines.ts';

const SERVERS: Record<string, (url: string, poolSize: number) => Promise<{ url: string; stop(): Promise<void> }>> = {
  floor: startFloor,
  postgraphile: startPostGraphile,
  stack: startStackFloor,
  'enqueue-floor': startEnqueueFloor,
};

const system = process.env.SYSTEM ?? '';
const start = SERVERS[system];
if (!start) throw new Error(`unknown SYSTEM ${system}`);
const url = new URL(process.env.DATABASE_URL!);
url.searchParams.set('application_name', system);
const server = await start(url.toString(), Number(process.env.POOL_SIZE ?? 20));
process.once('SIGTERM', () => void server.stop().then(() => process.exit(0)));
process.stdout.write(`ready ${server.url}\n`);
