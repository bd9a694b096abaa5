/**
 * svc-gen as a user runs it: the package laid out as `npm install` would
 * (its bin runs the compiled dist/, bench/start/run.ts), `svc-gen start DIR`
 * for a fixture's build, in a process of its own on a database of its own.
 * Needs `npm run build` first (the bench commands run it).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import pg from 'pg';
import { TokenSigner } from '../../runtime/auth/index.ts';
import type { Db } from '../../runtime/db/index.ts';
import type { Role } from '../../runtime/ir/types.ts';
import { createTestDatabase, type TestDatabase } from '../../test/helpers/db.ts';
import { buildFixture, mintToken, REPO_ROOT, TEST_JWT_SECRET } from '../../test/helpers/service.ts';
import { hasDist, installedBin } from '../start/run.ts';
import { BENCH_APPLICATION, freePort, spawnChild, type Child } from './processes.ts';

export interface InstalledService {
  readonly url: string;
  readonly pid: number;
  readonly database: TestDatabase;
  /** The bench's own pool on the service's database (application_name `bench`: its CPU is not the service's). */
  readonly pool: pg.Pool;
  /** A user JWT the server accepts. */
  token(role: Role, userId: string): Promise<string>;
  /** A worker token for `queues`, minted through the admin plane (POST /jobs/workers). */
  workerToken(queues: readonly string[]): Promise<string>;
  stop(): Promise<void>;
}

/** The records bench's schema, and the GraphQL create every create row sends (a row of Item). */
export const RECORDS_SCHEMA = join(REPO_ROOT, 'bench', 'records', 'schema.ts');
export const CREATE_BODY = JSON.stringify({ query: 'mutation($d: JSON!) { create(model: "Item", data: $d) }', variables: { d: { name: 'bench', price: 1 } } });

/** The compiled worker SDK, as `import { createWorker } from 'svc-gen/worker'` loads it from an installed package. */
export const INSTALLED_WORKER_MODULE = join(REPO_ROOT, 'dist', 'worker', 'index.js');

/**
 * `svc-gen start` for `fixture` (a fixtures/ folder name or a schema.ts path)
 * on a fresh database named `bench_svc_*`; `start` applies the migrations.
 * stop() drops the database and removes the package's temporary folder. `env` adds to the server's environment.
 */
export async function startInstalled(fixture: string, env: Record<string, string>, checkout?: string): Promise<InstalledService> {
  if (!hasDist()) throw new Error('no dist/: run `npm run build` first');
  const dir = checkout === undefined ? await buildFixture(fixture) : buildWith(checkout, fixture);
  const database = await createTestDatabase('bench_svc');
  const bin = installedBin(checkout);
  const removePackage = () => rmSync(dirname(dirname(bin)), { recursive: true, force: true });
  let server: Child | undefined;
  let pool: pg.Pool | undefined;
  try {
    const port = await freePort();
    server = await spawnChild([bin, 'start', dir], {
      DATABASE_URL: database.url, JWT_SECRET: TEST_JWT_SECRET, NODE_ENV: 'production', SVC_LOG_LEVEL: 'error',
      RATE_LIMIT_RPS: '10000000', PORT: String(port), HOST: '127.0.0.1', ...env,
    }, 'svc-gen start', `http://127.0.0.1:${port}/ready`);
    pool = new pg.Pool({ connectionString: database.url, max: 4, application_name: BENCH_APPLICATION });
    pool.on('error', () => undefined); // an idle connection ended by the database's drop at teardown
    return installed(server, pool, database, removePackage);
  } catch (error) {
    await server?.stop();
    await pool?.end();
    await database.drop();
    removePackage();
    throw error;
  }
}

/**
 * `fixture` (a schema.ts path) built by another checkout's own generator
 * (`svc-gen build`, from its dist/): its runtime runs the migrations its
 * generator writes.
 */
function buildWith(checkout: string, schema: string): string {
  if (!existsSync(join(checkout, 'dist', 'cli', 'main.js'))) throw new Error(`${checkout}: no dist/ (run \`npm run build\` there)`);
  const out = mkdtempSync(join(tmpdir(), 'svc-build-before-'));
  execFileSync(process.execPath, [join(checkout, 'bin', 'svc-gen.mjs'), 'build', '--schema', schema, '--out', out], { stdio: 'ignore' });
  return out;
}

function installed(server: Child, pool: pg.Pool, database: TestDatabase, removePackage: () => void): InstalledService {
  const url = server.ready;
  const signer = new TokenSigner(TEST_JWT_SECRET, 24 * 3600);
  // mintToken's two calls, on pg: the user and a live session, as a login would leave them.
  const db = {
    none: async (text: string, values: unknown[]) => void (await pool.query(text, values)),
    oneOrNone: async (text: string, values: unknown[]) => (await pool.query(text, values)).rows[0] ?? null,
  } as unknown as Db;
  const token = (role: Role, userId: string) => mintToken(db, signer, { role, userId });
  return {
    url, pid: server.pid, database, pool, token,
    async workerToken(queues) {
      const response = await fetch(`${url}/jobs/workers`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${await token('Admin', 'bench-admin')}` },
        body: JSON.stringify({ name: `bench-${queues.join('-')}`, queues }),
      });
      const body = await response.json() as { token?: string };
      if (response.status !== 201 || !body.token) throw new Error(`POST /jobs/workers: ${response.status} ${JSON.stringify(body)}`);
      return body.token;
    },
    async stop() {
      await server.stop();
      await pool.end();
      await database.drop();
      removePackage();
    },
  };
}
