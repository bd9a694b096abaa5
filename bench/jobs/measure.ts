/** Small helpers shared by the benchmark's contenders. */
import { createJobsDatabase } from '../../test/jobs/helpers.ts';

export { createJobsDatabase as freshDatabase };

/** Runs `work(0..count-1)` with at most `concurrency` in flight. */
export async function pool(count: number, concurrency: number, work: (n: number) => Promise<void>): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < count) await work(next++);
  };
  await Promise.all(Array.from({ length: concurrency }, lane));
}

export const rate = (count: number, ms: number) => Math.round((count / ms) * 1000);

export async function waitUntil(check: () => boolean, timeoutMs: number): Promise<void> {
  const started = Date.now();
  while (!check()) {
    if (Date.now() - started > timeoutMs) throw new Error('benchmark step timed out');
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}
