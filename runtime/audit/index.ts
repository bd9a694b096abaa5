/**
 * The audit capability (CONTRACT section 9): the svc_audit table, the audit
 * interface every mutating capability calls (`ctx.services.audit`), the four
 * read routes, the denied-attempts middleware and the retention sweep.
 *
 * How to write entries (records, auth, jobs and projections do; media,
 * actions and workflows do the same with their own actions):
 *
 *   // a change: in its own transaction, so commit and entry are one
 *   await db.tx(async (t) => {
 *     const row = await change(t);
 *     await ctx.services.audit.record(t, {
 *       action: 'media.upload', tenantId: scope.tenantId, actor: userActor(principal),
 *       entityType: 'Media', entityId: row.id, changes: { name: row.name }, request: audit.requestOf(koa),
 *     });
 *   });
 *   // many changes: pass an array: one multi-row INSERT
 *   // a one-statement create: compose the fragment `audit.entryFrom(entry, created)`
 *   //   as one of its CTEs (records' create does, beside events.firstEvent)
 *   // an attempt that changed nothing: `audit.denied(entry)` (401/403) or
 *   //   `audit.failed(entry)` (an error rolled the change back)
 *
 * Never put secrets in `changes`: keys named like passwords, hashes and
 * tokens are redacted on write anyway; schema fields tagged `@sensitive` are
 * the caller's to redact (`redactFields`).
 */
import { fileURLToPath } from 'node:url';
import { defineCapability } from '../core/index.ts';
import type { Db } from '../db/index.ts';
import { LOCK_KEYS } from '../db/locks.ts';
import { periodic } from '../core/periodic.ts';
import type { Logger } from '../log/index.ts';
import { deniedAttempts } from './denied.ts';
import { createAuditLog } from './log.ts';
import { AUDIT_SWEEP_MS, pruneAudit } from './retention.ts';
import { startRollups } from './rollup.ts';
import { mountAuditRoutes } from './routes.ts';
import { AUDIT_PATHS } from './openapi.ts';
import { REDACTED, type AuditLog } from './types.ts';

export {
  AUDIT_ACTIONS, OUTCOMES, SYSTEM_ACTOR, ANONYMOUS_ACTOR, REDACTED, userActor, workerActor,
  type AuditLog, type AuditEntryInput, type AuditEntry, type AuditActor, type AuditRequest, type AuditAction,
  type ActorKind, type Outcome,
} from './types.ts';
export { scrub } from './log.ts';
export { pruneAudit, AUDIT_RETENTION_LOCK_KEY } from './retention.ts';
export { foldAuditRollups } from './rollup.ts';
export { tenantOfRequest } from './tenant.ts';

declare module '../core/capability.ts' {
  interface Services {
    audit: AuditLog;
  }
}

/** Entity types of the runtime's own entries, beside the schema's models. */
export const RUNTIME_ENTITY_TYPES = ['User', 'Job', 'WorkerToken', 'Projection', 'Media', 'WorkflowRun'] as const;

/** `data` with the values of `sensitive` keys replaced by "[redacted]". */
export function redactFields(data: Readonly<Record<string, unknown>>, sensitive: ReadonlySet<string>): Record<string, unknown> {
  if (sensitive.size === 0) return { ...data };
  return Object.fromEntries(Object.entries(data).map(([key, value]) => [key, sensitive.has(key) ? REDACTED : value]));
}

/** What /storage/diagnostics reports. */
export async function auditUsage(db: Db, audit: AuditLog) {
  const row = await db.one<{ rows: number; bytes: string }>(
    `select (select count(*)::int from svc_audit) as rows, pg_total_relation_size('svc_audit')::text as bytes`,
  );
  return { enabled: audit.policy !== 'off', policy: audit.policy, rows: row.rows, bytes: Number(row.bytes) };
}

export const audit = defineCapability({
  name: 'audit',
  provides: ['audit'],
  requires: ['openapi'],
  migrations: fileURLToPath(new URL('./migrations/', import.meta.url)),
  async init(ctx) {
    const { policy, retainDays } = ctx.config.audit;
    const log = createAuditLog(ctx.db, { policy, trustForwardedFor: ctx.config.rateLimit.trustForwardedFor }, ctx.log);
    ctx.services.audit = log;
    if (policy !== 'off') ctx.observeErrors(deniedAttempts(log));
    ctx.services.openapi.add(AUDIT_PATHS);
    // The statistics' rollups are folded whatever the policy: entries written before `off` are still read.
    // The embedded database too (its stalled start was the notifier's second client of PGlite: db/embedded.ts).
    const rollups = startRollups(ctx.db, ctx.log);
    const sweep = retainDays === null ? null : startSweep(ctx.db, retainDays, ctx.log, (rows) => log.pruned(rows));
    return {
      async stop() {
        await Promise.all([rollups.stop(), sweep?.stop()]);
      },
    };
  },
});

/** The four read routes: a capability of their own, since auth (which they require) writes audit entries. */
export const auditRoutes = defineCapability({
  name: 'audit-routes',
  provides: [],
  requires: ['auth'],
  async init(ctx) {
    const { auth } = ctx.services;
    mountAuditRoutes(ctx.router, {
      db: ctx.db,
      auth: () => auth,
      entityTypes: new Set([...ctx.ir.models.map((m) => m.name), ...RUNTIME_ENTITY_TYPES]),
    });
  },
});

/** Retention at start, then hourly, on one instance per hour (core/periodic.ts). */
function startSweep(db: Db, retainDays: number, log: Logger, report: (rows: number) => void) {
  return periodic(db, log, {
    name: 'audit-retention', everyMs: AUDIT_SWEEP_MS, lockKey: LOCK_KEYS.periodicAuditRetention,
    async run() {
      const pruned = await pruneAudit(db, retainDays);
      report(pruned);
      if (pruned > 0) log.info({ pruned, retainDays }, 'audit retention sweep');
    },
  });
}
