/**
 * Worker tokens: a credential class of its own (header X-Worker-Token).
 * The token is shown once at minting; only its SHA-256 is stored. Every
 * worker request looks the hash up, so a revocation holds on the very next
 * request on every instance (no cache to go stale).
 */
import { createHash, randomBytes } from 'node:crypto';
import { newId } from '../ids.ts';
import type { Db } from '../db/index.ts';
import { badRequest } from '../http/errors.ts';
import { requireName } from './input.ts';
import { isoUtc } from './scope.ts';

export const TOKEN_PREFIX = 'wkr_';
export const ANY_QUEUE = '*';

export interface WorkerIdentity {
  readonly id: string;
  readonly queues: readonly string[];
  /** Tenant of the minting admin: the token leases only that tenant's jobs. Null = any. */
  readonly tenantId: string | null;
}

export interface WorkerView {
  readonly id: string;
  readonly name: string;
  readonly queues: string[];
  readonly isRevoked: boolean;
  readonly createdAt: string;
}

/** Tenant scope of an admin request: a tenant id, or undefined for every tenant. */
export type AdminScope = string | undefined;

export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

export function requireQueues(value: unknown): string[] {
  if (!Array.isArray(value) || value.length === 0) throw badRequest('queues must be a non-empty array of strings');
  return [...new Set(value.map((queue) => requireName(queue, 'queues[]')))];
}

export async function mintToken(
  db: Db, input: { name: unknown; queues: unknown }, createdBy: string, tenantId: string | null,
): Promise<{ id: string; token: string; queues: string[] }> {
  const name = requireName(input.name, 'name');
  const queues = requireQueues(input.queues);
  const id = newId();
  const token = TOKEN_PREFIX + randomBytes(32).toString('base64url');
  await db.none(
    `insert into svc_worker_tokens (id, name, queues, token_hash, tenant_id, created_by) values ($1, $2, $3, $4, $5, $6)`,
    [id, name, queues, hashToken(token), tenantId, createdBy],
  );
  return { id, token, queues };
}

export async function listTokens(db: Db, scope: AdminScope): Promise<WorkerView[]> {
  const rows = await db.manyOrNone(
    `select id, name, queues, is_revoked, ${isoUtc('created_at')} as created_at from svc_worker_tokens
      where $1::text is null or tenant_id = $1 order by id`,
    [scope ?? null],
  );
  return rows.map((row) => ({
    id: row.id, name: row.name, queues: row.queues, isRevoked: row.is_revoked, createdAt: row.created_at,
  }));
}

/** Revokes a live token in scope; false when unknown, out of scope or already revoked. */
export async function revokeToken(db: Db, id: string, scope: AdminScope): Promise<boolean> {
  const row = await db.oneOrNone(
    `update svc_worker_tokens set is_revoked = true, revoked_at = now()
      where id = $1 and not is_revoked and ($2::text is null or tenant_id = $2) returning id`,
    [id, scope ?? null],
  );
  return row !== null;
}

export async function authenticateWorker(db: Db, token: string): Promise<WorkerIdentity | null> {
  if (!token.startsWith(TOKEN_PREFIX)) return null;
  const row = await db.oneOrNone<{ id: string; queues: string[]; tenant_id: string | null }>(
    'select id, queues, tenant_id from svc_worker_tokens where token_hash = $1 and not is_revoked',
    [hashToken(token)],
  );
  return row ? { id: row.id, queues: row.queues, tenantId: row.tenant_id } : null;
}

export function mayLease(worker: WorkerIdentity, queue: string): boolean {
  return worker.queues.includes(ANY_QUEUE) || worker.queues.includes(queue);
}
