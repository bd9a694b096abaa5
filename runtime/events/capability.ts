import { fileURLToPath } from 'node:url';
import type { Capability } from '../service/types.ts';
import { pruneHistory, sweepIntervalMs } from './history.ts';

/**
 * The event log's tables, and under history `retained` the periodic sweep
 * (once at start, then every quarter of the retention, at most hourly). The
 * store itself is created with the context.
 */
export const events: Capability = {
  name: 'events',
  migrations: fileURLToPath(new URL('./migrations/', import.meta.url)),
  async init(ctx) {
    const options = ctx.services.events.policy;
    if (options.policy !== 'retained') return;
    const sweep = async () => {
      try {
        const pruned = await pruneHistory(ctx.db, options);
        if (pruned > 0) ctx.log.info({ pruned, retainDays: options.retainDays }, 'history retention sweep');
      } catch (err) {
        ctx.log.warn({ err }, 'history retention sweep failed');
      }
    };
    await sweep();
    let running: Promise<void> | null = null;
    const timer = setInterval(() => {
      running ??= sweep().finally(() => (running = null));
    }, sweepIntervalMs(options.retainDays));
    timer.unref();
    return {
      async stop() {
        clearInterval(timer);
        await running;
      },
    };
  },
};
