/**
 * Presence shared by every instance: one row per (instance, tenant, channel,
 * user) in svc_realtime_presence, and a heartbeat per instance. Rows of an
 * instance silent for three heartbeats are ignored at once and deleted by
 * whichever instance sweeps first, which then announces the leaves. All time
 * comparisons use the database clock, so instance clocks may drift.
 */
import { isoUtc, type Db } from '../db/index.ts';
import type { Member } from './protocol.ts';

export interface PresenceEntry {
  readonly tenant: string | null;
  readonly channel: string;
  readonly userId: string;
}

export interface PresenceStore {
  register(): Promise<void>;
  /** Records the user on this instance; true when no live instance had it before. */
  join(entry: PresenceEntry): Promise<boolean>;
  /** Removes the user from this instance; true when no live instance has it any more. */
  leave(entry: PresenceEntry): Promise<boolean>;
  members(tenant: string | null, channel: string): Promise<Member[]>;
  /** Refreshes this instance; re-registers `local` if it was reaped. Returns entries reaped from dead instances. */
  heartbeat(local: () => PresenceEntry[]): Promise<PresenceEntry[]>;
  /** Removes this instance; returns the entries that left every instance. */
  unregister(): Promise<PresenceEntry[]>;
}

// `$ttl` (ms) marks an instance alive; the scope key is tenant ('' = global), channel, user.
const ELSEWHERE = `exists (
  select 1 from svc_realtime_presence p join svc_realtime_instances i on i.instance_id = p.instance_id
   where p.tenant = $2 and p.channel = $3 and p.user_id = $4 and p.instance_id <> $1
     and i.seen_at >= now() - $5 * interval '1 millisecond')`;

const GONE_EVERYWHERE = `select distinct g.tenant, g.channel, g.user_id from gone g
  where not exists (
    select 1 from svc_realtime_presence p join svc_realtime_instances i on i.instance_id = p.instance_id
     where p.tenant = g.tenant and p.channel = g.channel and p.user_id = g.user_id
       and p.instance_id <> all($2::text[]) and i.seen_at >= now() - $1 * interval '1 millisecond')`;

export function createPgPresence(db: Db, instanceId: string, ttlMs: number): PresenceStore {
  const params = (e: PresenceEntry) => [instanceId, e.tenant ?? '', e.channel, e.userId, ttlMs];
  const register = async () => {
    await db.none(
      `insert into svc_realtime_instances (instance_id) values ($1)
       on conflict (instance_id) do update set seen_at = now()`, [instanceId]);
  };
  return {
    register,
    async join(entry) {
      const row = await db.one<{ elsewhere: boolean }>(
        `with ins as (insert into svc_realtime_presence (instance_id, tenant, channel, user_id)
                      values ($1, $2, $3, $4) on conflict do nothing)
         select ${ELSEWHERE} as elsewhere`, params(entry));
      return !row.elsewhere;
    },
    async leave(entry) {
      const row = await db.one<{ elsewhere: boolean }>(
        `with del as (delete from svc_realtime_presence
                       where instance_id = $1 and tenant = $2 and channel = $3 and user_id = $4)
         select ${ELSEWHERE} as elsewhere`, params(entry));
      return !row.elsewhere;
    },
    async members(tenant, channel) {
      const rows = await db.manyOrNone<{ user_id: string; joined_at: string }>(
        `select p.user_id, min(p.joined_at) as joined_at
           from svc_realtime_presence p join svc_realtime_instances i on i.instance_id = p.instance_id
          where p.tenant = $1 and p.channel = $2 and i.seen_at >= now() - $3 * interval '1 millisecond'
          group by p.user_id order by 2, 1`, [tenant ?? '', channel, ttlMs]);
      return rows.map((r) => ({ userId: r.user_id, joinedAt: isoUtc(r.joined_at) }));
    },
    async heartbeat(local) {
      const seen = await db.result('update svc_realtime_instances set seen_at = now() where instance_id = $1', [instanceId]);
      if (seen.rowCount === 0) await reregister(db, instanceId, local(), register);
      return reap(db, ttlMs);
    },
    async unregister() {
      const rows = await db.manyOrNone(
        `with dead as (delete from svc_realtime_instances where instance_id = $3),
              gone as (delete from svc_realtime_presence where instance_id = $3 returning tenant, channel, user_id)
         ${GONE_EVERYWHERE}`, [ttlMs, [instanceId], instanceId]);
      return rows.map(toEntry);
    },
  };
}

/** Deletes the instances silent for longer than the TTL and their presence rows, in one statement. */
async function reap(db: Db, ttlMs: number): Promise<PresenceEntry[]> {
  const rows = await db.manyOrNone(
    `with dead as (delete from svc_realtime_instances
                    where seen_at < now() - $1 * interval '1 millisecond' returning instance_id),
          gone as (delete from svc_realtime_presence
                    where instance_id in (select instance_id from dead) returning tenant, channel, user_id)
     ${GONE_EVERYWHERE}`, [ttlMs, []]);
  return rows.map(toEntry);
}

/** This instance was taken for dead (a long pause): put its instance and presence rows back. */
async function reregister(db: Db, instanceId: string, local: PresenceEntry[], register: () => Promise<void>) {
  await register();
  if (local.length === 0) return;
  await db.none(
    `insert into svc_realtime_presence (instance_id, tenant, channel, user_id)
     select $1, t, c, u from unnest($2::text[], $3::text[], $4::text[]) as x(t, c, u) on conflict do nothing`,
    [instanceId, local.map((e) => e.tenant ?? ''), local.map((e) => e.channel), local.map((e) => e.userId)]);
}

function toEntry(row: { tenant: string; channel: string; user_id: string }): PresenceEntry {
  return { tenant: row.tenant === '' ? null : row.tenant, channel: row.channel, userId: row.user_id };
}
