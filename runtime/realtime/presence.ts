/**
 * Presence shared by every instance: one row per (instance, tenant, channel,
 * user) in svc_realtime_presence, and a heartbeat per instance. Rows of an
 * instance silent for three heartbeats are ignored at once and deleted by
 * whichever instance sweeps first, which then announces the leaves. All time
 * comparisons use the database clock, so instance clocks may drift.
 */
import { hostname } from 'node:os';
import { isoUtc, type Db } from '../db/index.ts';
import { compile, sql, type Sql } from '../sql/index.ts';
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

/** An instance seen within `ttlMs` is alive. */
const alive = (ttlMs: number) => sql`i.seen_at >= now() - ${sql.value(ttlMs)} * interval '1 millisecond'`;

/** The scope key of an entry: tenant ('' = global), channel, user. */
const keyOf = (e: PresenceEntry) => ({ tenant: sql.value(e.tenant ?? ''), channel: sql.value(e.channel), user: sql.value(e.userId) });

/** Another live instance has the entry. */
function elsewhere(instanceId: string, e: PresenceEntry, ttlMs: number): Sql {
  const key = keyOf(e);
  return sql`exists (
  select 1 from svc_realtime_presence p join svc_realtime_instances i on i.instance_id = p.instance_id
   where p.tenant = ${key.tenant} and p.channel = ${key.channel} and p.user_id = ${key.user} and p.instance_id <> ${sql.value(instanceId)}
     and ${alive(ttlMs)})`;
}

/** The keys of `gone` that no live instance outside `except` still has. */
function goneEverywhere(ttlMs: number, except: string[]): Sql {
  return sql`select distinct g.tenant, g.channel, g.user_id from gone g
  where not exists (
    select 1 from svc_realtime_presence p join svc_realtime_instances i on i.instance_id = p.instance_id
     where p.tenant = g.tenant and p.channel = g.channel and p.user_id = g.user_id
       and p.instance_id <> all(${sql.value(except, 'text[]')}) and ${alive(ttlMs)})`;
}

/** Where an instance runs, as the operator's list of instances shows it (GET /meta/instances). */
export interface InstanceOrigin {
  readonly host: string;
  readonly pid: number;
}

const THIS_PROCESS: InstanceOrigin = { host: hostname(), pid: process.pid };

/**
 * `schemaMigration`: the newest schema migration of this build, for the
 * migration runner's contract gate (runtime/db/migrate/gate.ts).
 */
export function createPgPresence(
  db: Db, instanceId: string, ttlMs: number, schemaMigration: string | null = null, origin: InstanceOrigin = THIS_PROCESS,
): PresenceStore {
  const register = async () => {
    await db.none(compile(sql`
      insert into svc_realtime_instances (instance_id, schema_migration, ttl_ms, host, pid)
       values (${sql.value(instanceId)}, ${sql.value(schemaMigration)}, ${sql.value(ttlMs, 'int')},
               ${sql.value(origin.host)}, ${sql.value(origin.pid, 'int')})
       on conflict (instance_id) do update set seen_at = now()`));
  };
  return {
    register,
    async join(entry) {
      const key = keyOf(entry);
      const row = await db.one<{ elsewhere: boolean }>(compile(sql`
        with ins as (insert into svc_realtime_presence (instance_id, tenant, channel, user_id)
                      values (${sql.value(instanceId)}, ${key.tenant}, ${key.channel}, ${key.user}) on conflict do nothing)
         select ${elsewhere(instanceId, entry, ttlMs)} as elsewhere`));
      return !row.elsewhere;
    },
    async leave(entry) {
      const key = keyOf(entry);
      const row = await db.one<{ elsewhere: boolean }>(compile(sql`
        with del as (delete from svc_realtime_presence
                       where instance_id = ${sql.value(instanceId)} and tenant = ${key.tenant} and channel = ${key.channel}
                         and user_id = ${key.user})
         select ${elsewhere(instanceId, entry, ttlMs)} as elsewhere`));
      return !row.elsewhere;
    },
    async members(tenant, channel) {
      const rows = await db.manyOrNone<{ user_id: string; joined_at: string }>(compile(sql`
        select p.user_id, min(p.joined_at) as joined_at
           from svc_realtime_presence p join svc_realtime_instances i on i.instance_id = p.instance_id
          where p.tenant = ${sql.value(tenant ?? '')} and p.channel = ${sql.value(channel)} and ${alive(ttlMs)}
          group by p.user_id order by 2, 1`));
      return rows.map((r) => ({ userId: r.user_id, joinedAt: isoUtc(r.joined_at) }));
    },
    async heartbeat(local) {
      const seen = await db.result(compile(sql`
        update svc_realtime_instances set seen_at = now() where instance_id = ${sql.value(instanceId)}`));
      if (seen.rowCount === 0) await reregister(db, instanceId, local(), register);
      return reap(db, ttlMs);
    },
    async unregister() {
      const rows = await db.manyOrNone(compile(sql`
        with dead as (delete from svc_realtime_instances where instance_id = ${sql.value(instanceId)}),
              gone as (delete from svc_realtime_presence where instance_id = ${sql.value(instanceId)} returning tenant, channel, user_id)
         ${goneEverywhere(ttlMs, [instanceId])}`));
      return rows.map(toEntry);
    },
  };
}

/** Deletes the instances silent for longer than the TTL and their presence rows, in one statement. */
async function reap(db: Db, ttlMs: number): Promise<PresenceEntry[]> {
  const rows = await db.manyOrNone(compile(sql`
    with dead as (delete from svc_realtime_instances
                    where seen_at < now() - ${sql.value(ttlMs)} * interval '1 millisecond' returning instance_id),
          gone as (delete from svc_realtime_presence
                    where instance_id in (select instance_id from dead) returning tenant, channel, user_id)
     ${goneEverywhere(ttlMs, [])}`));
  return rows.map(toEntry);
}

/** This instance was taken for dead (a long pause): put its instance and presence rows back. */
async function reregister(db: Db, instanceId: string, local: PresenceEntry[], register: () => Promise<void>) {
  await register();
  if (local.length === 0) return;
  await db.none(compile(sql`
    insert into svc_realtime_presence (instance_id, tenant, channel, user_id)
     select ${sql.value(instanceId)}, t, c, u
       from unnest(${sql.value(local.map((e) => e.tenant ?? ''), 'text[]')}, ${sql.value(local.map((e) => e.channel), 'text[]')},
                   ${sql.value(local.map((e) => e.userId), 'text[]')}) as x(t, c, u)
     on conflict do nothing`));
}

function toEntry(row: { tenant: string; channel: string; user_id: string }): PresenceEntry {
  return { tenant: row.tenant === '' ? null : row.tenant, channel: row.channel, userId: row.user_id };
}
