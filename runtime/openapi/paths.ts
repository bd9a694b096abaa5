/**
 * The document's contributions for the routes of the core capabilities
 * (health and meta, metrics, auth, jobs, projections, public read, storage
 * diagnostics, GraphQL over HTTP). Schemas are inlined where they are used, so
 * that each response validates on its own (test/openapi/conformance.integration.test.ts
 * checks real responses against them).
 */
import type { Operation, PathsContribution, Schema } from './document.ts';

export const str: Schema = { type: 'string' };
export const strOrNull: Schema = { type: ['string', 'null'] };
export const int: Schema = { type: 'integer' };
export const timestamp: Schema = { type: 'string', format: 'date-time', description: 'ISO 8601, UTC, milliseconds' };
export const obj = (properties: Record<string, Schema>, required: string[] = Object.keys(properties)): Schema =>
  ({ type: 'object', properties, required });

export const ERROR: Schema = obj({ error: str }, ['error']);
const VALIDATION: Schema = { ...obj({ error: str, field: str }, ['error']), description: 'A bad field names itself in `field`.' };
export const errors = (...statuses: number[]) => Object.fromEntries(statuses.map((status) => [String(status), {
  description: ERROR_TEXT[status] ?? 'error',
  schema: status === 400 ? VALIDATION : ERROR,
}]));
const ERROR_TEXT: Record<number, string> = {
  400: 'invalid input', 401: 'authentication required or invalid', 403: 'forbidden', 404: 'not found',
  409: 'conflict (for a worker: the lease is not current)', 410: 'gone (expired)', 413: 'request body too large',
  415: 'unsupported media type', 422: 'unprocessable (the content does not match what was announced)', 429: 'rate limited',
};

const USER: Schema = obj({ id: str, email: str, role: { type: 'string', enum: ['admin', 'manager', 'viewer'] }, tenant_id: strOrNull }, ['id', 'email', 'role']);
const ADMIN_USER: Schema = obj({
  id: str, email: str, role: str, tenant_id: strOrNull, firstName: strOrNull, lastName: strOrNull,
  disabled: { type: 'boolean' }, createdAt: timestamp, updatedAt: timestamp,
});
const TOKEN_PAIR: Schema = obj({ token: str, refresh_token: str, user: USER });
const JOB_STATUS: Schema = { type: 'string', enum: ['queued', 'leased', 'succeeded', 'failed', 'dead'] };
const JOB: Schema = obj({ id: str, queue: str, kind: str, status: JOB_STATUS, attempts: int, maxAttempts: int, result: {}, error: strOrNull });
const LEASED_JOB: Schema = obj({ id: str, queue: str, kind: str, payload: {}, attempts: int, maxAttempts: int, leaseId: str });
const WORKER_TOKEN: Schema = obj({ id: str, name: str, queues: { type: 'array', items: str }, isRevoked: { type: 'boolean' }, createdAt: timestamp });
const ENQUEUE: Schema = {
  ...obj({ queue: str, kind: str, payload: {}, idempotencyKey: str, maxAttempts: int, priority: int }, ['queue', 'kind']),
};
const LEASE_BODY: Schema = obj({ leaseId: str }, ['leaseId']);

export const bearer = ['bearer'];
export const worker = ['workerToken'];
export const op = (operation: Operation) => operation;

const GRAPHQL_ERROR: Schema = obj({
  message: str,
  extensions: obj({ code: { type: 'string', enum: ['NOT_FOUND', 'UNAUTHORIZED', 'FORBIDDEN', 'VALIDATION_ERROR', 'CONFLICT', 'INTERNAL_ERROR'] }, field: str }, ['code']),
}, ['message']);
const GRAPHQL_ERRORS: Schema = obj({ errors: { type: 'array', items: GRAPHQL_ERROR, minItems: 1 } });
const GRAPHQL_RESULT: Schema = { type: 'object', properties: { data: {}, errors: { type: 'array', items: GRAPHQL_ERROR } } };
const GRAPHQL_HTTP = 'The GraphQL-over-HTTP draft: answers are application/json, or application/graphql-response+json when Accept prefers it; '
  + 'the same status codes for both. A write with several invalid fields answers one VALIDATION_ERROR per field, each with `extensions.field`.';

export const CORE_PATHS: PathsContribution = {
  '/health': { get: op({ summary: 'Liveness: the process is up', tags: ['health'], responses: { 200: { description: 'up', schema: obj({ status: { const: 'ok' } }) } } }) },
  '/ready': { get: op({
    summary: 'Readiness: database reachable, every migration of this build applied, none unknown',
    tags: ['health'],
    responses: {
      200: { description: 'ready (`newer`: migrations applied by a newer version after this instance booted)', schema: obj({ status: { const: 'ready' }, newer: { type: 'array', items: str } }, ['status']) },
      503: { description: 'not ready: database unavailable, migrations pending, or migrations unknown to this build', schema: obj({
        status: { const: 'not ready' }, error: str, pending: { type: 'array', items: str }, unknown: { type: 'array', items: str },
      }, ['status', 'error']) },
    },
  }) },
  '/meta/schema': { get: op({
    summary: 'The schema IR, with every model\'s access rules', tags: ['meta'], security: bearer,
    description: 'Open in development; with SVC_ENV=production it needs an Admin token (401 without a valid token, 403 for other roles).',
    responses: { 200: { description: 'the IR', schema: obj({ kind: { const: 'schema' }, models: { type: 'array' } }) }, ...errors(401, 403) },
  }) },
  '/meta/migrations': { get: op({
    summary: 'Applied migrations (oldest first), pending, held-back and unknown ones, steps in progress (Admin)', tags: ['meta'], security: bearer,
    description: '`heldBack`: a contract file (and the files after it) waiting for instances of an older build to go; the service retries it '
      + 'in the background. `running`: steps a runner started and has not finished; a backfill carries its last progress, the object '
      + 'the realtime channel `migrations` published after its last batch (docs/migrations.md).',
    responses: {
      200: { description: 'migrations', schema: obj({
        applied: { type: 'array', items: obj({ scope: str, name: str, appliedAt: timestamp }) },
        pending: { type: 'array', items: str }, heldBack: { type: 'array', items: str }, unknown: { type: 'array', items: str },
        running: { type: 'array', items: obj({
          file: str, step: { type: 'integer' }, kind: str, description: str, startedAt: timestamp,
          heartbeatAt: { type: ['string', 'null'], format: 'date-time' }, live: { type: 'boolean' },
          progress: { type: ['object', 'null'], description: 'a backfill: {type, file, step, description, table, phase, rowsDone, rowsUpdated, estimatedTotal, percent, rowsPerSecond, batchRows, at}' },
        }) },
      }) },
      ...errors(401, 403),
    },
  }) },
  '/schema.ts': { get: op({ summary: 'The schema file (not in production)', tags: ['meta'], responses: { 200: { description: 'TypeScript source', content: 'text/plain' }, ...errors(404) } }) },
  '/metrics': { get: op({
    summary: 'Prometheus metrics', tags: ['health'], security: ['metricsToken'],
    description: 'Open to loopback clients when SVC_METRICS_TOKEN is unset; otherwise `Authorization: Bearer <SVC_METRICS_TOKEN>`.',
    responses: { 200: { description: 'Prometheus text format', content: 'text/plain' }, ...errors(401, 403) },
  }) },
  '/': { get: op({
    summary: 'Where to start: links to the GraphQL IDE and this reference (not in production)', tags: ['meta'],
    description: 'A small HTML page when the client prefers text/html; JSON otherwise. 404 with SVC_ENV=production.',
    responses: {
      200: { description: 'the links', schema: obj({ service: str, graphql: str, ide: str, docs: str, openapi: str }) },
      ...errors(404),
    },
  }) },
  '/openapi.json': { get: op({ summary: 'This document', tags: ['meta'], responses: { 200: { description: 'OpenAPI 3.1', schema: obj({ openapi: str, paths: { type: 'object' } }) } } }) },
  '/docs': { get: op({ summary: 'This document, rendered (no external requests)', tags: ['meta'], responses: { 200: { description: 'HTML', content: 'text/html' } } }) },
};

export const AUTH_PATHS: PathsContribution = {
  '/auth/login': { post: op({
    summary: 'Sign in with email and password', tags: ['auth'],
    requestBody: obj({ email: str, password: str }),
    responses: { 200: { description: 'tokens', schema: TOKEN_PAIR }, ...errors(400, 401, 429) },
  }) },
  '/auth/register': { post: op({
    summary: 'Self-registration (only when SVC_ENABLE_SELF_REGISTRATION=true; 404 otherwise)', tags: ['auth'],
    requestBody: obj({ email: str, password: str }),
    responses: { 200: { description: 'tokens', schema: TOKEN_PAIR }, ...errors(400, 404, 409) },
  }) },
  '/auth/refresh': { post: op({
    summary: 'Rotate a refresh token', tags: ['auth'], requestBody: obj({ refreshToken: str }),
    responses: { 200: { description: 'a new pair', schema: TOKEN_PAIR }, ...errors(400, 401) },
  }) },
  '/auth/logout': { post: op({ summary: 'Revoke the session', tags: ['auth'], security: bearer, responses: { 204: { description: 'revoked' }, ...errors(401) } }) },
  '/auth/me': { get: op({
    summary: 'The signed-in user', tags: ['auth'], security: bearer,
    responses: { 200: { description: 'the user', schema: { ...USER, properties: { ...(USER.properties as object), firstName: strOrNull, lastName: strOrNull } } }, ...errors(401) },
  }) },
  '/auth/users': {
    post: op({
      summary: 'Create a user (Admin)', tags: ['auth'], security: bearer,
      requestBody: obj({ email: str, password: str, role: str, tenantId: strOrNull }, ['email', 'password']),
      responses: { 201: { description: 'created', schema: ADMIN_USER }, ...errors(400, 401, 403, 409) },
    }),
    get: op({
      summary: 'List users (Admin)', tags: ['auth'], security: bearer,
      parameters: [{ name: 'limit', in: 'query', schema: int }, { name: 'offset', in: 'query', schema: int }],
      responses: { 200: { description: 'users', schema: obj({ users: { type: 'array', items: ADMIN_USER } }) }, ...errors(400, 401, 403) },
    }),
  },
  '/auth/users/{id}': { patch: op({
    summary: 'Change a user\'s role, tenant or disabled flag (Admin)', tags: ['auth'], security: bearer,
    requestBody: obj({ role: str, tenantId: strOrNull, disabled: { type: 'boolean' } }, []),
    responses: { 200: { description: 'updated', schema: ADMIN_USER }, ...errors(400, 401, 403, 404) },
  }) },
  '/auth/oauth/providers': { get: op({
    summary: 'Configured OAuth providers', tags: ['auth'],
    responses: { 200: { description: 'providers', schema: obj({ providers: { type: 'array', items: obj({ name: str, authorizeUrl: str }) } }) } },
  }) },
  '/auth/oauth/authorize': { get: op({
    summary: 'Redirect to the provider', tags: ['auth'], parameters: [
      { name: 'provider', in: 'query', required: true, schema: str },
      { name: 'return', in: 'query', schema: { const: 'console' }, description: 'end the sign-in in the console: the callback sets the refresh cookie and redirects to /console' },
    ],
    responses: { 302: { description: 'redirect to the provider' }, ...errors(400, 404) },
  }) },
  '/auth/oauth/callback/{provider}': { get: op({
    summary: 'The provider\'s redirect back', tags: ['auth'],
    responses: {
      200: { description: 'tokens', schema: obj({ access_token: str, refresh_token: str, token_type: { const: 'Bearer' }, user: USER }) },
      302: { description: 'a sign-in started with return=console: the refresh cookie is set, the browser goes to /console' },
      ...errors(400, 403, 404),
    },
  }) },
};

export const JOB_PATHS: PathsContribution = {
  '/jobs': { post: op({
    summary: 'Enqueue a job', tags: ['jobs'], security: bearer, requestBody: ENQUEUE,
    responses: { 201: { description: 'enqueued (a repeated idempotencyKey returns the existing id)', schema: obj({ id: str }) }, ...errors(400, 401, 403) },
  }) },
  '/jobs/{id}': { get: op({
    summary: 'A job', tags: ['jobs'], security: bearer,
    responses: { 200: { description: 'the job', schema: JOB }, ...errors(401, 404) },
  }) },
  '/jobs/lease': { post: op({
    summary: 'Lease jobs (worker)', tags: ['jobs: workers'], security: worker,
    requestBody: obj({ queues: { type: 'array', items: str }, capacity: int, visibilitySecs: int }, ['queues']),
    responses: { 200: { description: 'leased jobs (possibly none)', schema: obj({ jobs: { type: 'array', items: LEASED_JOB } }) }, ...errors(400, 401, 403) },
  }) },
  '/jobs/complete': { post: op({
    summary: 'Complete a batch (worker)', tags: ['jobs: workers'], security: worker,
    requestBody: obj({ items: { type: 'array', items: obj({ id: str, leaseId: str, result: {} }, ['id', 'leaseId']) } }),
    responses: { 200: { description: 'which completed and which were stale', schema: obj({ completed: { type: 'array', items: str }, stale: { type: 'array', items: str } }) }, ...errors(400, 401) },
  }) },
  '/jobs/{id}/heartbeat': { post: op({
    summary: 'Extend a lease (worker)', tags: ['jobs: workers'], security: worker, requestBody: { ...LEASE_BODY, properties: { leaseId: str, visibilitySecs: int } },
    responses: { 204: { description: 'extended' }, ...errors(400, 401, 409) },
  }) },
  '/jobs/{id}/progress': { post: op({
    summary: 'Report progress (worker); published on realtime channel job:{id}', tags: ['jobs: workers'], security: worker,
    requestBody: { ...LEASE_BODY, properties: { leaseId: str, percent: { type: 'number' }, message: str, data: {} } },
    responses: { 204: { description: 'recorded' }, ...errors(400, 401, 409) },
  }) },
  '/jobs/{id}/complete': { post: op({
    summary: 'Complete one job (worker)', tags: ['jobs: workers'], security: worker, requestBody: { ...LEASE_BODY, properties: { leaseId: str, result: {} } },
    responses: { 204: { description: 'completed' }, ...errors(400, 401, 409) },
  }) },
  '/jobs/{id}/fail': { post: op({
    summary: 'Fail one job (worker)', tags: ['jobs: workers'], security: worker,
    requestBody: { ...obj({ leaseId: str, error: str, retryable: { type: 'boolean' } }, ['leaseId', 'error']) },
    responses: {
      200: { description: 'retried later, or dead', schema: { oneOf: [obj({ outcome: { const: 'retry' }, delaySecs: int }), obj({ outcome: { const: 'dead' } })] } },
      ...errors(400, 401, 409),
    },
  }) },
  '/jobs/workers': {
    post: op({
      summary: 'Mint a worker token (Admin); the token is shown once', tags: ['jobs: admin'], security: bearer,
      requestBody: obj({ name: str, queues: { type: 'array', items: str } }),
      responses: { 201: { description: 'minted', schema: obj({ id: str, token: str, queues: { type: 'array', items: str } }) }, ...errors(400, 401, 403) },
    }),
    get: op({
      summary: 'Worker tokens (Admin)', tags: ['jobs: admin'], security: bearer,
      responses: { 200: { description: 'tokens (never the secret)', schema: obj({ workers: { type: 'array', items: WORKER_TOKEN } }) }, ...errors(401, 403) },
    }),
  },
  '/jobs/workers/{id}': { delete: op({
    summary: 'Revoke a worker token (Admin)', tags: ['jobs: admin'], security: bearer,
    responses: { 204: { description: 'revoked' }, ...errors(401, 403, 404) },
  }) },
  '/jobs/stats': { get: op({
    summary: 'Job counts (Admin)', tags: ['jobs: admin'], security: bearer,
    responses: { 200: { description: 'counts', schema: obj({
      byStatus: { type: 'object', additionalProperties: int },
      byQueue: { type: 'array', items: obj({ queue: str, status: JOB_STATUS, count: int }) },
      oldestQueuedSeconds: { type: 'number' },
    }) }, ...errors(401, 403) },
  }) },
  '/jobs/recent': { get: op({
    summary: 'Recent jobs, newest first (Admin)', tags: ['jobs: admin'], security: bearer,
    parameters: ['queue', 'status', 'limit', 'offset'].map((name) => ({ name, in: 'query', schema: str })),
    responses: { 200: { description: 'jobs', schema: obj({ jobs: { type: 'array', items: obj({
      id: str, queue: str, kind: str, status: JOB_STATUS, attempts: int, maxAttempts: int, error: strOrNull, createdAt: timestamp, updatedAt: timestamp,
    }) } }) }, ...errors(400, 401, 403) },
  }) },
};

export const DATA_PATHS: PathsContribution = {
  '/projections': { get: op({
    summary: 'Projections (Admin)', tags: ['projections'], security: bearer,
    description: 'Beside the specification\'s fields: `status` (`ready`, or `building` while a new or changed projection is built) and a build\'s progress (ADR 021).',
    responses: { 200: { description: 'projections', schema: obj({ projections: { type: 'array', items: obj({
      name: str, source_model: str, status: { type: 'string', enum: ['ready', 'building'] },
      build: obj({ phase: { type: 'string', enum: ['rows', 'orphans'] }, done: int, estimatedTotal: { type: ['integer', 'null'] }, startedAt: strOrNull }),
    }, ['name', 'source_model']) } }) }, ...errors(401, 403) },
  }) },
  '/projections/rebuild': { post: op({
    summary: 'Rebuild every projection from the event log (Admin)', tags: ['projections'], security: bearer,
    responses: {
      200: { description: 'rebuilt', schema: obj({ status: { const: 'rebuilt' }, count: int }) },
      ...errors(401, 403),
      409: { description: 'a rebuild is refused', schema: obj({ code: str, message: str }) },
      503: { description: 'rebuild failed; nothing changed', schema: obj({ code: str, message: str }) },
    },
  }) },
  '/public/records/{model}': { get: op({
    summary: 'Anonymous read of allowlisted models and fields', tags: ['public read'],
    description: 'Query parameters: `limit`, `offset`, and equality filters on SVC_PUBLIC_READ_FIELDS_<Model>.',
    parameters: [{ name: 'limit', in: 'query', schema: int }, { name: 'offset', in: 'query', schema: int }],
    responses: {
      200: { description: 'records', schema: obj({ items: { type: 'array', items: { type: 'object' } } }) }, ...errors(400, 404, 429),
      503: { description: 'the model\'s projection is being built (new or changed definition); `Retry-After` says when to ask again', schema: ERROR },
    },
  }) },
  '/storage/diagnostics': { get: op({
    summary: 'Read cache, history coverage, projection lag, audit usage (Admin)', tags: ['diagnostics'], security: bearer,
    description: 'From planner estimates and bounded reads (flagged `...IsEstimate`). `exactUpTo` (1..100000) counts exactly up to that bound; '
      + '`verify` (1..10000) compares the newest records of each projection with its base table.',
    parameters: [{ name: 'exactUpTo', in: 'query', schema: int }, { name: 'verify', in: 'query', schema: int }],
    responses: { 200: { description: 'report', schema: obj({ cache: { type: 'object' }, history: { type: 'object' }, projections: {}, audit: { type: 'object' } }) }, ...errors(400, 401, 403) },
  }) },
  '/graphql': {
    post: op({
      summary: 'GraphQL over HTTP (operations: CONTRACT section 4)', tags: ['graphql'], security: bearer,
      description: GRAPHQL_HTTP,
      requestBody: obj({ query: str, variables: { type: ['object', 'null'] }, operationName: strOrNull }, ['query']),
      responses: {
        200: { description: 'data and/or errors', schema: GRAPHQL_RESULT },
        400: { description: 'malformed request or a document that cannot run (no `data`)', schema: GRAPHQL_ERRORS },
        401: { description: 'no valid token: `extensions.code` UNAUTHORIZED, `WWW-Authenticate: Bearer`', schema: GRAPHQL_ERRORS },
        403: { description: 'a tenant the caller may not act in (FORBIDDEN)', schema: GRAPHQL_ERRORS },
        406: { description: 'Accept allows neither application/json nor application/graphql-response+json', schema: GRAPHQL_ERRORS },
        409: { description: 'an action worker\'s write-back (X-Worker-Token, X-Job-Id, X-Lease-Id): the lease is not current (docs/actions.md)', schema: GRAPHQL_ERRORS },
        415: { description: 'the body is not application/json', schema: GRAPHQL_ERRORS },
      },
    }),
    get: op({
      summary: 'GraphQL over HTTP: queries only (the IDE for a browser asking without `query`, outside production)', tags: ['graphql'],
      security: bearer,
      description: `${GRAPHQL_HTTP} A mutation is 405 with \`Allow: POST\`. A GET with no \`query\` whose Accept prefers text/html gets the IDE (text/html) outside production.`,
      parameters: [
        { name: 'query', in: 'query', schema: str },
        { name: 'variables', in: 'query', schema: str, description: 'JSON-encoded object' },
        { name: 'operationName', in: 'query', schema: str },
      ],
      responses: {
        200: { description: 'data and/or errors', schema: GRAPHQL_RESULT },
        400: { description: 'malformed parameters or a document that cannot run (no `data`)', schema: GRAPHQL_ERRORS },
        401: { description: 'no valid token (UNAUTHORIZED)', schema: GRAPHQL_ERRORS },
        403: { description: 'a tenant the caller may not act in (FORBIDDEN)', schema: GRAPHQL_ERRORS },
        405: { description: 'a mutation over GET; `Allow: POST`', schema: GRAPHQL_ERRORS },
        406: { description: 'Accept allows neither JSON media type', schema: GRAPHQL_ERRORS },
      },
    }),
  },
};
