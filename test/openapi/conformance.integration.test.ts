/**
 * GET /openapi.json stays true: real REST flows (auth, jobs from both planes,
 * projections, public read, diagnostics, health and meta) are recorded over
 * HTTP, and every response is checked against the document: its status is
 * documented for that route and its JSON body validates against the schema.
 * Every route the router serves is documented, and every documented operation
 * is exercised, so neither side can drift. GET /docs renders it offline.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, startTestService, type TestService } from '../helpers/service.ts';

const CATALOG = `${REPO_ROOT}/test/projections/fixtures/catalog/schema.ts`;
const ADMIN = { email: 'root@example.test', password: 'Adm1n-passw0rd!' };

interface Recorded {
  readonly method: string;
  readonly path: string;
  readonly status: number;
  readonly type: string;
  readonly body: unknown;
}

let service: TestService;
const recorded: Recorded[] = [];

interface Send {
  body?: unknown;
  token?: string;
  worker?: string;
  /** A body sent as is (multipart form, raw bytes) instead of JSON. */
  raw?: FormData | string;
  headers?: Record<string, string>;
}

async function http(method: string, path: string, options: Send = {}): Promise<Recorded> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  if (options.worker) headers['x-worker-token'] = options.worker;
  const response = await fetch(service.url + path, {
    method, headers, redirect: 'manual', body: options.raw ?? (options.body === undefined ? undefined : JSON.stringify(options.body)),
  });
  const type = response.headers.get('content-type') ?? '';
  const text = await response.text();
  const entry = { method, path, status: response.status, type, body: type.includes('json') && text ? JSON.parse(text) : text };
  recorded.push(entry);
  return entry;
}

beforeAll(async () => {
  service = await startTestService({
    fixture: CATALOG,
    env: {
      ADMIN_EMAIL: ADMIN.email, ADMIN_PASSWORD: ADMIN.password, SVC_ENABLE_SELF_REGISTRATION: 'true',
      SVC_PUBLIC_READ_MODELS: 'Product', SVC_PUBLIC_READ_FIELDS_Product: 'name', RATE_LIMIT_RPS: '1000000',
      SVC_MEDIA_DIR: mkdtempSync(join(tmpdir(), 'svc-openapi-media-')),
    },
  });
});
afterAll(() => service?.close());

/** The REST integration flows, recorded. */
async function replayFlows(): Promise<void> {
  await http('GET', '/health');
  await http('GET', '/ready');
  await http('GET', '/meta/schema');
  await http('GET', '/schema.ts');
  await http('GET', '/metrics');
  await http('GET', '/openapi.json');
  await http('GET', '/docs');
  await http('GET', '/');

  // Auth.
  await http('POST', '/auth/login', { body: { email: ADMIN.email } });
  await http('POST', '/auth/login', { body: { email: ADMIN.email, password: 'wrong-Passw0rd!' } });
  const login = await http('POST', '/auth/login', { body: ADMIN });
  const admin = (login.body as { token: string }).token;
  const me = await http('GET', '/auth/me', { token: admin });
  await http('GET', '/auth/me');
  const registered = await http('POST', '/auth/register', { body: { email: 'new@example.test', password: 'N3w-passw0rd!' } });
  await http('POST', '/auth/register', { body: { email: 'new@example.test', password: 'N3w-passw0rd!' } });
  const refreshed = await http('POST', '/auth/refresh', { body: { refreshToken: (registered.body as { refresh_token: string }).refresh_token } });
  await http('POST', '/auth/refresh', { body: {} });
  const created = await http('POST', '/auth/users', { token: admin, body: { email: 'mgr@example.test', password: 'Mgr-passw0rd1', role: 'Manager' } });
  await http('POST', '/auth/users', { token: admin, body: { email: 'mgr@example.test', password: 'Mgr-passw0rd1', role: 'Manager' } });
  await http('GET', '/auth/users', { token: admin });
  await http('GET', '/auth/users', { token: (refreshed.body as { token: string }).token });
  await http('PATCH', `/auth/users/${(created.body as { id: string }).id}`, { token: admin, body: { role: 'Viewer' } });
  await http('PATCH', '/auth/users/nope', { token: admin, body: { disabled: true } });
  await http('POST', '/auth/logout', { token: (refreshed.body as { token: string }).token });
  await http('GET', '/auth/oauth/providers');
  await http('GET', '/auth/oauth/authorize?provider=nowhere');
  await http('GET', '/auth/oauth/callback/nowhere?state=s&code=c');

  // Jobs: app, worker and admin planes.
  const job = await http('POST', '/jobs', { token: admin, body: { queue: 'mail', kind: 'send', payload: { to: 'x' } } });
  const jobId = (job.body as { id: string }).id;
  await http('POST', '/jobs', { token: admin, body: { queue: '', kind: 'send' } });
  await http('GET', `/jobs/${jobId}`, { token: admin });
  await http('GET', '/jobs/unknown-job', { token: admin });
  const minted = await http('POST', '/jobs/workers', { token: admin, body: { name: 'w', queues: ['mail'] } });
  const worker = (minted.body as { token: string }).token;
  await http('GET', '/jobs/workers', { token: admin });
  await http('POST', '/jobs', { token: admin, body: { queue: 'mail', kind: 'second' } });
  const lease = await http('POST', '/jobs/lease', { worker, body: { queues: ['mail'], capacity: 2 } });
  const [first, second] = (lease.body as { jobs: Array<{ id: string; leaseId: string }> }).jobs;
  await http('POST', '/jobs/lease', { worker, body: { queues: ['other'] } });
  await http('POST', '/jobs/lease', { body: { queues: ['mail'] } });
  await http('POST', `/jobs/${first.id}/heartbeat`, { worker, body: { leaseId: first.leaseId } });
  await http('POST', `/jobs/${first.id}/progress`, { worker, body: { leaseId: first.leaseId, percent: 50, message: 'half' } });
  await http('POST', `/jobs/${first.id}/progress`, { worker, body: { leaseId: 'stale' } });
  await http('POST', `/jobs/${first.id}/complete`, { worker, body: { leaseId: first.leaseId, result: { ok: true } } });
  await http('POST', `/jobs/${second.id}/fail`, { worker, body: { leaseId: second.leaseId, error: 'boom' } });
  await http('POST', `/jobs/${second.id}/fail`, { worker, body: { leaseId: second.leaseId } });
  await http('POST', '/jobs/complete', { worker, body: { items: [{ id: second.id, leaseId: 'stale', result: 1 }] } });
  await http('GET', '/jobs/stats', { token: admin });
  await http('GET', '/jobs/recent?limit=5', { token: admin });
  await http('GET', '/jobs/recent?status=bogus', { token: admin });
  await http('DELETE', `/jobs/workers/${(minted.body as { id: string }).id}`, { token: admin });
  await http('DELETE', '/jobs/workers/unknown', { token: admin });
  // The jobs admin routes of the console (CONTRACT section 16).
  await http('GET', `/jobs/search?queue=mail&payload=${encodeURIComponent('{"to":"x"}')}`, { token: admin });
  await http('GET', '/jobs/search?status=bogus', { token: admin });
  await http('GET', '/meta/migrations', { token: admin });
  await http('GET', '/meta/migrations');
  await http('GET', '/meta/instances', { token: admin });
  await http('GET', '/meta/instances');
  await http('GET', '/meta/instances', { token: admin, headers: { 'x-tenant-id': 'tenant-a' } });
  await http('GET', `/jobs/${jobId}/inspect`, { token: admin });
  await http('GET', '/jobs/unknown-job/inspect', { token: admin });
  const toCancel = ((await http('POST', '/jobs', { token: admin, body: { queue: 'held', kind: 'later' } })).body as { id: string }).id;
  await http('POST', `/jobs/${toCancel}/cancel`, { token: admin });
  await http('POST', `/jobs/${toCancel}/cancel`, { token: admin });
  await http('POST', `/jobs/${toCancel}/retry`, { token: admin });
  await http('POST', '/jobs/unknown-job/retry', { token: admin });
  await http('POST', '/jobs/unknown-job/cancel', { token: admin });
  await http('POST', '/jobs/bulk', { token: admin, body: { filter: { queue: 'held' }, action: 'cancel', dryRun: true } });
  await http('POST', '/jobs/bulk', { token: admin, body: { filter: { queue: 'held' }, action: 'cancel' } });
  await http('POST', '/jobs/bulk', { token: admin, body: { action: 'delete' } });
  await http('POST', '/jobs/bulk', { body: { action: 'retry' } });

  // Actions: direct invocation (401, 404, 403, 400, 202; and 200 once a worker completes the awaited job).
  const restock = { productId: 'p1', quantity: 3 };
  await http('POST', '/api/actions/restock', { body: { input: restock } });
  await http('POST', '/api/actions/nope', { token: admin, body: { input: {} } });
  await http('POST', '/api/actions/restock', { token: (refreshed.body as { token: string }).token, body: { input: restock } });
  await http('POST', '/api/actions/restock', { token: admin, body: { input: { productId: 'p1', quantity: 'many' } } });
  await http('POST', '/api/actions/restock', { token: admin, body: { input: restock } });
  const actionWorker = ((await http('POST', '/jobs/workers', { token: admin, body: { name: 'actions', queues: ['actions'] } })).body as { token: string }).token;
  const awaited = http('POST', '/api/actions/restock', { token: admin, body: { input: restock, idempotencyKey: 'conformance', wait: 20 } });
  const leased: Array<{ id: string; leaseId: string; kind: string }> = [];
  while (leased.length < 2) {
    const reply = await http('POST', '/jobs/lease', { worker: actionWorker, body: { queues: ['actions'], capacity: 2 } });
    leased.push(...(reply.body as { jobs: typeof leased }).jobs);
  }
  await http('POST', '/jobs/complete', { worker: actionWorker, body: { items: leased.map((j) => ({ id: j.id, leaseId: j.leaseId, result: { restocked: true } })) } });
  expect((await awaited).status).toBe(200);

  // Projections, public read, diagnostics, GraphQL over HTTP.
  const product = await http('POST', '/graphql', { token: admin, body: { query: 'mutation { create(model: "Product", data: {name: "Lamp", status: "published"}) }' } });
  await http('POST', '/graphql', { token: admin, body: { query: '{ nope' } });
  await http('POST', '/graphql', { body: { query: '{ records(model: "Product") }' } });
  await http('GET', '/graphql');
  await http('GET', `/graphql?query=${encodeURIComponent('{ records(model: "Product") }')}`, { token: admin });
  await http('GET', `/graphql?query=${encodeURIComponent('mutation { delete(model: "Product", id: "x") }')}`, { token: admin });
  await http('GET', '/projections', { token: admin });
  await http('POST', '/projections/rebuild', { token: admin });
  await http('GET', '/public/records/Product?limit=5');
  await http('GET', '/public/records/Secret');
  await http('GET', '/storage/diagnostics', { token: admin });
  await http('GET', '/storage/diagnostics');

  // Media: a streamed upload, a presigned one, serving, delete.
  const form = new FormData();
  form.append('file', new Blob(['hello media'], { type: 'application/octet-stream' }), 'hello.bin');
  const uploaded = await http('POST', '/media', { token: admin, raw: form });
  const mediaId = (uploaded.body as { id: string }).id;
  await http('POST', '/media', { raw: form });
  await http('GET', `/media/${mediaId}/metadata`, { token: admin });
  await http('GET', '/media?limit=10', { token: admin });
  await http('GET', '/media?limit=0', { token: admin });
  await http('GET', '/media/01UNKNOWNMEDIA000000000000/metadata', { token: admin });
  await http('GET', `/media/${mediaId}`, { token: admin });
  await http('GET', `/media/${mediaId}`, { token: admin, headers: { range: 'bytes=0-4' } });
  const grant = await http('POST', '/media/presign', { token: admin, body: { filename: 'direct.bin', contentType: 'application/octet-stream', size: 6 } });
  await http('POST', '/media/presign', { token: admin, body: { filename: 'direct.bin' } });
  const { id: pendingId, uploadUrl, headers: uploadHeaders } = grant.body as { id: string; uploadUrl: string; headers: Record<string, string> };
  await http('PUT', uploadUrl.slice(service.url.length), { raw: 'direct', headers: uploadHeaders });
  await http('PUT', `/media/upload/${pendingId}?expires=1&sig=forged`, { raw: 'direct', headers: uploadHeaders });
  await http('POST', '/media/commit', { token: admin, body: { id: pendingId } });
  await http('POST', '/media/commit', { token: admin, body: {} });
  await http('DELETE', `/media/${mediaId}`, { token: admin });
  await http('DELETE', `/media/${mediaId}`, { token: admin });

  // Audit: pages, a cursor, filters, an entity's trail, statistics; 400, 401, 403, 404.
  const viewer = await http('POST', '/auth/login', { body: { email: 'new@example.test', password: 'N3w-passw0rd!' } });
  const auditPage = await http('GET', '/audit/logs?limit=2', { token: admin });
  await http('GET', `/audit/logs?limit=2&cursor=${(auditPage.body as { nextCursor: string }).nextCursor}`, { token: admin });
  await http('GET', '/audit/logs?cursor=not-a-cursor', { token: admin });
  await http('GET', '/audit/logs');
  await http('GET', '/audit/logs', { token: (viewer.body as { token: string }).token });
  await http('GET', `/audit/user/${(me.body as { id: string }).id}/activity?action=auth.login`, { token: admin });
  const productId = (product.body as { data: { create: { id: string } } }).data.create.id;
  await http('GET', `/audit/entity/Product/${productId}/audit`, { token: admin });
  await http('GET', `/audit/entity/Media/${mediaId}/audit`, { token: admin });
  await http('GET', '/audit/entity/Nothing/x/audit', { token: admin });
  await http('GET', '/audit/statistics', { token: admin });
  await http('GET', '/audit/statistics?from=yesterday', { token: admin });
  // Workflows.
  await http('GET', '/workflows', { token: admin });
  await http('GET', '/workflows');
  const started = await http('POST', '/workflows/restock/run', { token: admin, body: { input: { productId: 'p1' } } });
  await http('POST', '/workflows/restock/run', { token: admin, body: { input: [1] } });
  await http('POST', '/workflows/nope/run', { token: admin, body: {} });
  await http('GET', '/workflows/runs?workflow=restock&limit=5', { token: admin });
  await http('GET', '/workflows/runs?status=bogus', { token: admin });
  await http('GET', `/workflows/runs/${(started.body as { runId: string }).runId}`, { token: admin });
  await http('GET', '/workflows/runs/unknown', { token: admin });
}

type Operation = { responses: Record<string, { content?: Record<string, { schema: object }> }> };

describe('GET /openapi.json', () => {
  let document: { openapi: string; paths: Record<string, Record<string, Operation>> };
  const templates = () => Object.keys(document.paths).map((path) => ({
    path, pattern: new RegExp(`^${path.replace(/\{\w+\}/g, '[^/]+')}$`),
  }));
  const documented = (method: string, rawPath: string) => {
    const path = rawPath.split('?')[0];
    // The most specific template: `/jobs/lease` before `/jobs/{id}`.
    const matches = templates().filter((t) => t.pattern.test(path) && document.paths[t.path][method.toLowerCase()]);
    matches.sort((a, b) => (a.path.match(/\{/g)?.length ?? 0) - (b.path.match(/\{/g)?.length ?? 0));
    return matches[0] ? { template: matches[0].path, operation: document.paths[matches[0].path][method.toLowerCase()] } : null;
  };

  beforeAll(async () => {
    const reply = await fetch(`${service.url}/openapi.json`);
    expect(reply.status).toBe(200);
    document = (await reply.json()) as typeof document;
    await replayFlows();
  });

  it('is OpenAPI 3.1 with operation ids, security schemes and inline schemas that compile', () => {
    expect(document.openapi).toBe('3.1.0');
    const ajv = new Ajv2020({ strict: false, validateFormats: false });
    let compiled = 0;
    for (const methods of Object.values(document.paths)) {
      for (const operation of Object.values(methods)) {
        for (const response of Object.values(operation.responses)) {
          const schema = response.content?.['application/json']?.schema;
          if (schema) {
            ajv.compile(schema);
            compiled++;
          }
        }
      }
    }
    expect(compiled).toBeGreaterThan(60);
  });

  it('documents every status and body the REST flows answered with', () => {
    const ajv = new Ajv2020({ strict: false, validateFormats: false, allErrors: true });
    const problems: string[] = [];
    for (const entry of recorded) {
      const match = documented(entry.method, entry.path);
      if (!match) {
        problems.push(`${entry.method} ${entry.path}: not documented`);
        continue;
      }
      const response = match.operation.responses[String(entry.status)];
      if (!response) {
        problems.push(`${entry.method} ${match.template}: status ${entry.status} not documented (${JSON.stringify(entry.body).slice(0, 120)})`);
        continue;
      }
      const schema = response.content?.['application/json']?.schema;
      if (schema) {
        expect(entry.type, `${entry.method} ${entry.path}`).toContain('application/json');
        const validate = ajv.compile(schema);
        if (!validate(entry.body)) {
          problems.push(`${entry.method} ${match.template} ${entry.status}: ${ajv.errorsText(validate.errors)} in ${JSON.stringify(entry.body).slice(0, 200)}`);
        }
      } else if (response.content) {
        const type = Object.keys(response.content)[0];
        if (!entry.type.startsWith(type)) problems.push(`${entry.method} ${match.template}: ${entry.type} is not ${type}`);
      }
    }
    expect(problems).toEqual([]);
    expect(recorded.length).toBeGreaterThan(50);
  });

  it('documents every route the router serves, and the flows exercise every documented operation', () => {
    // Static assets of the two HTML pages, the IDE's second address, and the console's page and assets (docs/console.md).
    const undocumented = new Set(['GET /graphql/assets/:file', 'GET /docs/assets/:file', 'GET /playground', 'GET /console', 'GET /console/{*rest}']);
    const served = service.ctx.router.stack.flatMap((layer) => layer.methods
      .filter((method) => method !== 'HEAD')
      .map((method) => `${method} ${String(layer.path)}`))
      .filter((route) => !undocumented.has(route));
    const openapiForm = (route: string) => route.replace(/:(\w+)/g, '{$1}');
    const documentedOps = Object.entries(document.paths).flatMap(([path, methods]) => Object.keys(methods).map((m) => `${m.toUpperCase()} ${path}`));
    expect(served.map(openapiForm).filter((route) => !documentedOps.includes(route))).toEqual([]);
    const exercised = new Set(recorded.map((entry) => {
      const match = documented(entry.method, entry.path);
      return match ? `${entry.method} ${match.template}` : '';
    }));
    expect(documentedOps.filter((op) => !exercised.has(op))).toEqual([]);
  });

  it('is rendered at GET /docs from files this server serves (no external request)', async () => {
    const page = await (await fetch(`${service.url}/docs`)).text();
    const sources = [...page.matchAll(/(?:src|href)="([^"]+)"/g)].map(([, src]) => src);
    expect(sources.length).toBeGreaterThan(0);
    for (const src of sources) {
      expect(src.startsWith('/')).toBe(true);
      const asset = await fetch(service.url + src);
      expect(asset.status).toBe(200);
      expect((await asset.arrayBuffer()).byteLength).toBeGreaterThan(1000);
    }
    expect(page).toContain("url: '/openapi.json'");
    expect((await fetch(`${service.url}/docs/assets/package.json`)).status).toBe(404);
  });
});
