/**
 * Building a built-in projection from its base table (ADR 021): only when it
 * is new or its definition changed, never on an ordinary start (the durable
 * consumer has applied every change since the rows were built). A build walks
 * the base table by id in batches of `batch` rows, then the projection table
 * (rows whose base record is gone); each batch is one transaction that
 * commits its rows and its position in svc_projection_state together, so a
 * crash resumes at the last committed batch, and two instances building the
 * same projection take turns on its state row. It never reads the event log.
 */
import { createHash } from 'node:crypto';
import type { Db, Tx } from '../db/index.ts';
import type { Logger } from '../log/index.ts';
import { compile, sql } from '../sql/index.ts';
import { PROJECTIONS_LOCK_KEY } from './rebuild.ts';
import { deleteSql, refreshSql } from './sync.ts';
import type { ProjectionState, TableProjection } from './types.ts';

/** Bump when the text conversion of plan.ts changes: every projection is then built again. */
const FORMAT = 1;

/** The definition a projection's rows are built with: table, base table, columns and their base types. */
export function definitionOf(p: TableProjection): string {
  const shape = { format: FORMAT, table: p.table, base: p.baseTable, columns: p.columns.map((c) => [c.column, c.baseType]) };
  return createHash('sha256').update(JSON.stringify(shape)).digest('hex').slice(0, 16);
}

interface StateRow {
  readonly name: string;
  readonly definition: string | null;
  readonly building: string | null;
  readonly build_phase: 'rows' | 'orphans' | null;
  readonly build_after: string | null;
  readonly build_done: string;
  readonly build_total: string | null;
  readonly build_started_at: string | null;
}

const STATE_COLUMNS = sql.raw('name, definition, building, build_phase, build_after, build_done::text, build_total::text, build_started_at');

export function stateOf(row: StateRow | null, definition: string): ProjectionState {
  if (row && row.definition === definition && row.building === null) return { status: 'ready', build: null };
  return {
    status: 'building',
    build: {
      phase: row?.build_phase ?? 'rows',
      done: Number(row?.build_done ?? 0),
      estimatedTotal: row?.build_total === null || row?.build_total === undefined ? null : Number(row.build_total),
      startedAt: row?.build_started_at ? new Date(row.build_started_at).toISOString() : null,
    },
  };
}

export async function readStates(db: Db | Tx, names: readonly string[]): Promise<Map<string, StateRow>> {
  const rows = await db.manyOrNone<StateRow>(compile(sql`
    select ${STATE_COLUMNS} from svc_projection_state where name = any(${sql.value(names, 'text[]')})`));
  return new Map(rows.map((r) => [r.name, r]));
}

export interface StartPlan {
  /** Projections whose rows must be built (new, changed, or every one when `always`). */
  readonly pending: readonly TableProjection[];
}

/**
 * At start, under the projections lock: which projections need a build. A
 * build already under way for this very definition keeps its position (a
 * crash resumes); any other need starts a build from the first id.
 * `fresh` (the tables consumer has no cursor yet) or `always` build them all;
 * `reshaped` names tables the start created or added a column to.
 */
export async function planBuilds(
  t: Tx, tables: readonly TableProjection[], mode: { always: boolean; fresh: boolean; reshaped: ReadonlySet<string> },
): Promise<StartPlan> {
  const states = await readStates(t, tables.map((p) => p.name));
  const pending: TableProjection[] = [];
  const restart: TableProjection[] = [];
  for (const p of tables) {
    const row = states.get(p.name) ?? null;
    const definition = definitionOf(p);
    if (row?.building === definition && !mode.reshaped.has(p.name)) pending.push(p);
    else if (mode.always || mode.fresh || mode.reshaped.has(p.name) || stateOf(row, definition).status !== 'ready') {
      pending.push(p);
      restart.push(p);
    }
  }
  if (restart.length > 0) await startBuilds(t, restart);
  return { pending };
}

async function startBuilds(t: Tx, tables: readonly TableProjection[]): Promise<void> {
  await t.none(compile(sql`
    insert into svc_projection_state as s (name, building, build_phase, build_after, build_done, build_total, build_started_at)
    select x.name, x.definition, 'rows', '', 0, (select greatest(c.reltuples, 0)::bigint from pg_class c where c.oid = to_regclass(x.base)), now()
      from unnest(${sql.value(tables.map((p) => p.name), 'text[]')}, ${sql.value(tables.map(definitionOf), 'text[]')},
                  ${sql.value(tables.map((p) => p.baseTable), 'text[]')}) as x(name, definition, base)
    on conflict (name) do update set building = excluded.building, build_phase = 'rows', build_after = '', build_done = 0,
      build_total = excluded.build_total, build_started_at = now()`));
}

type StepOutcome = 'more' | 'done' | 'elsewhere';

/**
 * One batch of a build in one transaction: the projections lock (a live
 * refresh and a batch never interleave, refresher.ts), the state row (another
 * instance building the same projection waits for this batch), the next ids,
 * their refresh, the new position.
 */
async function step(db: Db, p: TableProjection, batch: number): Promise<StepOutcome> {
  const definition = definitionOf(p);
  return db.tx('svc-projections-build', async (t) => {
    await t.any(compile(sql`select pg_advisory_xact_lock(${sql.value(PROJECTIONS_LOCK_KEY, 'bigint')})`));
    const row = await t.oneOrNone<StateRow>(compile(sql`
      select ${STATE_COLUMNS} from svc_projection_state where name = ${sql.value(p.name, 'text')} for update`));
    if (row?.building !== definition) return 'elsewhere'; // finished by another instance, or another definition builds
    const phase = row.build_phase ?? 'rows';
    const from = phase === 'rows' ? p.baseTable : p.table;
    // Walked in key order, (tenant_id, id): the primary key of both tables in layout 3 (ADR 025).
    const [afterTenant, afterId] = buildAfter(row.build_after);
    const rows = await t.manyOrNone<{ tenant_id: string; id: string }>(compile(sql`
      select "tenant_id", "id" from ${sql.ident(from)}
       where ("tenant_id", "id") > (${sql.value(afterTenant, 'text')}, ${sql.value(afterId, 'text')})
       order by "tenant_id", "id" limit ${sql.value(batch, 'int')}`));
    const ids = rows.map((r) => r.id);
    if (ids.length > 0) {
      const keys = { tenants: sql.value(rows.map((r) => r.tenant_id), 'text[]'), ids: sql.value(ids, 'text[]') };
      await t.none(compile(phase === 'rows' ? refreshSql(p, keys) : deleteSql(p, keys)));
    }
    const last = ids.length < batch;
    if (last && phase === 'orphans') {
      await t.none(compile(sql`
        update svc_projection_state set definition = building, building = null, build_phase = null, build_after = null,
          build_done = build_done + ${sql.value(ids.length, 'bigint')}, last_sync_at = now()
         where name = ${sql.value(p.name, 'text')}`));
      return 'done';
    }
    await t.none(compile(sql`
      update svc_projection_state set build_phase = ${sql.value(last ? 'orphans' : phase, 'text')},
        build_after = ${sql.value(last ? '' : JSON.stringify([rows[rows.length - 1].tenant_id, ids[ids.length - 1]]), 'text')},
        build_done = build_done + ${sql.value(phase === 'rows' ? ids.length : 0, 'bigint')}
       where name = ${sql.value(p.name, 'text')}`));
    return 'more';
  });
}

/**
 * The key a build continues after: `["tenant", "id"]`; '' (or null) is the
 * start. A position written before layout 3 is an id alone: continued from
 * the global scope's `''`, so no tenant's rows are skipped (rows built again
 * are the same rows).
 */
function buildAfter(text: string | null): [string, string] {
  if (!text) return ['', ''];
  if (text.startsWith('[')) {
    const parsed = JSON.parse(text) as unknown;
    if (Array.isArray(parsed) && parsed.length === 2 && parsed.every((v) => typeof v === 'string')) return parsed as [string, string];
  }
  return ['', text];
}

/** At most this many ids are counted to decide that a build is small enough to finish before the start returns. */
async function isSmall(db: Db, p: TableProjection, batch: number): Promise<boolean> {
  const row = await db.one<{ base: number; projection: number }>(compile(sql`
    select (select count(*)::int from (select 1 from ${sql.ident(p.baseTable)} limit ${sql.value(batch + 1, 'int')}) b) as base,
           (select count(*)::int from (select 1 from ${sql.ident(p.table)} limit ${sql.value(batch + 1, 'int')}) q) as projection`));
  return row.base <= batch && row.projection <= batch;
}

const PROGRESS_EVERY_MS = 5_000;
const MAX_RETRY_MS = 30_000;

/**
 * Runs the builds of a start: a projection whose tables hold at most one
 * batch is built before `start` returns (a bounded count says so); the
 * others in the background, one batch after another, with a progress line
 * every few seconds. `onReady` is told of each finished projection.
 */
export class Builder {
  private stopped = false;
  private running: Promise<void> = Promise.resolve();
  /** Ends the current backoff wait (set while one runs). */
  private wake: (() => void) | null = null;

  constructor(
    private readonly db: Db,
    private readonly log: Logger,
    private readonly batch: number,
    private readonly onReady: (name: string) => void,
  ) {}

  async start(pending: readonly TableProjection[]): Promise<void> {
    const background: TableProjection[] = [];
    for (const p of pending) {
      // A small build that fails at start (a lock wait, say) is not the start's failure: it continues in the background.
      const done = await isSmall(this.db, p, this.batch).then((small) => small && this.build(p, false).then(() => true), () => false);
      if (!done) background.push(p);
    }
    if (background.length === 0) return;
    this.log.info({ projections: background.map((p) => p.name) },
      'projections are built in the background: the service serves meanwhile, and their reads answer 503 until they are ready');
    this.running = this.runAll(background).catch((err) => {
      this.log.error({ err }, 'projection build stopped: it resumes at its last batch on the next start');
    });
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.wake?.();
    await this.running;
  }

  /** A wait that `stop` cuts short. */
  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.wake = done;
    });
  }

  private async runAll(tables: readonly TableProjection[]): Promise<void> {
    for (const p of tables) {
      if (this.stopped) return;
      await this.build(p);
    }
  }

  /** Builds `p` batch by batch; a failed batch is retried with backoff when `retry`, else thrown. */
  private async build(p: TableProjection, retry = true): Promise<void> {
    const started = performance.now();
    let reported = started;
    let batches = 0;
    let failures = 0;
    for (;;) {
      if (this.stopped) return;
      const outcome = await step(this.db, p, this.batch).catch(async (err: unknown) => {
        if (!retry) throw err;
        // A batch that failed (a lock wait past the statement time limit behind a long rebuild, a lost connection)
        // rolled back whole: wait and take it again, the projection stays unavailable meanwhile instead of for good.
        failures += 1;
        const waitMs = Math.min(MAX_RETRY_MS, 250 * 2 ** Math.min(failures, 7));
        this.log.warn({ err, projection: p.name, retryMs: waitMs }, 'projection build batch failed: retried');
        await this.sleep(waitMs);
        return 'retry' as const;
      });
      if (outcome === 'retry') continue;
      failures = 0;
      batches += 1;
      if (outcome === 'elsewhere') return; // another instance finished it (reads look it up) or builds another definition
      if (outcome === 'done') {
        this.onReady(p.name);
        this.log.info({ projection: p.name, batches, ms: Math.round(performance.now() - started) }, 'projection built');
        return;
      }
      if (performance.now() - reported >= PROGRESS_EVERY_MS) {
        reported = performance.now();
        const state = await readStates(this.db, [p.name]).then((rows) => rows.get(p.name) ?? null, () => null);
        if (state) this.log.info({ projection: p.name, ...stateOf(state, definitionOf(p)).build }, 'projection build in progress');
      }
    }
  }
}
