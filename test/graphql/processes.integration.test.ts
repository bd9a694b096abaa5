/**
 * Delivery across server processes: two `svc-gen start` processes on one
 * database; a subscriber on one hears a create made through the other
 * (change notices travel through Postgres LISTEN/NOTIFY).
 */
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';
import { mkdtempSync, cpSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pgPromise from 'pg-promise';
import { expect, it } from 'vitest';
import { TokenSigner } from '../../runtime/auth/index.ts';
import { createTestDatabase } from '../helpers/db.ts';
import { buildFixture, mintToken, TEST_JWT_SECRET } from '../helpers/service.ts';
import { freePort, spawnCli, waitForServer, type Spawned } from '../helpers/cli.ts';

it('delivers modelChanges to a subscriber on another server process', { timeout: 120_000 }, async () => {
  const database = await createTestDatabase();
  const dir = mkdtempSync(join(tmpdir(), 'svc-procs-'));
  cpSync(await buildFixture('small'), dir, { recursive: true });
  const ports = [await freePort(), await freePort()];
  const servers: Spawned[] = ports.map((port) => spawnCli(['start', dir], {
    env: { DATABASE_URL: database.url, PORT: String(port), JWT_SECRET: TEST_JWT_SECRET },
  }));
  const pgp = pgPromise({ noWarnings: true });
  const db = pgp(database.url);
  const client = createClient({
    url: `ws://127.0.0.1:${ports[0]}/graphql/ws`, webSocketImpl: WebSocket, retryAttempts: 0,
    connectionParams: async () => ({ token: await mintToken(db, new TokenSigner(TEST_JWT_SECRET, 3600), { role: 'Admin', userId: 'watcher' }) }),
  });
  try {
    for (const [i, port] of ports.entries()) await waitForServer(servers[i], `http://127.0.0.1:${port}/ready`);
    const changes: any[] = [];
    const subscribed = new Promise<void>((done) => client.on('connected', () => setTimeout(done, 300)));
    client.subscribe({ query: 'subscription { modelChanges(model: "Project") { eventType modelName eventId recordId tenantId } }' }, {
      next: (message) => changes.push(message.data?.modelChanges), error: () => undefined, complete: () => undefined,
    });
    await subscribed;

    const token = await mintToken(db, new TokenSigner(TEST_JWT_SECRET, 3600), { role: 'Admin', userId: 'writer' });
    const response = await fetch(`http://127.0.0.1:${ports[1]}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ query: 'mutation { create(model: "Project", data: { name: "Cross-process" }) }' }),
    });
    const created = ((await response.json()) as any).data.create;
    const deadline = Date.now() + 10_000;
    while (changes.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(changes).toHaveLength(1);
    expect(changes[0]).toMatchObject({ eventType: 'Created', modelName: 'Project', recordId: created.id, tenantId: null });
    expect(changes[0].eventId).toMatch(/^[0-9A-Z]{26}$/);
  } finally {
    await client.dispose();
    for (const server of servers) server.child.kill('SIGTERM');
    for (const server of servers) await server.exited();
    await db.$pool.end();
    await database.drop();
  }
});
