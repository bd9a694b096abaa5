import { fileURLToPath } from 'node:url';
import { defineCapability } from '../core/index.ts';
import { periodic } from '../core/periodic.ts';
import { LOCK_KEYS } from '../db/locks.ts';
import { createEventStore, type EventStore } from './store.ts';
import { pruneChanges, pruneHistory, sweepIntervalMs } from './history.ts';
import { RuntimeStreams } from './streams.ts';
import type { FeedCursorMode } from './tenant-seq.ts';
import type { Db } from '../db/index.ts';

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
 * `retained` the periodic history sweep (once in the background at start, then
 * every quarter of the retention, at most hourly; index-backed batches). The store itself is created with the context;
 * the registry of runtime streams is made here, for the capabilities after it.
 */
export const events = defineCapability({
  name: 'events',
  provides: ['events', 'streams'],
  requires: [],
  migrations: fileURLToPath(new URL('./migrations/', import.meta.url)),
  async init(ctx) {
    const cursor = await feedCursorMode(ctx.db, ctx.config.feed.cursor);
    const store = createEventStore(ctx.db, { ...ctx.config.history, models: new Set(ctx.ir.models.map((model) => model.name)) }, cursor);
    ctx.services.events = store;
    ctx.services.streams = new RuntimeStreams(store);
    const options = store.policy;
    const retained = options.policy === 'retained';
    let stopping = false;
    const stopped = () => stopping;
    const sweep = async () => {
      try {
        const changes = await pruneChanges(ctx.db, stopped);
        if (changes > 0) ctx.log.info({ changes }, 'change table sweep');
        if (!retained) return;
        const pruned = await pruneHistory(ctx.db, options, stopped);
        if (pruned > 0) ctx.log.info({ pruned, retainDays: options.retainDays }, 'history retention sweep');
      } catch (err) {
        ctx.log.warn({ err }, 'history retention sweep failed');
      }
    };
    // Once at start on every instance, in the background (a policy changed by this
    // restart applies at once, and a backlog of old rows does not delay the start;
    // the sweeps take LOCK_KEYS.history), then once per interval across instances.
    const atStart = sweep();
    const task = periodic(ctx.db, ctx.log, {
      name: 'history-sweep', everyMs: retained ? sweepIntervalMs(options.retainDays) : CHANGES_SWEEP_MS,
      lockKey: LOCK_KEYS.periodicHistorySweep, run: sweep,
    });
    return {
      async stop() {
        stopping = true;
        await task.stop();
        await atStart;
      },
    };
  },
});

/**
 * The feed position this instance writes and reads (ADR 025 decision 4):
 * SVC_FEED_CURSOR when it names one, else `tenant` where the citus extension
 * is installed (no distributed snapshot, no cluster-wide xid order) and
 * `global` on one node (the (tx, seq) reader, free on the write path).
 */
export async function feedCursorMode(db: Db, configured: 'auto' | FeedCursorMode): Promise<FeedCursorMode> {
  if (configured !== 'auto') return configured;
  const citus = await db.oneOrNone("select 1 from pg_extension where extname = 'citus'");
  return citus ? 'tenant' : 'global';
}
