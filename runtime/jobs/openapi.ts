/** The OpenAPI contribution of the jobs admin routes of CONTRACT section 16 (routes/control.ts). */
import type { PathsContribution, Schema } from '../openapi/index.ts';
import { bearer, errors, int, obj, op, str, strOrNull, timestamp } from '../openapi/paths.ts';

const STATUS: Schema = { type: 'string', enum: ['queued', 'leased', 'succeeded', 'failed', 'dead'] };
const FILTER: Schema = {
  ...obj({ queue: str, status: STATUS, kind: str, payload: { type: 'object', description: 'matched by containment: payload @> this object' } }, []),
  additionalProperties: false,
};
const JOB: Schema = obj({
  id: str, queue: str, kind: str, status: STATUS, attempts: int, maxAttempts: int, priority: int, payload: {}, result: {},
  error: strOrNull, createdBy: strOrNull, createdAt: timestamp, updatedAt: timestamp, visibleAt: timestamp,
});
const admin = (summary: string) => ({ summary: `${summary} (Admin)`, tags: ['jobs: admin'], security: bearer });
const changedOne = (what: string) => ({
  ...admin(what),
  responses: {
    200: { description: 'the job as it now is', schema: JOB },
    ...errors(401, 403, 404, 409),
  },
});

export const CONTROL_PATHS: PathsContribution = {
  '/jobs/search': { get: op({
    ...admin('Jobs by queue, status, kind and payload, newest first (keyset pages)'),
    parameters: [
      { name: 'queue', in: 'query', schema: str }, { name: 'status', in: 'query', schema: STATUS }, { name: 'kind', in: 'query', schema: str },
      { name: 'payload', in: 'query', schema: str, description: 'a JSON object; a job matches when its payload contains it' },
      { name: 'after', in: 'query', schema: str, description: 'the nextCursor of the previous page' },
      { name: 'limit', in: 'query', schema: int, description: '1..200, default 50 (clamped)' },
    ],
    responses: { 200: { description: 'a page', schema: obj({ jobs: { type: 'array', items: JOB }, nextCursor: strOrNull }) }, ...errors(400, 401, 403) },
  }) },
  '/jobs/{id}/inspect': { get: op({
    ...admin('A job with its payload, result and timestamps'),
    responses: { 200: { description: 'the job', schema: JOB }, ...errors(401, 403, 404) },
  }) },
  '/jobs/{id}/retry': { post: op(changedOne('Retry a dead or failed job: queued again with its full maxAttempts')) },
  '/jobs/{id}/cancel': { post: op(changedOne('Cancel a queued job: it becomes dead with the error "cancelled"')) },
  '/jobs/bulk': { post: op({
    ...admin('Retry or cancel every job a filter matches; with dryRun, only count them'),
    requestBody: { ...obj({ filter: FILTER, action: { type: 'string', enum: ['retry', 'cancel'] }, dryRun: { type: 'boolean' } }, ['action']) },
    responses: {
      200: { description: '{matched} with dryRun, else {changed}', schema: { oneOf: [obj({ matched: int }), obj({ changed: int })] } },
      ...errors(400, 401, 403),
    },
  }) },
};
