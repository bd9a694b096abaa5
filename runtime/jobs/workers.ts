/**
 * Worker tokens: a credential class of its own (header X-Worker-Token).
 * The token is shown once at minting; only its SHA-256 is stored. Every
 * worker request looks the hash up, so a revocation holds on the very next
 * request on every instance (no cache to go stale).
 */
import { createHash, randomBytes } from 'node:crypto';
import { newId } from '../ids.ts';
import type { Db, Tx } from '../db/index.ts';
import { badRequest } from '../http/errors.ts';
import { requireName, requirePublicQueue } from './input.ts';
import type { TenantScope } from '../tenancy/index.ts';
import { isoUtcSql } from '../db/index.ts';
import { compile, sql } from '../sql/index.ts';
import { prepare } from '../sql/prepare.ts';
import type { WorkerIdentity } from './types.ts';

export type { WorkerIdentity } from './types.ts';

export const TOKEN_PREFIX = 'wkr_';
export const ANY_QUEUE = '*';

export interface WorkerView {
  readonly id: string;
  readonly name: string;
  readonly queues: string[];
  readonly isRevoked: boolean;
  readonly createdAt: string;
}


export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

export function requireQueues(value: unknown): string[] {
  if (!Array.isArray(value) || value.length === 0) throw badRequest('queues must be a non-empty array of strings');
  return [...new Set(value.map((queue) => requirePublicQueue(queue, 'queues[]')))];
}

export async function mintToken(
  db: Db | Tx, input: { name: unknown; queues: unknown }, createdBy: string, scope: TenantScope,
): Promise<{ id: string; token: string; queues: string[] }> {
  const name = requireName(input.name, 'name');
  const queues = requireQueues(input.queues);
  const id = newId();
  const token = TOKEN_PREFIX + randomBytes(32).toString('base64url');
  await db.none(compile(sql`
    insert into svc_worker_tokens (id, name, queues, token_hash, tenant_id, created_by)
    values (${sql.join([sql.value(id, 'text'), sql.value(name, 'text'), sql.value(queues, 'text[]'), sql.value(hashToken(token), 'text'),
      scope.localStamp(), sql.value(createdBy, 'text')], ', ')})`, { scope }));
  return { id, token, queues };
}

export async function listTokens(db: Db, scope: TenantScope): Promise<WorkerView[]> {
  const rows = await db.manyOrNone(compile(sql`
    select id, name, queues, is_revoked, ${sql.raw(isoUtcSql('created_at'))} as created_at from svc_worker_tokens
     where ${scope.localPredicate(null)} order by id`, { scope }));
  return rows.map((row) => ({
    id: row.id, name: row.name, queues: row.queues, isRevoked: row.is_revoked, createdAt: row.created_at,
  }));
}

/** Revokes a live token in scope; null when unknown, out of scope or already revoked, else its tenant. */
export async function revokeToken(db: Db | Tx, id: string, scope: TenantScope): Promise<{ tenantId: string | null } | null> {
  const row = await db.oneOrNone<{ tenant_id: string | null }>(compile(sql`
    update svc_worker_tokens set is_revoked = true, revoked_at = now()
     where id = ${sql.value(id, 'text')} and not is_revoked and ${scope.localPredicate(null)} returning tenant_id`, { scope }));
  return row && { tenantId: row.tenant_id };
}

const AUTHENTICATE = prepare<{ hash: string }>((arg) => sql`
  select id, queues, tenant_id from svc_worker_tokens where token_hash = ${arg('hash', 'text')} and not is_revoked`);

export async function authenticateWorker(db: Db, token: string): Promise<WorkerIdentity | null> {
  if (!token.startsWith(TOKEN_PREFIX)) return null;
  const row = await db.oneOrNone<{ id: string; queues: string[]; tenant_id: string | null }>(
    AUTHENTICATE.text, AUTHENTICATE.values({ hash: hashToken(token) }));
  return row ? { id: row.id, queues: row.queues, tenantId: row.tenant_id } : null;
}

const HELD = prepare<{ id: string; leaseId: string; workerId: string }>((arg) => sql`
  select id, queue, kind, tenant_id, payload from svc_jobs
   where id = ${arg('id', 'text')} and lease_id = ${arg('leaseId', 'text')} and worker_id = ${arg('workerId', 'text')}
     and status = 'leased' and visible_at > now()`);

/** The job when `workerId` holds its current lease `leaseId` and the lease has not expired. */
export async function heldJob(db: Db, id: string, leaseId: string, workerId: string) {
  const row = await db.oneOrNone<{ id: string; queue: string; kind: string; tenant_id: string | null; payload: unknown }>(
    HELD.text, HELD.values({ id, leaseId, workerId }));
  return row && { id: row.id, queue: row.queue, kind: row.kind, tenantId: row.tenant_id, payload: row.payload };
}

/** `*` is any queue a client may use: never one of the runtime's own (requireQueues refuses those first). */
export function mayLease(worker: WorkerIdentity, queue: string): boolean {
  return worker.queues.includes(ANY_QUEUE) || worker.queues.includes(queue);
}
