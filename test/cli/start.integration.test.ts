import { cpSync, mkdtempSync, readFileSync, writeFileSync, appendFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildFixture, TEST_JWT_SECRET } from '../helpers/service.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { freePort, runCli, spawnCli, startCliServer, waitForServer, type Spawned } from '../helpers/cli.ts';

/** A private copy of the built fixture: these tests edit migrations. */
async function projectCopy(): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-start-'));
  cpSync(await buildFixture('small'), dir, { recursive: true });
  return dir;
}

/** Waits for `text` in a spawned server's output (a log line written after it answers, say). */
async function outputContains(server: Spawned, text: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!server.output().includes(text)) {
    if (Date.now() > deadline) throw new Error(`no "${text}" within ${timeoutMs} ms\n--- output ---\n${server.output()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const occurrences = (text: string, part: string) => text.split(part).length - 1;

async function appliedMigrations(url: string): Promise<string[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ scope: string; name: string }>('select scope, name from svc_migrations order by scope, name');
    return rows.map((row) => `${row.scope}/${row.name}`);
  } finally {
    await client.end();
  }
}

describe('svc-gen start', { timeout: 90_000 }, () => {
  let database: TestDatabase;
  let dir: string;

  beforeAll(async () => {
    database = await createTestDatabase();
    dir = await projectCopy();
  });
  afterAll(() => database.drop());

  it('serves /health, /ready, /meta/schema and /schema.ts, and stops on SIGTERM', async () => {
    const port = await freePort();
    const server = spawnCli(['start', dir], { env: { DATABASE_URL: database.url, PORT: String(port), JWT_SECRET: TEST_JWT_SECRET } });
    try {
      const base = `http://127.0.0.1:${port}`;
      await waitForServer(server, `${base}/health`);
      const ready = await fetch(`${base}/ready`);
      expect(ready.status).toBe(200);
      const meta = (await (await fetch(`${base}/meta/schema`)).json()) as any;
      const snapshotModels = Object.keys(JSON.parse(readFileSync(join(dir, 'schema.snapshot.json'), 'utf8')).models ?? {});
      expect(meta.kind).toBe('schema');
      expect(meta.models.map((m: { name: string }) => m.name).sort()).toEqual(snapshotModels.sort());
      const schema = await fetch(`${base}/schema.ts`);
      expect(schema.status).toBe(200);
      expect(await schema.text()).toBe(readFileSync(join(dir, 'schema.ts'), 'utf8'));
      const missing = await fetch(`${base}/no/such/route`);
      expect(missing.status).toBe(404);
      expect(await missing.json()).toEqual({ error: 'not found', code: 'NOT_FOUND' });
    } finally {
      server.child.kill('SIGTERM');
    }
    expect(await server.exited()).toBe(0);
    expect(server.output()).toContain('stopped');
  });

  it('answers /ready with 503 while a migration is pending', async () => {
    const port = await freePort();
    const server = spawnCli(['start', dir], { env: { DATABASE_URL: database.url, PORT: String(port), JWT_SECRET: TEST_JWT_SECRET } });
    const pendingFile = join(dir, 'migrations', '9999_pending.sql');
    try {
      const base = `http://127.0.0.1:${port}`;
      await waitForServer(server, `${base}/ready`);
      writeFileSync(pendingFile, 'select 1;\n');
      const ready = await fetch(`${base}/ready`);
      expect(ready.status).toBe(503);
      expect(((await ready.json()) as any).pending).toContain('schema/9999_pending.sql');
      expect((await fetch(`${base}/health`)).status).toBe(200);
    } finally {
      server.child.kill('SIGTERM');
      await server.exited();
      const { rmSync } = await import('node:fs');
      rmSync(pendingFile, { force: true });
    }
  });

  it('hides /schema.ts in production', async () => {
    const port = await freePort();
    const server = spawnCli(['start', dir], {
      env: { DATABASE_URL: database.url, PORT: String(port), JWT_SECRET: TEST_JWT_SECRET, SVC_ENV: 'production' },
    });
    try {
      await waitForServer(server, `http://127.0.0.1:${port}/health`);
      expect((await fetch(`http://127.0.0.1:${port}/schema.ts`)).status).toBe(404);
      await outputContains(server, 'svc-gen server listening');
      expect(server.output()).not.toContain('SVC_ENV is not production');
    } finally {
      server.child.kill('SIGTERM');
      await server.exited();
    }
  });
});

describe('configuration at start', { timeout: 90_000 }, () => {
  it('refuses to start in production without JWT_SECRET, naming it', async () => {
    const dir = await buildFixture('small');
    const result = await runCli(['start', dir], { env: { SVC_ENV: 'production', DATABASE_URL: 'postgres://127.0.0.1:1/none' } });
    expect(result.code).toBe(1);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(result.stderr).toContain('JWT_SECRET');
  });

  it('refuses an embedded database in production', async () => {
    const dir = await buildFixture('small');
    const result = await runCli(['start', dir], { env: { SVC_ENV: 'production', JWT_SECRET: TEST_JWT_SECRET } });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('DATABASE_URL');
  });

  it('stops with a one-line message naming a bad variable', async () => {
    const dir = await buildFixture('small');
    const result = await runCli(['start', dir], { env: { PORT: 'eighty', DATABASE_URL: 'postgres://127.0.0.1:1/none' } });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^svc-gen: PORT must be/);
    expect(result.stderr).not.toMatch(/\n\s+at /);
  });

  it('says nothing about the first user once one exists', async () => {
    const database = await createTestDatabase();
    const port = await freePort();
    const admin = { email: 'first@example.test', password: 'First-passw0rd!' };
    const server = await startCliServer(await projectCopy(), { databaseUrl: database.url, port, admin });
    try {
      // The check is logged before the server listens.
      await outputContains(server, 'svc-gen server listening');
      expect(server.output()).toContain('admin user created from ADMIN_EMAIL');
      expect(server.output()).not.toContain('no user exists yet');
    } finally {
      server.child.kill('SIGTERM');
      await server.exited();
      await database.drop();
    }
  });

  it('names every bad or missing variable in one run, a line each, without a stack trace', async () => {
    const dir = await buildFixture('small');
    const result = await runCli(['start', dir], { env: { SVC_ENV: 'production', PORT: 'eighty', SVC_METRICS_TOKEN: 'short' } });
    expect(result.code).toBe(1);
    expect(result.stderr.trim().split('\n')).toEqual([
      expect.stringMatching(/^svc-gen: JWT_SECRET is required/),
      expect.stringMatching(/^svc-gen: DATABASE_URL is required/),
      expect.stringMatching(/^svc-gen: PORT must be/),
      expect.stringMatching(/^svc-gen: SVC_METRICS_TOKEN must be/),
    ]);
    expect(result.stderr).not.toMatch(/\n\s+at /);
  });

  it('warns and uses an insecure secret in development without JWT_SECRET', async () => {
    const database = await createTestDatabase();
    const port = await freePort();
    const server = spawnCli(['start', await projectCopy()], { env: { DATABASE_URL: database.url, PORT: String(port) } });
    try {
      await waitForServer(server, `http://127.0.0.1:${port}/health`);
      expect(server.output()).toContain('JWT_SECRET is not set');
      // SVC_ENV unset is development (the specification's default): one warning says what that opens, and how to close it.
      const warning = server.output().split('\n').filter((line) => line.includes('SVC_ENV is not production'));
      expect(warning).toHaveLength(1);
      expect(warning[0]).toContain('"level":40');
      for (const part of ['GET /meta/schema', 'GET /schema.ts', 'GET /graphql', 'GET /playground', 'JWT_SECRET is not set', 'Set SVC_ENV=production']) {
        expect(warning[0]).toContain(part);
      }
      // A database without a user: how to create the first one, once.
      await outputContains(server, 'svc-gen server listening');
      expect(occurrences(server.output(), 'no user exists yet')).toBe(1);
      expect(server.output()).toContain('set ADMIN_EMAIL and ADMIN_PASSWORD and restart');
      expect(server.output()).toContain('POST /auth/users');
    } finally {
      server.child.kill('SIGTERM');
      await server.exited();
      await database.drop();
    }
  });
});

describe('svc-gen migrate', { timeout: 90_000 }, () => {
  it('applies pending migrations once and refuses an edited applied file', async () => {
    const database = await createTestDatabase();
    try {
      const dir = await projectCopy();
      const env = { DATABASE_URL: database.url };
      const first = await runCli(['migrate', dir], { env });
      expect(first.code).toBe(0);
      const schemaFiles = readdirSync(join(dir, 'migrations')).filter((f) => f.endsWith('.sql'));
      for (const file of schemaFiles) expect(first.stdout).toContain(`applied schema/${file}`);
      const again = await runCli(['migrate', dir], { env });
      expect(again.code).toBe(0);
      expect(again.stdout).toContain('no pending migrations');

      appendFileSync(join(dir, 'migrations', schemaFiles[0]), '\n-- edited\n');
      const edited = await runCli(['migrate', dir], { env });
      expect(edited.code).toBe(1);
      expect(edited.stderr).toContain(schemaFiles[0]);
      expect(edited.stderr).toContain('checksum');
    } finally {
      await database.drop();
    }
  });

  it('rolls back a failing migration file whole', async () => {
    const database = await createTestDatabase();
    try {
      const dir = await projectCopy();
      writeFileSync(join(dir, 'migrations', '9000_broken.sql'), 'create table half_done (x int);\nselect no_such_function();\n');
      const result = await runCli(['migrate', dir], { env: { DATABASE_URL: database.url } });
      expect(result.code).toBe(1);
      expect(result.stderr).toContain('9000_broken.sql');
      const client = new pg.Client({ connectionString: database.url });
      await client.connect();
      const { rows } = await client.query(`select to_regclass('half_done') as t`);
      await client.end();
      expect(rows[0].t).toBeNull();
    } finally {
      await database.drop();
    }
  });
});

describe('two instances starting together', { timeout: 90_000 }, () => {
  it('both come up with one set of migrations applied', async () => {
    const database = await createTestDatabase();
    const dir = await projectCopy();
    const ports = [await freePort(), await freePort()];
    const servers = ports.map((port) =>
      spawnCli(['start', dir], { env: { DATABASE_URL: database.url, PORT: String(port), JWT_SECRET: TEST_JWT_SECRET } }));
    try {
      for (const port of ports) expect((await waitForServer(servers[ports.indexOf(port)], `http://127.0.0.1:${port}/ready`)).status).toBe(200);
      const applied = await appliedMigrations(database.url);
      expect(new Set(applied).size).toBe(applied.length);
      const schemaFiles = readdirSync(join(dir, 'migrations')).filter((f) => f.endsWith('.sql'));
      expect(applied.filter((name) => name.startsWith('schema/'))).toEqual(schemaFiles.map((f) => `schema/${f}`));
    } finally {
      for (const server of servers) server.child.kill('SIGTERM');
      for (const server of servers) await server.exited();
      await database.drop();
    }
  });
});
