/**
 * The floor of the per-job HTTP drain: a bare node:http server, no Koa, no
 * middleware, that answers `POST /jobs/lease` and `POST /jobs/{id}/complete`
 * with the worker plane's own statements (the installed dist/runtime's
 * workerStatements: token lookup, lease or completion and the Job events, one
 * statement each) and combines concurrent completes as the server does
 * (CompleteCombiner). What svc-gen's per-job routes would reach if its HTTP
 * stack cost nothing. In a process of its own on DATABASE_URL; prints `ready <url>`.
 */
import { createServer, type IncomingMessage } from 'node:http';
import { join } from 'node:path';
import { REPO_ROOT } from '../../test/helpers/fixtures.ts';

type Modules = [
  typeof import('../../runtime/db/index.ts'),
  typeof import('../../runtime/events/index.ts'),
  typeof import('../../runtime/jobs/plane.ts'),
  typeof import('../../runtime/jobs/workers.ts'),
];
const dist = (path: string) => import(join(REPO_ROOT, 'dist', 'runtime', path));
const [{ openDatabase }, { createEventStore }, { CompleteCombiner, workerStatements }, { hashToken }] = await Promise.all(
  ['db/index.js', 'events/index.js', 'jobs/plane.js', 'jobs/workers.js'].map(dist)) as Modules;

const database = await openDatabase({ url: process.env.DATABASE_URL!, poolSize: Number(process.env.POOL_SIZE ?? 20), applicationName: 'per-job-floor' });
const statements = workerStatements(database.db, createEventStore(database.db), true);
const combiner = new CompleteCombiner(statements);

function body(request: IncomingMessage): Promise<any> {
  return new Promise((done, fail) => {
    let text = '';
    request.setEncoding('utf8');
    request.on('data', (chunk) => (text += chunk));
    request.on('end', () => done(text ? JSON.parse(text) : {}));
    request.on('error', fail);
  });
}

const COMPLETE = /^\/jobs\/([^/]+)\/complete$/;

const server = createServer(async (request, response) => {
  try {
    const input = await body(request);
    const tokenHash = hashToken(String(request.headers['x-worker-token'] ?? ''));
    if (request.url === '/jobs/lease') {
      const outcome = await statements.lease(tokenHash, { queues: input.queues, capacity: input.capacity, visibilitySecs: input.visibilitySecs });
      if (!outcome.worker) return void response.writeHead(401).end();
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jobs: outcome.jobs }));
      return;
    }
    const id = COMPLETE.exec(request.url ?? '')?.[1];
    if (!id) return void response.writeHead(404).end();
    const outcome = await combiner.complete(tokenHash, { id: decodeURIComponent(id), leaseId: input.leaseId, result: input.result });
    response.writeHead(!outcome.worker ? 401 : outcome.completed ? 204 : 409).end();
  } catch (error) {
    process.stderr.write(`per-job floor: ${String(error)}\n`);
    response.writeHead(500).end();
  }
});
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`ready http://127.0.0.1:${(server.address() as { port: number }).port}\n`);
});
process.once('SIGTERM', () => {
  server.close();
  void database.close().then(() => process.exit(0));
});
