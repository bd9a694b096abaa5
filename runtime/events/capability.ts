import { fileURLToPath } from 'node:url';
import { defineCapability } from '../core/index.ts';
import { periodic } from '../core/periodic.ts';
import { LOCK_KEYS } from '../db/locks.ts';
import { createEventStore, type EventStore } from './store.ts';
import { pruneChanges, pruneHistory, sweepIntervalMs } from './history.ts';
import { RuntimeStreams } from './streams.ts';

declare module '../core/capability.ts' {
  interface Services {
    events: EventStore;
    /** The runtime's own streams (`Job`, `WorkflowRun`): their owners register who may read their history. */
    streams: RuntimeStreams;
  }
}

/** svc_changes is swept hourly, whatever the policy (it may hold rows of an earlier `off` run). */
const CHANGES_SWEEP_MS = 3_600_000;

/**
 * The event log's tables, the hourly sweep of svc_changes, and under history
 * `retained` the periodic history sweep (once at start, then every quarter of
 * the retention, at most hourly). The store itself is created with the context;
 * the registry of runtime streams is made here, for the capabilities after it.
 */
export const events = defineCapability({
  name: 'events',
  provides: ['events', 'streams'],
  requires: [],
  migrations: fileURLToPath(new URL('./migrations/', import.meta.url)),
  async init(ctx) {
    const store = createEventStore(ctx.db, { ...ctx.config.history, models: new Set(ctx.ir.models.map((model) => model.name)) });
    ctx.services.events = store;
    ctx.services.streams = new RuntimeStreams(store);
    const options = store.policy;
    const retained = options.policy === 'retained';
    const sweep = async () => {
      try {
        const changes = await pruneChanges(ctx.db);
        if (changes > 0) ctx.log.info({ changes }, 'change table sweep');
        if (!retained) return;
        const pruned = await pruneHistory(ctx.db, options);
        if (pruned > 0) ctx.log.info({ pruned, retainDays: options.retainDays }, 'history retention sweep');
      } catch (err) {
        ctx.log.warn({ err }, 'history retention sweep failed');
      }
    };
    // At start on every instance (a policy changed by this restart applies at once;
    // the sweeps take LOCK_KEYS.history), then once per interval across instances.
    await sweep();
    return periodic(ctx.db, ctx.log, {
      name: 'history-sweep', everyMs: retained ? sweepIntervalMs(options.retainDays) : CHANGES_SWEEP_MS,
      lockKey: LOCK_KEYS.periodicHistorySweep, run: sweep,
    });
  },
});
