/**
 * The per-tenant feed position (ADR 025 decision 4), written by the event
 * store in tenant mode: every transaction that appends bumps its tenants'
 * head rows (svc_tenant_heads) and stamps `tenant_seq` on its events and
 * changes. The head row stays locked until the commit, so a tenant's
 * positions are gapless and in commit order.
 *
 * Where it is written, one place for every writer (records, jobs,
 * workflows, actions):
 * - `append`/`appendMany` (a transaction that may write more after the
 *   append: hooks, audit, triggers): the stamp is the transaction's last
 *   statement, a before-commit hook (db/before-commit.ts), one statement for
 *   all its tenants, heads locked in tenant order;
 * - `firstEvent`/`appendFrom` (an autocommit statement that writes the
 *   event itself: records' create, a job's enqueue, the job plane): the
 *   statement stamps its own events through `svc_tenant_seq_next` (the
 *   `tenant-cte` form of bench/citus: the head is locked from that statement
 *   to the commit, which follows at once).
 */
import { beforeCommit, type Tx } from '../db/index.ts';
import { compile, sql, type Sql } from '../sql/index.ts';
import { TenantScope } from '../tenancy/index.ts';

/** `global`: the (tx, seq) reader of ADR 010 (one node). `tenant`: per-tenant positions (Citus). */
export type FeedCursorMode = 'global' | 'tenant';

/** The head key of a row's tenant (the global scope is `''`, ADR 025 decision 2) and back: runtime/tenancy's. */
import { tenantKey, tenantOf as tenantOfKey } from '../tenancy/index.ts';
export { tenantKey, tenantOfKey };
/** `tenantKey` over a SQL expression. */
export const tenantKeySql = (expression: Sql): Sql => sql`coalesce(${expression}, '')`;

/** What a transaction appended in tenant mode and must stamp before its commit. */
interface Pending {
  readonly ids: string[];
  readonly tenants: string[];
}

const STAMP_KEY = Symbol('tenant-seq');

/**
 * One statement per tenant the transaction appended to, in tenant order (so
 * two transactions never take two heads in opposite orders), each pinned to
 * its tenant (a single-shard statement on Citus): the tenant's rows of `ids`
 * still unstamped (a savepoint that rolled back left none of its own), its
 * head bumped by their count (inserted at its first append), each row
 * stamped with its place, in append order.
 */
function stampSql(tenant: string, ids: readonly string[]): Sql {
  const scope = TenantScope.of(tenantOfKey(tenant));
  const rows = sql`unnest(${sql.value(ids, 'text[]')}) with ordinality as p(id, ord)`;
  return sql`
    with mine as (
      select e.seq, p.ord, true as event from svc_events e join ${rows} on e.id = p.id
       where ${scope.over(sql`e.tenant_id`)} and e.tenant_seq is null
      union all
      select c.seq, p.ord, false from svc_changes c join ${rows} on c.id = p.id
       where ${scope.over(sql`c.tenant_id`)} and c.tenant_seq is null),
    head as (
      insert into svc_tenant_heads as h (tenant_id, last_seq) select ${sql.value(tenant, 'text')}, count(*) from mine having count(*) > 0
      on conflict (tenant_id) do update set last_seq = h.last_seq + excluded.last_seq
      returning h.last_seq),
    numbered as (
      select m.seq, m.event, head.last_seq - (select count(*) from mine) + row_number() over (order by m.ord) as tenant_seq
        from mine m cross join head),
    stamped as (update svc_events e set tenant_seq = n.tenant_seq from numbered n
                 where n.event and e.seq = n.seq and ${scope.over(sql`e.tenant_id`)})
    update svc_changes c set tenant_seq = n.tenant_seq from numbered n
     where not n.event and c.seq = n.seq and ${scope.over(sql`c.tenant_id`)}`;
}

async function stamp(t: Tx, pending: Pending): Promise<void> {
  const byTenant = new Map<string, string[]>();
  pending.ids.forEach((id, i) => {
    const ids = byTenant.get(pending.tenants[i]);
    if (ids) ids.push(id);
    else byTenant.set(pending.tenants[i], [id]);
  });
  for (const tenant of [...byTenant.keys()].sort()) await t.none(compile(stampSql(tenant, byTenant.get(tenant)!)));
}

/**
 * Tenant mode: the rows `ids` (events or changes of `tenants`) were just
 * appended in `t`; they are stamped by `t`'s last statement, or at once when
 * `t` is not a transaction.
 */
export async function stampLater(t: Tx, ids: readonly string[], tenants: readonly (string | null)[]): Promise<void> {
  const pending = beforeCommit<Pending>(t, STAMP_KEY, () => ({ ids: [], tenants: [] }), stamp);
  const keys = tenants.map(tenantKey);
  if (pending) {
    pending.ids.push(...ids);
    pending.tenants.push(...keys);
    return;
  }
  await stamp(t, { ids: [...ids], tenants: keys });
}

/** Tenant mode: the `tenant_seq` expression of a row appended by its own statement (see the header). */
export const nextTenantSeqSql = (tenantId: Sql): Sql => sql`svc_tenant_seq_next(${tenantKeySql(tenantId)})`;
