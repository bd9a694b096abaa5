/** The OpenAPI contribution of the workflow routes (checked by test/openapi/conformance.integration.test.ts). */
import type { PathsContribution, Schema } from '../openapi/index.ts';
import { RUN_STATUSES } from './store.ts';

const str: Schema = { type: 'string' };
const strOrNull: Schema = { type: ['string', 'null'] };
const int: Schema = { type: 'integer' };
const timestamp: Schema = { type: 'string', format: 'date-time', description: 'ISO 8601, UTC, milliseconds' };
const timestampOrNull: Schema = { ...timestamp, type: ['string', 'null'] };
const obj = (properties: Record<string, Schema>, required: string[] = Object.keys(properties)): Schema => ({ type: 'object', properties, required });

const ERROR: Schema = obj({ error: str, code: str }, ['error']);
const VALIDATION: Schema = obj({ error: str, code: str, field: str }, ['error', 'field']);
const errors = (...statuses: number[]) => Object.fromEntries(statuses.map((status) => [String(status), {
  description: { 400: 'invalid input (`field` names it)', 401: 'authentication required', 403: 'not Admin, nor a role of a manual trigger', 404: 'unknown (or another tenant\'s)', 409: 'the workflow is not started by hand' }[status] ?? 'error',
  schema: status === 400 ? VALIDATION : ERROR,
}]));

const RUN_STATUS: Schema = { type: 'string', enum: [...RUN_STATUSES] };
const STEP_KIND: Schema = { type: 'string', enum: ['job', 'mutation', 'http', 'delay', 'set'] };
const TRIGGER_KIND: Schema = { type: 'string', enum: ['event', 'schedule', 'manual'] };

const WORKFLOW: Schema = obj({
  name: str,
  trigger: {
    oneOf: [
      obj({ kind: { const: 'event' }, on: str }),
      obj({ kind: { const: 'schedule' }, cron: str, timezone: str, nextAt: timestampOrNull }),
      obj({ kind: { const: 'manual' }, roles: { type: 'array', items: str } }),
    ],
  },
  steps: { type: 'array', items: obj({ id: str, kind: STEP_KIND }) },
  onFailure: { type: 'string', enum: ['stop', 'continue', 'retry'] },
});

const RUN_SUMMARY: Schema = obj({ id: str, workflow: str, status: RUN_STATUS, trigger: TRIGGER_KIND, error: strOrNull, createdAt: timestamp, finishedAt: timestampOrNull });

const RUN: Schema = obj({
  id: str, workflow: str, status: RUN_STATUS, trigger: TRIGGER_KIND,
  steps: {
    type: 'array',
    items: obj({
      id: str, kind: STEP_KIND,
      status: { type: 'string', enum: ['pending', 'running', 'waiting', 'succeeded', 'failed', 'skipped'] },
      attempts: int, output: {}, error: strOrNull, startedAt: timestampOrNull, finishedAt: timestampOrNull, jobId: strOrNull, wakeAt: timestampOrNull,
    }),
  },
  error: strOrNull, createdAt: timestamp, updatedAt: timestamp, finishedAt: timestampOrNull,
});

const bearer = ['bearer'];
const tags = ['workflows'];

export const WORKFLOW_PATHS: PathsContribution = {
  '/workflows': { get: {
    summary: 'The workflows open to the caller (Admin: all; others: manual ones naming their role)', tags, security: bearer,
    responses: { 200: { description: 'workflows', schema: obj({ items: { type: 'array', items: WORKFLOW } }) }, ...errors(401, 403) },
  } },
  '/workflows/{name}/run': { post: {
    summary: 'Start a run by hand (manual workflows: their roles and Admin; scheduled ones: Admin)', tags, security: bearer,
    description: 'The run belongs to the caller\'s tenant; `input` is `{{trigger.input}}` of its templates.',
    requestBody: obj({ input: { type: 'object' } }, []),
    responses: { 202: { description: 'started', schema: obj({ runId: str }) }, ...errors(400, 401, 403, 404, 409) },
  } },
  '/workflows/runs': { get: {
    summary: 'Runs of the caller\'s tenant, newest first', tags, security: bearer,
    parameters: [
      { name: 'workflow', in: 'query', schema: str }, { name: 'status', in: 'query', schema: RUN_STATUS },
      { name: 'limit', in: 'query', schema: int, description: '1..200, default 50 (clamped)' }, { name: 'cursor', in: 'query', schema: str },
    ],
    responses: { 200: { description: 'a page of runs', schema: obj({ items: { type: 'array', items: RUN_SUMMARY }, nextCursor: strOrNull }) }, ...errors(400, 401, 403) },
  } },
  '/workflows/runs/{id}': { get: {
    summary: 'One run with every step of the definition it started with', tags, security: bearer,
    responses: { 200: { description: 'the run', schema: RUN }, ...errors(401, 404) },
  } },
};
