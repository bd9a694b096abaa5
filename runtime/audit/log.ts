/**
 * Writing entries: in the caller's transaction (`record`, one multi-row
 * INSERT over unnest'ed arrays whatever the count), folded into a create
 * statement as a CTE fragment (`entryFrom`), or alone for attempts that changed nothing
 * (`denied`, `failed`). The policy decides what is kept: `full` everything,
 * `metadata` no changes, ip or user agent, `off` nothing.
 */
import type { AuditPolicy } from '../config/index.ts';
import type { Db, Tx } from '../db/index.ts';
import { clientAddress, TokenBuckets } from '../edge/index.ts';
import type { Logger } from '../log/index.ts';
import { compile, sql, type Sql, type SqlCast, type SqlValue } from '../sql/index.ts';
import { tenantKey } from '../tenancy/index.ts';
import { REDACTED, type AuditEntryInput, type AuditLog, type Outcome } from './types.ts';

export interface AuditLogOptions {
  readonly policy: AuditPolicy;
  /** As the rate limiter: the first X-Forwarded-For hop, or the peer address. */
  readonly trustForwardedFor: boolean;
}

/** Keys that hold secrets wherever they appear in `changes`: never stored. */
const SECRET_KEYS = /^(password|passwordhash|password_hash|token|tokenhash|token_hash|accesstoken|access_token|refreshtoken|refresh_token|workertoken|worker_token|secret|clientsecret|client_secret)$/i;

const COLUMNS = 'tenant_id, actor_kind, actor_id, actor_role, action, entity_type, entity_id, event_id, outcome, changes, ip, user_agent, request_id';
const COLUMN_LIST = sql.join(COLUMNS.split(', ').map((column) => sql.ident(column)), ', ');
/** The SQL type of each of the 13 columns, in COLUMNS order. */
const CASTS: readonly SqlCast[] = COLUMNS.split(', ').map((column) => (column === 'changes' ? 'jsonb' : 'text'));

const ARRAY_CASTS: readonly SqlCast[] = CASTS.map((cast) => (cast === 'jsonb' ? 'jsonb[]' : 'text[]'));

/**
 * Every entry's id: time-ordered, made by the database inside the writing
 * transaction (audit migration 0005; the statistics' fold relies on both,
 * rollup.ts), its low bits unique per node on Citus (0007). The column has no
 * default: every insert writes it.
 */
const NEXT_ID = sql`svc_audit_next_id()`;

/** Every entry of `rows` in one INSERT, whatever the count: one array per column, unnest'ed. */
const insertMany = (rows: readonly unknown[][]) => compile(sql`insert into svc_audit (id, ${COLUMN_LIST})
  select ${NEXT_ID}, u.* from unnest(${sql.join(ARRAY_CASTS.map((cast, i) => sql.value(rows.map((r) => r[i]), cast)), ', ')}) as u`);

/**
 * Anonymous attempts that changed nothing (401s, failed logins, refused
 * refreshes) written per instance: a burst of ANONYMOUS_BURST, then
 * ANONYMOUS_PER_SEC a second. Nothing an anonymous client sends (such as an
 * X-Forwarded-For of its choosing) can raise it. Past it, entries are counted,
 * not written: the next written entry carries the count in `changes.suppressed`,
 * and a warning is logged at most once a minute.
 */
export const ANONYMOUS_BURST = 100;
export const ANONYMOUS_PER_SEC = 20;
const SUPPRESSED_WARN_MS = 60_000;

const MAX_TEXT = 512;
const clip = (value: string | null | undefined) => (value ? value.slice(0, MAX_TEXT) : null);

/** Replaces secret keys, at any depth, by "[redacted]": a copy only when there is one (most changes have none). */
export function scrub(value: unknown): unknown {
  return holdsSecret(value) ? redacted(value) : value;
}

function holdsSecret(value: unknown): boolean {
  if (value === null || typeof value !== 'object' || value instanceof Date) return false;
  if (Array.isArray(value)) return value.some(holdsSecret);
  for (const key in value) {
    if (!Object.hasOwn(value, key)) continue;
    if (SECRET_KEYS.test(key) || holdsSecret((value as Record<string, unknown>)[key])) return true;
  }
  return false;
}

function redacted(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(redacted);
  if (value === null || typeof value !== 'object' || value instanceof Date) return value;
  return Object.fromEntries(Object.entries(value).map(([key, v]) => [key, SECRET_KEYS.test(key) ? REDACTED : redacted(v)]));
}

/** The audit log, and `pruned(rows)` for the capability's retention sweep to report what it deleted. */
export function createAuditLog(db: Db, options: AuditLogOptions, log: Logger): AuditLog & { pruned(rows: number): void } {
  const full = options.policy === 'full';
  const off = options.policy === 'off';

  /** The 13 column values of an entry, as the policy keeps them. */
  const row = (entry: AuditEntryInput, outcome: Outcome = entry.outcome ?? 'success'): unknown[] => [
    tenantKey(entry.tenantId), entry.actor.kind, entry.actor.id, entry.actor.role, entry.action,
    entry.entityType ?? null, entry.entityId ?? null, entry.eventId ?? null, outcome,
    full && entry.changes ? JSON.stringify(scrub(entry.changes)) : null,
    full ? clip(entry.request?.ip) : null, full ? clip(entry.request?.userAgent) : null, clip(entry.request?.requestId),
  ];

  const insert = (t: Db | Tx, rows: unknown[][]) => t.none(insertMany(rows));

  /** The CTE body writing `entry` once per row of `created` (a create's CTE): none when it made no row. */
  /** One entry per row of `created`, its columns given as `slot(column, cast)`. */
  const entryFromSlots = (created: Sql, slot: (column: number, cast: SqlCast) => SqlValue): Sql | null => {
    if (off) return null;
    const values = CASTS.map((cast, i) => slot(i, cast));
    return sql`insert into svc_audit (id, ${COLUMN_LIST}) select ${NEXT_ID}, ${sql.join(values, ', ')} from ${created}`;
  };
  const entryFrom = (entry: AuditEntryInput, created: Sql): Sql | null => {
    if (off) return null;
    const values = row(entry);
    return entryFromSlots(created, (i, cast) => sql.value(values[i], cast));
  };

  const anonymous = anonymousBudget(log);
  const alone = async (entry: AuditEntryInput, outcome: Outcome) => {
    if (off) return;
    const admitted = entry.actor.kind === 'anonymous' ? anonymous.admit(entry) : entry;
    if (!admitted) return;
    try {
      await insert(db, [row(admitted, outcome)]);
    } catch (err) {
      log.warn({ err, action: entry.action, outcome }, 'audit entry not written');
    }
  };

  const pruned = new Set<(rows: number) => void>();
  let prunedSoFar = 0;
  return {
    policy: options.policy,
    onPruned(listener) {
      // A sweep may end before a listener starts (the first runs at start): it hears of that one at once.
      pruned.add(listener);
      if (prunedSoFar > 0) listener(prunedSoFar);
    },
    pruned(rows: number) {
      prunedSoFar += rows;
      for (const listener of pruned) listener(rows);
    },
    async record(t, entries) {
      if (off) return;
      const list = Array.isArray(entries) ? entries : [entries as AuditEntryInput];
      if (list.length > 0) await insert(t, list.map((entry) => row(entry)));
    },
    entryFrom,
    entryFromSlots,
    entryValues: (entry) => row(entry),
    denied: (entry) => alone(entry, 'denied'),
    failed: (entry) => alone(entry, 'error'),
    requestOf(koa) {
      return {
        ip: clientAddress(koa, options.trustForwardedFor),
        userAgent: koa.get('user-agent') || null,
        requestId: koa.state.requestId ?? null,
      };
    },
  };
}

/** The per-instance bound on anonymous entries (ANONYMOUS_BURST, ANONYMOUS_PER_SEC). */
function anonymousBudget(log: Logger) {
  const bucket = new TokenBuckets({ capacity: ANONYMOUS_BURST, windowSecs: ANONYMOUS_BURST / ANONYMOUS_PER_SEC, maxEntries: 1 });
  let suppressed = 0;
  let warnedAt = 0;
  return {
    /** The entry to write (carrying the count of those not written before it), or null past the bound. */
    admit(entry: AuditEntryInput): AuditEntryInput | null {
      if (!bucket.take('anonymous').allowed) {
        suppressed++;
        if (Date.now() - warnedAt >= SUPPRESSED_WARN_MS) {
          warnedAt = Date.now();
          log.warn({ suppressed, perSec: ANONYMOUS_PER_SEC }, 'anonymous attempts over the audit bound are counted, not written');
        }
        return null;
      }
      if (suppressed === 0) return entry;
      const admitted = { ...entry, changes: { ...entry.changes, suppressed } };
      suppressed = 0;
      return admitted;
    },
  };
}
