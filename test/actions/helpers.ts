/** Helpers of the actions tests: a service on the actions fixture, GraphQL and REST over real HTTP. */
import { spawn, type ChildProcess } from 'node:child_process';
import { join, resolve } from 'node:path';
import type { Role } from '../../runtime/ir/types.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { startTestService, type TestService, type TestServiceOptions } from '../helpers/service.ts';
import { post, type Gql } from '../records/helpers.ts';
import { call as rest, type Reply } from '../jobs/helpers.ts';

export const ACTIONS_FIXTURE = resolve(import.meta.dirname, 'fixtures', 'actions', 'schema.ts');

/** A database of our own prefix (the global setup drops `svc_t_*` databases of parallel runs), migrated for the fixture. */
export const createActionsDatabase = (fixture = ACTIONS_FIXTURE) => createTestDatabase('svcact', { fixture });

export async function startActionsService(options: Omit<TestServiceOptions, 'database'> & { database?: TestDatabase } = {}): Promise<TestService> {
  const owned = options.database === undefined;
  const database = options.database ?? (await createActionsDatabase(options.fixture));
  const service = await startTestService({ fixture: ACTIONS_FIXTURE, ...options, database, env: { RATE_LIMIT_RPS: '10000000', ...options.env } });
  if (!owned) return service;
  return { ...service, close: async () => { await service.close(); await database.drop(); } };
}

export interface User {
  readonly token: string;
  readonly gql: Gql;
  readonly userId: string;
}

export async function userOf(service: TestService, role: Role, userId: string, tenantId: string | null = null): Promise<User> {
  const token = await service.token({ role, userId, tenantId });
  return { token, userId, gql: (query, variables) => post(service.url, { query, variables }, { authorization: `Bearer ${token}` }) };
}

export const CREATE = 'mutation($model: String!, $data: JSON!) { create(model: $model, data: $data) }';
export const UPDATE = 'mutation($model: String!, $id: ID!, $data: JSON!) { update(model: $model, id: $id, data: $data) }';

/** REST calls: the jobs tests' `call`. */
export { rest, type Reply };

export interface ActionJob {
  id: string;
  kind: string;
  status: string;
  tenant_id: string | null;
  created_by: string | null;
  idempotency_key: string | null;
  payload: any;
}

/** The jobs of queue `actions`, oldest first (the test reads the table: it checks what committed). */
export function actionJobs(service: TestService, where = 'true', values: unknown[] = []): Promise<ActionJob[]> {
  return service.ctx.db.any<ActionJob>(
    `select id, kind, status, tenant_id, created_by, idempotency_key, payload from svc_jobs where queue = 'actions' and ${where} order by id`,
    values,
  );
}

/** Mints a worker token for queue `actions` (an Admin route). */
export async function workerToken(service: TestService, admin: string, tenant?: string): Promise<string> {
  const reply = await rest(service.url, 'POST', '/jobs/workers', {
    body: { name: 'actions-worker', queues: ['actions'] },
    headers: { authorization: `Bearer ${admin}`, ...(tenant ? { 'x-tenant-id': tenant } : {}) },
  });
  if (reply.status !== 201) throw new Error(`worker token: ${reply.status} ${JSON.stringify(reply.body)}`);
  return reply.body.token;
}

/**
 * Resolves once every job of `ids` has ended (succeeded or dead), told by the
 * change feed (the jobs' JobSucceeded / JobDead events); rejects after `ms`.
 */
export async function jobsEnded(service: TestService, ids: readonly string[], ms = 20_000): Promise<ActionJob[]> {
  const pending = new Set(ids);
  const feed = service.ctx.services.feed.subscribe({
    accepts: (c) => c.modelName === 'Job' && (c.eventType === 'JobSucceeded' || c.eventType === 'JobDead') && pending.has(c.recordId),
  });
  let timer: NodeJS.Timeout | undefined;
  try {
    const ended = await service.ctx.db.map(`select id from svc_jobs where id = any($1) and status in ('succeeded', 'dead')`, [ids], (r) => r.id as string);
    for (const id of ended) pending.delete(id);
    const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`jobs not ended: ${[...pending].join(', ')}`)), ms)));
    while (pending.size > 0) {
      const next = await Promise.race([feed.next(), timeout]);
      if (next.done) break;
      pending.delete(next.value.recordId);
    }
    return actionJobs(service, 'id = any($1)', [ids]);
  } finally {
    clearTimeout(timer);
    feed.close();
  }
}

export interface WorkerProcess {
  readonly child: ChildProcess;
  /** Stops it gracefully (SIGTERM) and waits for it to exit. */
  stop(): Promise<void>;
}

/** The action worker of fixtures/worker.ts, in a process of its own, using the SDK. */
export function startWorkerProcess(service: TestService, token: string): WorkerProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', join(import.meta.dirname, 'fixtures', 'worker.ts')], {
    env: { ...process.env, BASE_URL: service.url, WORKER_TOKEN: token },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  return {
    child,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}
