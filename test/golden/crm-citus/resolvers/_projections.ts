// Custom read-model projections, run by the runtime beside the built-in
// current-state tables. This file is yours: svc-gen writes it once and never
// overwrites it. List each projection in `projections`; see docs/projections.md.
import type { ProjectionDefinition } from 'svc-gen/runtime';
// import { defineProjection } from 'svc-gen/runtime';

// Example: a running count of live Activity records per tenant, in a table of your own.
//
// const activityCounts = defineProjection({
//   name: 'activity_counts',
//   sourceModel: 'Activity',
//   transactionalRebuild: true, // reset and apply use only `tx`: rebuilds roll back as a whole
//   async reset(tx) {
//     await tx.none('create table if not exists activity_counts (tenant_id text primary key, n integer not null)');
//     await tx.none('truncate activity_counts');
//   },
//   async apply(event, tx) {
//     const delta = event.eventType === 'Created' || event.eventType === 'Restored' ? 1
//       : event.eventType === 'Deleted' ? -1 : 0;
//     if (delta === 0) return;
//     await tx.none(
//       `insert into activity_counts (tenant_id, n) values (coalesce($1, ''), $2)
//        on conflict (tenant_id) do update set n = activity_counts.n + excluded.n`,
//       [event.tenantId, delta],
//     );
//   },
// });

export const projections: readonly ProjectionDefinition[] = [];
