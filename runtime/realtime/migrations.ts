/**
 * The realtime channel `migrations`: what any migration runner tells
 * (runtime/db/migrate/news.ts: each backfill batch's progress, each file
 * applied), heard as a Postgres notification by every instance and relayed
 * to this instance's subscribers only, so it reaches every subscriber once
 * whichever transport the tier uses (a starting instance's runner has no tier
 * of its own). Frames: `{op:'message', channel:'migrations', data, from:null}`.
 * The channel is the platform's: global scope, Admins without a tenant only;
 * the prefix is reserved (no other `migrations...` channel may be subscribed
 * to) and no client may publish on it.
 */
import type { Notifier } from '../db/index.ts';
import { MIGRATIONS_NOTIFY_CHANNEL, MIGRATIONS_REALTIME_CHANNEL } from '../db/index.ts';
import type { Logger } from '../log/index.ts';
import type { RealtimeTier } from './tier.ts';

export async function relayMigrationNews(tier: RealtimeTier, notifier: Notifier, log: Logger): Promise<() => Promise<void>> {
  tier.guardChannels(MIGRATIONS_REALTIME_CHANNEL, async (principal, scope, channel) =>
    channel === MIGRATIONS_REALTIME_CHANNEL && principal.role === 'Admin' && scope.tenantId === null);
  return notifier.listen(MIGRATIONS_NOTIFY_CHANNEL, (payload) => {
    let raw: string;
    try {
      raw = JSON.stringify(JSON.parse(payload)); // a foreign notification on the channel never breaks a frame
    } catch {
      log.warn({ channel: MIGRATIONS_NOTIFY_CHANNEL }, 'realtime: ignored a notification that is not JSON');
      return;
    }
    tier.deliverHere(null, MIGRATIONS_REALTIME_CHANNEL, raw);
  });
}
