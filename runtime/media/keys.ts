/**
 * Storage keys. Tenant ids are arbitrary text, so each becomes a safe path
 * segment; bytes of different tenants never share a key.
 */
import { createHash } from 'node:crypto';

export function tenantSegment(tenantId: string | null): string {
  // The global scope, null in the API and '' in svc_media's rows (ADR 025).
  if (tenantId === null || tenantId === '') return '_global';
  if (/^[A-Za-z0-9_-]{1,64}$/.test(tenantId)) return `t-${tenantId}`;
  return `h-${createHash('sha256').update(tenantId).digest('hex').slice(0, 32)}`;
}

/** Where an upload's bytes are written before they are known (and deduplicated). */
export const stagingKey = (tenantId: string | null, id: string) => `staging/${tenantSegment(tenantId)}/${id}`;

/**
 * Where a commit moves an upload's staged bytes before it hashes them: no
 * upload URL writes this key, so the hash recorded is the hash of what is kept.
 */
export const commitKey = (tenantId: string | null, id: string) => `commit/${tenantSegment(tenantId)}/${id}`;

/** The content-addressed key of a tenant's bytes. */
export const blobKey = (tenantId: string | null, sha256: string) =>
  `blobs/${tenantSegment(tenantId)}/${sha256.slice(0, 2)}/${sha256}`;
