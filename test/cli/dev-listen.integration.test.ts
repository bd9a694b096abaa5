/**
 * Where `svc-gen dev` listens, and how fast it stops. Its IDE, schema and
 * signing secret are open to whoever reaches it, so it listens on loopback
 * unless --host (or HOST) says otherwise. Ctrl-C stops it at once even after a
 * request whose client gave up while the first build ran (a readiness poll
 * with a timeout): that response had closed before it was routed and was
 * once waited for until the 10 s retire timer.
 */
import { copyFileSync, mkdtempSync } from 'node:fs';
import { connect } from 'node:net';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/service.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { freePort, spawnCli, waitForServer, type Spawned } from '../helpers/cli.ts';

/** Whether a TCP connection to host:port is accepted. */
function connects(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port, timeout: 2_000 });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
    socket.once('timeout', () => {
      socket.destroy();
      resolve(false);
    });
  });
}

/** An IPv4 address of this machine other than loopback, if it has one. */
function externalAddress(): string | null {
  const all = Object.values(networkInterfaces()).flatMap((list) => list ?? []);
  return all.find((entry) => entry.family === 'IPv4' && !entry.internal)?.address ?? null;
}

async function until(check: () => Promise<boolean> | boolean, timeoutMs: number, what: string, dev: Spawned): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms\n--- output ---\n${dev.output()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('svc-gen dev: listening address and Ctrl-C', { timeout: 180_000 }, () => {
  let database: TestDatabase;
  let schema: string;
  let work: string;

  beforeAll(async () => {
    database = await createTestDatabase();
    work = mkdtempSync(join(tmpdir(), 'svc-dev-listen-'));
    schema = join(work, 'schema.ts');
    copyFileSync(join(REPO_ROOT, 'fixtures', 'small', 'schema.ts'), schema);
  });
  afterAll(() => database.drop());

  it('listens on 127.0.0.1 by default, and stops within 2 s of SIGINT after a request given up during boot', async () => {
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const dev = spawnCli(['dev', '--schema', schema], { cwd: work, env: { PORT: String(port), DATABASE_URL: database.url } });
    try {
      // The port answers before the first build is served: this request is held, and its client gives up.
      await until(() => connects('127.0.0.1', port), 60_000, 'the dev port', dev);
      const gaveUp = await fetch(`${base}/ready`, { signal: AbortSignal.timeout(300) }).then(() => 'answered', (error: Error) => error.name);
      expect(gaveUp).toBe('TimeoutError');
      await waitForServer(dev, `${base}/ready`, 90_000);
      await until(() => dev.output().includes('watching schema.ts'), 60_000, 'the watch', dev);

      expect(dev.output()).toContain(`listening on 127.0.0.1:${port} only`);
      const external = externalAddress();
      if (external) expect(await connects(external, port)).toBe(false);
    } catch (error) {
      dev.child.kill('SIGKILL');
      throw error;
    }
    const begun = performance.now();
    dev.child.kill('SIGINT');
    expect(await dev.exited()).toBe(0);
    const stopMs = Math.round(performance.now() - begun);
    console.log(`svc-gen dev stopped ${stopMs} ms after SIGINT`);
    expect(stopMs).toBeLessThan(2_000);
  });

  it('listens where --host says', async () => {
    const port = await freePort();
    const dev = spawnCli(['dev', '--schema', schema, '--host', '0.0.0.0'], { cwd: work, env: { PORT: String(port), DATABASE_URL: database.url } });
    try {
      await waitForServer(dev, `http://127.0.0.1:${port}/ready`, 90_000);
      expect(dev.output()).toContain(`listening on 0.0.0.0:${port}`);
      const external = externalAddress();
      if (external) expect((await fetch(`http://${external}:${port}/health`)).status).toBe(200);
    } finally {
      dev.child.kill('SIGTERM');
      await dev.exited();
    }
  });
});
