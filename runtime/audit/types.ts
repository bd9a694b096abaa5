/**
 * The audit log's vocabulary: who acted, on what, how it ended. Plain types,
 * imported by every capability that writes entries (records, auth, jobs,
 * projections; later media, actions, workflows).
 */
import type Koa from 'koa';
import type { AuditPolicy } from '../config/index.ts';
import type { Tx } from '../db/index.ts';
import type { Sql, SqlCast, SqlValue } from '../sql/index.ts';


export type ActorKind = 'user' | 'worker' | 'system' | 'anonymous';
export type Outcome = 'success' | 'denied' | 'error';

/** CONTRACT section 9 action names, plus `access.denied` for a 401/403 of a route without an action of its own. */
export const AUDIT_ACTIONS = [
  'record.create', 'record.update', 'record.delete', 'record.restore', 'record.hardDelete',
  'auth.login', 'auth.login_failed', 'auth.logout', 'auth.refresh', 'auth.refresh_reuse', 'auth.register',
  'user.create', 'user.update', 'worker_token.create', 'worker_token.revoke', 'job.enqueue', 'job.retry', 'job.cancel',
  'media.upload', 'media.delete', 'action.invoke', 'workflow.run', 'projection.rebuild', 'access.denied',
] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];
export const OUTCOMES: readonly Outcome[] = ['success', 'denied', 'error'];

export interface AuditActor {
  readonly kind: ActorKind;
  /** User id, worker token id; null for the system and anonymous callers. */
  readonly id: string | null;
  readonly role: string | null;
}

/** The HTTP request behind an entry (absent for in-process work). */
export interface AuditRequest {
  readonly ip: string | null;
  readonly userAgent: string | null;
  readonly requestId: string | null;
}

export interface AuditEntryInput {
  readonly action: AuditAction;
  /** The scope the entry belongs to (CONTRACT section 8); null = the global scope. */
  readonly tenantId: string | null;
  readonly actor: AuditActor;
  readonly entityType?: string | null;
  readonly entityId?: string | null;
  /** The event-log entry of the same change, when there is one. */
  readonly eventId?: string | null;
  /** Default `success`. */
  readonly outcome?: Outcome;
  /**
   * `{field: [old, new]}` for updates, the written fields for creates, facts
   * for other actions. Secret keys (passwords, hashes, tokens) are replaced by
   * "[redacted]" on write whatever the caller sends; model fields tagged
   * `@sensitive` are redacted by the caller (records), which knows the schema.
   */
  readonly changes?: Readonly<Record<string, unknown>> | null;
  readonly request?: AuditRequest | null;
}

/** What the routes return: CONTRACT section 9's entry. */
export interface AuditEntry {
  readonly id: string;
  readonly occurredAt: string;
  readonly tenantId: string | null;
  readonly actor: AuditActor;
  readonly action: string;
  readonly entityType: string | null;
  readonly entityId: string | null;
  readonly eventId: string | null;
  readonly outcome: Outcome;
  readonly changes: unknown;
  readonly ip: string | null;
  readonly userAgent: string | null;
  readonly requestId: string | null;
}

/**
 * The audit interface every capability calls (`ctx.services.audit`).
 *
 * - `record(t, entries)`: in the caller's transaction, so a committed change
 *   has exactly one entry and a rolled-back one none. Many entries are one
 *   multi-row INSERT. A no-op under SVC_AUDIT_POLICY=off.
 * - `entryFrom(entry, created)`: the same, as the CTE fragment a
 *   one-statement create composes: it writes the entry once per row of the
 *   CTE `created` (none when the insert made none). Null under policy off.
 * - `denied(entry)` / `failed(entry)`: an attempt that changed nothing (401,
 *   403, failed login; or an error that rolled the change back), written in a
 *   transaction of its own with outcome `denied` / `error`. Never throws: a
 *   failure to write is logged.
 * - `requestOf(koa)`: ip (the rate limiter's client address), user agent and
 *   request id of an HTTP request, to put in entries.
 */
export interface AuditLog {
  readonly policy: AuditPolicy;
  record(t: Tx, entries: AuditEntryInput | readonly AuditEntryInput[]): Promise<void>;
  entryFrom(entry: AuditEntryInput, created: Sql): Sql | null;
  /**
   * `entryFrom` with its 13 column values as `slot(column, cast)` (placeholders
   * of a statement built once); `entryValues(entry)` gives one entry's values
   * in that order, as the policy keeps them. Null under policy off.
   */
  entryFromSlots(created: Sql, slot: (column: number, cast: SqlCast) => SqlValue): Sql | null;
  entryValues(entry: AuditEntryInput): unknown[];
  denied(entry: Omit<AuditEntryInput, 'outcome'>): Promise<void>;
  failed(entry: Omit<AuditEntryInput, 'outcome'>): Promise<void>;
  requestOf(koa: Koa.Context): AuditRequest;
  /** Calls `listener` with the entries each retention sweep of this instance deletes (metrics), first with those deleted so far. */
  onPruned(listener: (rows: number) => void): void;
}

export const SYSTEM_ACTOR: AuditActor = { kind: 'system', id: null, role: null };
export const ANONYMOUS_ACTOR: AuditActor = { kind: 'anonymous', id: null, role: null };

export function userActor(principal: { userId: string; role: string } | null | undefined): AuditActor {
  return principal ? { kind: 'user', id: principal.userId, role: principal.role } : ANONYMOUS_ACTOR;
}

export function workerActor(workerId: string): AuditActor {
  return { kind: 'worker', id: workerId, role: null };
}

export const REDACTED = '[redacted]';
