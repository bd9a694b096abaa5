/**
 * Start a real server for a test: a fixture's build (cached across test
 * processes, test/helpers/fixtures.ts), its own database on the local Postgres
 * cloned from the fixture's migrated template (template.ts), a free port.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { defineService, startService, type RunningService } from '../../runtime/service/index.ts';
import { TokenSigner, type Principal } from '../../runtime/auth/index.ts';
import type { Role } from '../../runtime/ir/types.ts';
import type { Logger } from '../../runtime/log/index.ts';
import { createTestDatabase, type TestDatabase } from './db.ts';
import { buildFixture, DEFAULT_FIXTURE } from './fixtures.ts';
import { startPgbouncer, type Pgbouncer } from './pgbouncer.ts';
import { pino } from 'pino';
import { ulid } from 'ulid';
import type { Db } from '../../runtime/db/index.ts';

export { buildFixture, privateBuild, REPO_ROOT } from './fixtures.ts';

export const TEST_JWT_SECRET = 'test-secret-of-sufficient-length-0123456789';

export interface TestService extends RunningService {
  readonly database: TestDatabase;
  readonly dir: string;
  /** Mints an access token the server accepts. */
  token(principal: Partial<Principal> & { role: Role }): Promise<string>;
  /** Stops the server and drops its database. */
  close(): Promise<void>;
}

export interface TestServiceOptions {
  readonly fixture?: string;
  readonly env?: Record<string, string>;
  /** Reuse an existing database (e.g. a second instance). */
  readonly database?: TestDatabase;
  readonly log?: Logger;
  /** Listen on this port (e.g. a restart where clients reconnect); a free one by default. */
  readonly port?: number;
  /**
   * The built project to serve, for a test that changes it (a private copy of
   * the fixture's build, see privateBuild): the build `buildFixture` returns is
   * shared by every test file of a worker process.
   */
  readonly dir?: string;
}

export async function loadDefinition(dir: string) {
  const snapshot = JSON.parse(readFileSync(join(dir, 'schema.snapshot.json'), 'utf8'));
  const { access } = await import(pathToFileURL(join(dir, 'access.ts')).href);
  const { resolvers } = await import(pathToFileURL(join(dir, 'resolvers', 'index.ts')).href);
  const { projections } = await import(pathToFileURL(join(dir, 'resolvers', '_projections.ts')).href);
  return defineService({ snapshot, access, resolvers, projections, root: pathToFileURL(`${dir}/`) });
}

/**
 * A token the server accepts: the auth capability checks that the token's
 * session is live, so the user and a session are inserted as a login would.
 */
export async function mintToken(db: Db, signer: TokenSigner, p: Partial<Principal> & { role: Role }): Promise<string> {
  const userId = p.userId ?? `user-${p.role}`;
  const tenantId = p.tenantId ?? null;
  const insertUser = (email: string) => db.none(
    `insert into svc_users (id, email, role, tenant_id) values ($1, $2, $3, $4) on conflict do nothing`,
    [userId, email, p.role, tenantId],
  );
  await insertUser((p.email ?? `${userId}@test.invalid`).toLowerCase());
  const exists = await db.oneOrNone('select 1 from svc_users where id = $1', [userId]);
  if (!exists) await insertUser(`${userId}.${ulid()}@test.invalid`.toLowerCase()); // the email belonged to another id
  const sessionId = p.sessionId ?? ulid();
  await db.none(
    `insert into svc_sessions (id, user_id, role, tenant_id, expires_at)
     values ($1, $2, $3, $4, now() + interval '1 day') on conflict (id) do nothing`,
    [sessionId, userId, p.role, tenantId],
  );
  return signer.sign({ userId, role: p.role, tenantId, sessionId, email: p.email ?? null });
}

let pooler: Promise<Pgbouncer> | null = null;

/**
 * SVC_TEST_POOLER=pgbouncer runs every test service of this process through one
 * pgbouncer in transaction mode (test/helpers/pgbouncer.ts), with the direct URL
 * for LISTEN and migrations: `SVC_TEST_POOLER=pgbouncer npx vitest run test/records`.
 */
async function poolerEnv(url: string): Promise<Record<string, string>> {
  if (process.env.SVC_TEST_POOLER !== 'pgbouncer') return {};
  pooler ??= startPgbouncer({ poolSize: 10 }).then((bouncer) => {
    process.once('exit', () => bouncer.kill());
    return bouncer;
  });
  const bouncer = await pooler;
  return { DATABASE_URL: bouncer.pooled(url), SVC_DIRECT_DATABASE_URL: url, SVC_DB_POOLER: 'transaction' };
}

export async function startTestService(options: TestServiceOptions = {}): Promise<TestService> {
  const fixture = options.fixture ?? DEFAULT_FIXTURE;
  const dir = options.dir ?? (await buildFixture(fixture));
  const database = options.database ?? (await createTestDatabase('svc_t', { fixture }));
  const env = {
    DATABASE_URL: database.url,
    ...(await poolerEnv(database.url)),
    JWT_SECRET: TEST_JWT_SECRET,
    SVC_LOG_LEVEL: 'warn',
    SVC_DB_POOL_SIZE: '10',
    // argon2id at the OWASP cost takes ~50 ms of CPU a hash: too slow for a suite on 2 cores.
    SVC_ARGON2_MEMORY_KIB: '1024',
    SVC_ARGON2_TIME_COST: '1',
    // The whole suite can run on the per-tenant feed cursor (ADR 025 decision 4): SVC_FEED_CURSOR=tenant.
    ...(process.env.SVC_FEED_CURSOR ? { SVC_FEED_CURSOR: process.env.SVC_FEED_CURSOR } : {}),
    // ... and on compiled GraphQL execution (graphql-jit): SVC_GRAPHQL_EXECUTOR=jit.
    ...(process.env.SVC_GRAPHQL_EXECUTOR ? { SVC_GRAPHQL_EXECUTOR: process.env.SVC_GRAPHQL_EXECUTOR } : {}),
    ...options.env,
  };
  const log = options.log ?? pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' });
  const running = await startService(await loadDefinition(dir), { env, port: options.port ?? 0, host: '127.0.0.1', log });
  const signer = new TokenSigner(env.JWT_SECRET, 3600);
  return {
    ...running,
    database,
    dir,
    token: (p) => mintToken(running.ctx.db, signer, p),
    async close() {
      await running.stop();
      if (!options.database) await database.drop();
    },
  };
}
