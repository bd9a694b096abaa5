/** Shared by the feed tests: a subscriber that collects, raw event inserts, and waiting on conditions. */
import pg from 'pg';
import { ulid } from 'ulid';
import type { ChangeFeed, FeedChange, FeedSubscription, SubscribeOptions } from '../../runtime/feed/index.ts';

export interface Collector {
  readonly changes: FeedChange[];
  error: unknown;
  readonly subscription: FeedSubscription;
}

/** Subscribes and drains into an array in the background. */
export function collect(feed: ChangeFeed, options: SubscribeOptions = {}): Collector {
  const subscription = feed.subscribe(options);
  const collector: Collector = { changes: [], error: null, subscription };
  void (async () => {
    try {
      for await (const change of subscription) collector.changes.push(change);
    } catch (error) {
      collector.error = error;
    }
  })();
  return collector;
}

/** Polls `ok` until it holds; throws with `what` after the deadline. */
export async function until(ok: () => boolean | Promise<boolean>, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await ok())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** One event row as the records layer writes it, on a client of our own (its own transaction, if one is open). */
export async function insertEvent(client: pg.Client | pg.Pool, streamType: string, tenantId: string | null = null): Promise<string> {
  const id = ulid();
  await client.query(
    `insert into svc_events (id, stream_type, stream_id, version, event_type, data, actor_id, tenant_id)
     values ($1, $2, $3, 1, 'Created', '{}'::jsonb, 'test', $4)`,
    [id, streamType, ulid(), tenantId ?? ''], // the global scope is stored as '' (layout 3)
  );
  return id;
}

export async function connect(url: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: url, application_name: 'feed-test' });
  await client.connect();
  return client;
}
