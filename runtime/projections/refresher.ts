/**
 * Live refresh on durable feed consumers (runtime/feed, ADR 010): exactly
 * once per change. One consumer (`projections:tables`) re-reads the changed
 * rows of every built-in projection from their base tables; one consumer per
 * custom projection (`projection:<name>`) applies its source model's events.
 * Each batch and its cursor commit together, so a crash replays the batch;
 * among instances one applies a batch at a time. A failing batch is retried
 * (the consumer waits at that change instead of skipping it).
 *
 * The version claim of custom projections stays: a rebuild records the
 * versions it replayed, and the live consumer must not apply them again.
 */
import { fixed, statementName, type Tx } from '../db/index.ts';
import type { ChangeFeed, ConsumerHandle, DurableConsumer, FeedChange } from '../feed/index.ts';
import { compile, sql } from '../sql/index.ts';
import { tenantKey } from '../tenancy/index.ts';
import { prepare, type Prepared } from '../sql/prepare.ts';
import { refreshSql } from './sync.ts';
import { PROJECTIONS_LOCK_KEY } from './rebuild.ts';
import type { ProjectionDefinition, ProjectionEvent, RefreshStats, TableProjection } from './types.ts';

const MAX_IDS_PER_STATEMENT = 500;

const HOLD = compile(sql`select pg_advisory_xact_lock_shared(${sql.value(PROJECTIONS_LOCK_KEY, 'bigint')})`);

const CLAIM = prepare<{ projection: string; recordId: string; version: number }>((arg) => sql`
  insert into svc_projection_versions as v (projection, record_id, version)
  values (${arg('projection', 'text')}, ${arg('recordId', 'text')}, ${arg('version', 'int')})
  on conflict (projection, record_id) do update set version = excluded.version
  where v.version < excluded.version returning 1 as claimed`);
export const TABLES_CONSUMER = 'projections:tables';

export class Refresher {
  private readonly handles: ConsumerHandle[] = [];

  constructor(
    private readonly tables: ReadonlyMap<string, TableProjection>,
    private readonly customs: readonly ProjectionDefinition[],
    /** Prepare the refresh statements (a server without a transaction pooler). */
    private readonly prepared = false,
  ) {}

  /** Starts the consumers; a new cursor starts now (a missing cursor makes the start build every projection: build.ts). */
  async start(feed: ChangeFeed): Promise<void> {
    if (this.tables.size > 0) this.handles.push(await feed.consume(this.tablesConsumer()));
    for (const custom of this.customs) this.handles.push(await feed.consume(customConsumer(custom)));
  }

  /** Resolves once every change committed so far is applied (by this instance or another). */
  async idle(): Promise<void> {
    for (const handle of this.handles) await handle.drain();
  }

  stats(): RefreshStats {
    const all = this.handles.map((h) => h.stats());
    const last = all.map((s) => s.lastHandledAt).filter((at): at is string => at !== null).sort().at(-1) ?? null;
    return {
      refreshed: all.reduce((n, s) => n + s.handled, 0),
      failures: all.reduce((n, s) => n + s.failures, 0),
      pending: all.filter((s) => s.busy).length,
      lastRefreshAt: last,
    };
  }

  async stop(): Promise<void> {
    for (const handle of this.handles) await handle.stop();
  }

  private tablesConsumer(): DurableConsumer {
    const sql = new Map([...this.tables.values()].map((p): [string, RefreshStatement] => [p.model, refreshStatement(p)]));
    const prepared = this.prepared;
    return {
      name: TABLES_CONSUMER,
      streams: [...this.tables.keys()],
      handle: async (changes, t) => {
        await holdAgainstRebuild(t, prepared);
        // Each record once, by its key (tenant_id, id): the global scope's tenant is stored as ''.
        const keys = new Map<string, Map<string, RowKey>>();
        for (const c of changes) {
          let set = keys.get(c.modelName);
          if (!set) keys.set(c.modelName, (set = new Map()));
          const tenant = tenantKey(c.tenantId);
          set.set(JSON.stringify([tenant, c.recordId]), { tenant, id: c.recordId });
        }
        for (const [model, set] of keys) await refreshKeys(t, sql.get(model)!, [...set.values()], prepared);
      },
    };
  }
}

/**
 * A refresh and a rebuild never interleave: a batch holds the projections
 * lock shared (batches run side by side), a rebuild takes it exclusively and
 * waits for batches in flight, which wait for it in turn. Without it, a row
 * refreshed between the rebuild's delete and its insert made the rebuild fail
 * on a duplicate key (seen by bench:projections with writes in flight).
 */
async function holdAgainstRebuild(t: Tx, prepared = false): Promise<void> {
  await t.any(fixed(prepared, 'svc_projections_hold', HOLD.text, HOLD.values));
}

/** A table's refresh statement, named after its text: a schema change makes another text, and so another name. */
interface RefreshStatement extends Prepared<{ tenants: string[]; ids: string[] }> {
  readonly name: string;
}

interface RowKey {
  readonly tenant: string;
  readonly id: string;
}

function refreshStatement(p: TableProjection): RefreshStatement {
  const statement = prepare<{ tenants: string[]; ids: string[] }>((arg) => refreshSql(p, { tenants: arg('tenants', 'text[]'), ids: arg('ids', 'text[]') }));
  return { ...statement, name: statementName('svc_refresh', statement.text) };
}

/** One statement per MAX_IDS_PER_STATEMENT records, prepared when `prepared` (planned once, not once per batch). */
async function refreshKeys(t: Tx, statement: RefreshStatement, keys: RowKey[], prepared: boolean): Promise<void> {
  for (let i = 0; i < keys.length; i += MAX_IDS_PER_STATEMENT) {
    const slice = keys.slice(i, i + MAX_IDS_PER_STATEMENT);
    const values = statement.values({ tenants: slice.map((k) => k.tenant), ids: slice.map((k) => k.id) });
    await t.none(fixed(prepared, statement.name, statement.text, values));
  }
}

function customConsumer(custom: ProjectionDefinition): DurableConsumer {
  return {
    name: `projection:${custom.name}`,
    streams: [custom.sourceModel],
    withData: true,
    async handle(changes, t) {
      await holdAgainstRebuild(t);
      for (const change of changes) {
        if (change.version > 0 && !(await claim(t, custom.name, change))) continue; // a rebuild replayed it
        await custom.apply(toEvent(change), t);
      }
    },
  };
}

async function claim(t: Tx, projection: string, change: FeedChange): Promise<boolean> {
  const row = await t.oneOrNone(CLAIM.text, CLAIM.values({ projection, recordId: change.recordId, version: change.version }));
  return row !== null;
}

function toEvent(change: FeedChange): ProjectionEvent {
  return {
    eventId: change.eventId, eventType: change.eventType, model: change.modelName, recordId: change.recordId,
    version: change.version, data: change.data ?? null, actorId: change.actorId, tenantId: change.tenantId,
    occurredAt: new Date(change.occurredAt).toISOString(), replay: false,
  };
}
