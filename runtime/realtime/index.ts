/**
 * The ephemeral realtime tier at /realtime/ws: channels, presence and fan-out
 * across every instance sharing the database. Nothing of it reaches the event
 * log. Provides `ctx.services.realtime` (RealtimeBus) to later capabilities.
 */
import { fileURLToPath } from 'node:url';
import { newId } from '../ids.ts';
import { newestMigration } from '../db/index.ts';
import { defineCapability, type ServiceContext } from '../core/index.ts';
import type { RealtimeConfig } from './config.ts';
import { createPgPresence } from './presence.ts';
import { INSTANCES_PATHS, mountInstancesRoute } from './instances.ts';
import { watchRevocations } from './revocation.ts';
import { relayMigrationNews } from './migrations.ts';
import { createRealtimeServer, REALTIME_PATH, type RealtimeServer } from './server.ts';
import { RealtimeTier } from './tier.ts';
import { createPgTransport, type Transport } from './transport.ts';

export type { RealtimeBus, ChannelGuard } from './types.ts';
export type { RealtimeConfig } from './config.ts';
export { REALTIME_PATH } from './server.ts';

/** An instance silent for this many heartbeats is dead. */
const HEARTBEATS_TO_EXPIRE = 3;

export const realtime = defineCapability({
  name: 'realtime',
  provides: ['realtime'],
  requires: ['auth', 'openapi'],
  migrations: fileURLToPath(new URL('./migrations/', import.meta.url)),
  async init(ctx) {
    const config = ctx.config.realtime;
    const instanceId = newId();
    const schemaMigration = newestMigration(ctx.migrations);
    const presence = createPgPresence(ctx.db, instanceId, config.heartbeatMs * HEARTBEATS_TO_EXPIRE, schemaMigration);
    const tier = new RealtimeTier(instanceId, await transportOf(ctx), presence, ctx.log);
    await tier.start();
    ctx.services.realtime = tier;
    const { auth } = ctx.services;
    const server = createRealtimeServer(tier, config, auth, ctx.log);
    ctx.onUpgrade(REALTIME_PATH, server.upgrade);
    // The registry's operator view (the console's overview).
    mountInstancesRoute(ctx.router, { db: ctx.db, auth, self: instanceId, schemaMigration });
    ctx.services.openapi.add(INSTANCES_PATHS);
    const unwatch = await watchRevocations(ctx.notifier, tier.hub.sessions, auth, ctx.log);
    const unrelay = await relayMigrationNews(tier, ctx.notifier, ctx.log);
    const timers = startTimers(ctx, tier, server, config);
    return {
      async stop() {
        timers.forEach(clearInterval);
        await unwatch();
        await unrelay();
        tier.quiesce();
        await server.closeAll();
        await tier.stop();
      },
    };
  },
});

/**
 * Redis when SVC_BUS_URL is set, else Postgres NOTIFY (outside any write
 * transaction). The Redis client is imported only when configured (start time).
 */
async function transportOf(ctx: ServiceContext<never>): Promise<Transport> {
  const { busUrl } = ctx.config.realtime;
  if (busUrl === null) return createPgTransport(ctx.db, ctx.notifier, ctx.log);
  const tier = ctx.config.databaseUrl === null ? `embedded:${ctx.root}` : tierOf(ctx.config.databaseUrl);
  const { createRedisTransport } = await import('./redis.ts');
  return createRedisTransport({ url: busUrl, tier, log: ctx.log });
}

/** Instances on one database form one tier: the server and database name, without credentials. */
function tierOf(databaseUrl: string): string {
  const url = new URL(databaseUrl);
  return `${url.hostname}:${url.port || '5432'}${url.pathname}`;
}

function startTimers(ctx: ServiceContext<never>, tier: RealtimeTier, server: RealtimeServer, config: RealtimeConfig) {
  let beating = false;
  const heartbeat = setInterval(() => {
    if (beating) return; // a slow database must not pile up heartbeats
    beating = true;
    tier.heartbeat()
      .catch((err: unknown) => ctx.log.warn({ err }, 'realtime: heartbeat failed'))
      .finally(() => (beating = false));
  }, config.heartbeatMs);
  const ping = setInterval(() => server.ping(), config.pingMs);
  heartbeat.unref();
  ping.unref();
  return [heartbeat, ping];
}
