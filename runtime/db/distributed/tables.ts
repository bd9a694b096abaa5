/**
 * Where each table would live on Citus (docs/adr/025-distributable-layout.md):
 * distributed by `tenant_id` (co-located), a reference table (copied to every
 * node), or local to the coordinator. Only distributed tables are checked:
 * a statement on them must name one tenant.
 */
export type Placement = 'distributed' | 'reference' | 'coordinator' | 'catalog';

/**
 * The runtime's tables that hold one tenant's rows: distributed with the model
 * tables. `svc-gen build --target citus` distributes them (generator/emit/citus.ts
 * keeps its own copy of both lists, in the order Citus needs; test/generator/citus.test.ts
 * checks that they agree).
 */
export const DISTRIBUTED: ReadonlySet<string> = new Set([
  'svc_events', 'svc_changes', 'svc_audit', 'svc_media', 'svc_media_blobs',
  // The per-tenant feed heads (ADR 025 decision 4) and the audit's daily rollups (ADR 022): a tenant's rows too.
  'svc_tenant_heads', 'svc_audit_daily', 'svc_audit_daily_actors',
]);

/** Read on every request, written rarely: one copy per node. */
export const REFERENCE: ReadonlySet<string> = new Set([
  'svc_users', 'svc_sessions', 'svc_refresh_tokens', 'svc_worker_tokens', 'svc_oauth_identities',
  'svc_history_coverage',
]);

/**
 * Everything else of the runtime's (`svc_` tables): coordinator-local. Jobs
 * and workflow runs are leased across tenants with `for update skip locked`,
 * periodic ticks, feed cursors, projection state, realtime presence and the
 * migrations table are per deployment, not per tenant.
 */
export function placement(table: string, schema: string | undefined): Placement {
  if (schema === 'pg_catalog' || schema === 'information_schema' || table.startsWith('pg_')) return 'catalog';
  if (DISTRIBUTED.has(table)) return 'distributed';
  if (REFERENCE.has(table)) return 'reference';
  if (table.startsWith('svc_')) return 'coordinator';
  // A generated model table or its projection (`<model>_projection`).
  return 'distributed';
}
