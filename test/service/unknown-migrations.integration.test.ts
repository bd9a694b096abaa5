/**
 * A database migrated by a newer version: applied migrations this build has no
 * file for. An instance booting on it says so and is not ready (a rollback to
 * older code against a newer schema); one already running when the newer
 * migration lands stays ready (a rolling upgrade), and the operator's override
 * makes a booting one ready too.
 */
import { Writable } from 'node:stream';
import pg from 'pg';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../helpers/service.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { freePort, spawnCli, waitForServer } from '../helpers/cli.ts';
import { TEST_JWT_SECRET } from '../helpers/service.ts';

const NEWER = ['runtime:future/0001_future.sql', 'schema/9000_from_newer_build.sql'];

async function applyNewer(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    for (const key of NEWER) {
      const [scope, name] = key.split('/');
      await client.query(`insert into svc_migrations (scope, name, checksum) values ($1, $2, 'x')`, [scope, name]);
    }
  } finally {
    await client.end();
  }
}

function capturingLog() {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      lines.push(...chunk.toString().split('\n').filter(Boolean));
      done();
    },
  });
  return { log: pino({ level: 'warn' }, stream), lines };
}

const ready = async (service: { url: string }) => {
  const response = await fetch(`${service.url}/ready`);
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
};

describe('migrations unknown to this build', { timeout: 90_000 }, () => {
  let database: TestDatabase;
  let before: TestService;

  beforeAll(async () => {
    database = await createTestDatabase();
    before = await startTestService({ database });
    await applyNewer(database.url);
  });
  afterAll(async () => {
    await before?.close();
    await database?.drop();
  });

  it('leave an instance that booted before them ready, listing them', async () => {
    expect(await ready(before)).toEqual({ status: 200, body: { status: 'ready', newer: NEWER } });
  });

  it('make an instance booting on them warn once and answer 503 naming them', async () => {
    const { log, lines } = capturingLog();
    const rolledBack = await startTestService({ database, log });
    try {
      expect(await ready(rolledBack)).toEqual({
        status: 503,
        body: {
          status: 'not ready',
          error: 'the database was migrated by a newer version: these migrations are unknown to this build',
          unknown: NEWER,
        },
      });
      const warnings = lines.map((line) => JSON.parse(line).msg as string).filter((msg) => msg.includes('does not know'));
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toContain('SVC_ALLOW_UNKNOWN_MIGRATIONS');
      expect(warnings[0]).toContain('runtime:future/0001_future.sql');
      expect((await fetch(`${rolledBack.url}/health`)).status).toBe(200);
    } finally {
      await rolledBack.close();
    }
  });

  it('are served anyway with SVC_ALLOW_UNKNOWN_MIGRATIONS=true', async () => {
    const allowed = await startTestService({ database, env: { SVC_ALLOW_UNKNOWN_MIGRATIONS: 'true' } });
    try {
      expect(await ready(allowed)).toEqual({ status: 200, body: { status: 'ready', newer: NEWER } });
    } finally {
      await allowed.close();
    }
  });

  it('are named by `svc-gen start` at boot', async () => {
    const port = await freePort();
    const server = spawnCli(['start', before.dir], { env: { DATABASE_URL: database.url, PORT: String(port), JWT_SECRET: TEST_JWT_SECRET } });
    try {
      await waitForServer(server, `http://127.0.0.1:${port}/health`);
      expect((await fetch(`http://127.0.0.1:${port}/ready`)).status).toBe(503);
      const warning = server.output().split('\n').filter((line) => line.includes('does not know'));
      expect(warning).toHaveLength(1);
      expect(warning[0]).toContain('schema/9000_from_newer_build.sql');
    } finally {
      server.child.kill('SIGTERM');
      await server.exited();
    }
  });
});
