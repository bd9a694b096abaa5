/**
 * POST /projections/rebuild. Checks first, changes after:
 *  1. every source model has full, complete history (policy `full`, no
 *     recorded gap), else 409 HISTORY_REPLAY_UNAVAILABLE;
 *  2. every custom projection can rebuild in a transaction, else 409
 *     PROJECTION_REBUILD_UNSUPPORTED;
 *  then one shared transaction clears and replays every projection: any
 *  failure rolls all of them back (503 PROJECTION_REBUILD_FAILED).
 */
import { untimed, type Db, type Tx } from '../db/index.ts';
import { LOCK_KEYS } from '../db/locks.ts';
import { coverageGaps, HISTORY_LOCK_KEY, type HistoryOptions } from '../events/index.ts';
import { compile, sql } from '../sql/index.ts';
import { forEachEvent, toProjectionEvent } from './event.ts';
import { Fold } from './replay.ts';
import type { ProjectionDefinition, TableProjection } from './types.ts';

export const PROJECTIONS_LOCK_KEY = LOCK_KEYS.projections;

export class ProjectionError extends Error {
  constructor(readonly status: 409 | 503, readonly code: string, message: string) {
    super(message);
    this.name = 'ProjectionError';
  }
}

export interface RebuildInput {
  readonly db: Db;
  readonly history: HistoryOptions;
  readonly tables: readonly TableProjection[];
  readonly customs: readonly ProjectionDefinition[];
  /** Runs in the rebuild's transaction once it succeeded (the audit entry). */
  readonly audited?: (t: Tx, result: RebuildResult) => Promise<void>;
}

export interface RebuildResult {
  readonly projections: number;
  readonly events: number;
}

function sourceModels(input: RebuildInput): string[] {
  return [...new Set([...input.tables.map((p) => p.model), ...input.customs.map((c) => c.sourceModel)])];
}

async function checkHistory(t: Db | Tx, input: RebuildInput): Promise<void> {
  if (input.history.policy !== 'full') {
    throw new ProjectionError(409, 'HISTORY_REPLAY_UNAVAILABLE',
      `history policy is ${input.history.policy}; a replay needs SVC_HISTORY_POLICY=full and complete history`);
  }
  const models = new Set(sourceModels(input));
  const gaps = (await coverageGaps(t)).filter((gap) => models.has(gap.model));
  if (gaps.length > 0) {
    const list = gaps.map((gap) => `${gap.model} (${gap.reason} since ${new Date(gap.since).toISOString()})`).join(', ');
    throw new ProjectionError(409, 'HISTORY_REPLAY_UNAVAILABLE', `event history is incomplete for ${list}`);
  }
}

function checkCustoms(input: RebuildInput): void {
  const unsupported = input.customs.filter((c) => !c.transactionalRebuild).map((c) => c.name);
  if (unsupported.length > 0) {
    throw new ProjectionError(409, 'PROJECTION_REBUILD_UNSUPPORTED',
      `projection ${unsupported.join(', ')} cannot rebuild in a transaction`);
  }
}

export async function rebuildProjections(input: RebuildInput): Promise<RebuildResult> {
  await checkHistory(input.db, input);
  checkCustoms(input);
  return input.db.tx('svc-projections-rebuild', async (t) => {
    await untimed(t); // replays the whole history
    await t.any(compile(sql`
      select pg_advisory_xact_lock(${sql.value(HISTORY_LOCK_KEY, 'bigint')}), pg_advisory_xact_lock(${sql.value(PROJECTIONS_LOCK_KEY, 'bigint')})`));
    await checkHistory(t, input); // a gap may have appeared since the first check
    const events = await replay(t, input);
    await recordRebuild(t, input, events);
    const result = { projections: input.tables.length + input.customs.length, events };
    await input.audited?.(t, result);
    return result;
  });
}

async function replay(t: Tx, input: RebuildInput): Promise<number> {
  const folds = new Map(input.tables.map((p) => [p.model, new Fold(p)]));
  for (const p of input.tables) await t.none(compile(sql`delete from ${sql.ident(p.table)}`));
  for (const custom of input.customs) await custom.reset?.(t);
  const events = await forEachEvent(t, sourceModels(input), async (row) => {
    folds.get(row.stream_type)?.apply(row);
    for (const custom of input.customs) {
      if (custom.sourceModel === row.stream_type) await custom.apply(toProjectionEvent(row, true), t);
    }
  });
  for (const fold of folds.values()) await fold.write(t);
  return events;
}

async function recordRebuild(t: Tx, input: RebuildInput, events: number): Promise<void> {
  const names = [...input.tables.map((p) => p.name), ...input.customs.map((c) => c.name)];
  await t.none(compile(sql`
    insert into svc_projection_state (name, last_rebuild_at, last_rebuild_events)
     select n, now(), ${sql.value(events, 'bigint')} from unnest(${sql.value(names, 'text[]')}) as n
     on conflict (name) do update set last_rebuild_at = now(), last_rebuild_events = excluded.last_rebuild_events`));
  // Live changes already replayed must not be applied a second time.
  for (const custom of input.customs) {
    await t.none(compile(sql`
      insert into svc_projection_versions (projection, record_id, version)
       select ${sql.value(custom.name, 'text')}, stream_id, max(version) from svc_events
        where stream_type = ${sql.value(custom.sourceModel, 'text')} group by stream_id
       on conflict (projection, record_id) do update
         set version = greatest(svc_projection_versions.version, excluded.version)`));
  }
}
