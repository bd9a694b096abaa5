/**
 * The feed on the embedded database (PGlite, one connection), in both cursor
 * modes (ADR 025 decision 4; `tenant` stamps every write's position before
 * its commit): subscriptions, the projection consumer and a replay run
 * together without deadlock, while writes land concurrently.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient, type Client } from 'graphql-ws';
import { pino } from 'pino';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TokenSigner } from '../../runtime/auth/index.ts';
import { startService, type RunningService } from '../../runtime/service/index.ts';
import { buildFixture, loadDefinition, mintToken, TEST_JWT_SECRET } from '../helpers/service.ts';
import { post, RECORDS_FIXTURE } from '../records/helpers.ts';
import { collect, until } from './helpers.ts';

describe.each(['global', 'tenant'] as const)('feed on the embedded database, cursor %s', (mode) => {
  let service: RunningService;
  let token: string;
  let client: Client | null = null;

  beforeAll(async () => {
    const dir = await buildFixture(RECORDS_FIXTURE);
    const env = {
      JWT_SECRET: TEST_JWT_SECRET, SVC_LOG_LEVEL: 'warn', RATE_LIMIT_RPS: '1000000', SVC_ARGON2_MEMORY_KIB: '1024', SVC_ARGON2_TIME_COST: '1',
      SVC_FEED_CURSOR: mode,
    };
    const embeddedDir = join(mkdtempSync(join(tmpdir(), 'svc-feed-embedded-')), 'pgdata');
    service = await startService(await loadDefinition(dir), { env, port: 0, host: '127.0.0.1', embeddedDir, log: pino({ level: 'silent' }) });
    expect(service.ctx.dbKind).toBe('embedded');
    expect(service.ctx.services.feed.mode).toBe(mode);
    token = await mintToken(service.ctx.db, new TokenSigner(TEST_JWT_SECRET, 3600), { role: 'Manager' });
  }, 120_000);
  afterAll(async () => {
    await client?.dispose();
    await service?.stop();
  });

  const create = (name: string) => post(service.url, {
    query: 'mutation($d: JSON!) { create(model: "Company", data: $d) }', variables: { d: { name } },
  }, { authorization: `Bearer ${token}` }).then((r) => r.data.create as { id: string });

  it('delivers to subscribers and refreshes projections on one connection, under concurrent writes', { timeout: 60_000 }, async () => {
    const received: any[] = [];
    // Other capabilities (the workflow runners) subscribe too: wait for these two.
    const before = service.ctx.services.feed.stats().subscribers;
    client = createClient({ url: `${service.url.replace('http', 'ws')}/graphql/ws`, webSocketImpl: WebSocket, connectionParams: { token }, retryAttempts: 0 });
    client.subscribe({ query: 'subscription { modelChanges(model: "Company") { eventId recordId } }' }, {
      next: (message) => received.push(message.data!.modelChanges), error: () => undefined, complete: () => undefined,
    });
    const inProcess = collect(service.ctx.services.feed, { accepts: (c) => c.modelName === 'Company' });
    await until(() => service.ctx.services.feed.stats().subscribers >= before + 2, 'both subscribers');

    const rows = await Promise.all(Array.from({ length: 25 }, (_, i) => create(`Embedded ${i}`)));
    await until(() => received.length >= 25 && inProcess.changes.length >= 25, '25 changes on both subscribers');
    expect(received.map((c) => c.recordId).sort()).toEqual(rows.map((r) => r.id).sort());
    await until(async () => (await service.ctx.db.one('select count(*)::int as n from company_projection')).n === 25, 'the projection');

    // A replay from the first change (in the mode's positions: the global scope's tenant_seq), while more writes land.
    const firstBatch = inProcess.changes.slice(0, 25);
    const first = inProcess.changes[0];
    const from = mode === 'tenant' ? { tenant: '', seq: first.tenantSeq! } : first.position;
    const replay = collect(service.ctx.services.feed, { from, accepts: (c) => c.modelName === 'Company' });
    const more = await Promise.all(Array.from({ length: 5 }, (_, i) => create(`More ${i}`)));
    await until(() => replay.changes.length >= 29, 'the replay and the live changes');
    const expected = [...firstBatch.slice(1).map((c) => c.recordId), ...more.map((r) => r.id)];
    expect(replay.changes.map((c) => c.recordId).sort()).toEqual(expected.sort());
    replay.subscription.close();
    inProcess.subscription.close();
  });
});
