/** The OpenAPI contribution of the actions capability: `POST /api/actions/{name}`. */
import type { PathsContribution, Schema } from '../openapi/index.ts';
import { MAX_WAIT_SECS } from './invoke.ts';

const str: Schema = { type: 'string' };
const ERROR: Schema = { type: 'object', properties: { error: str, code: str }, required: ['error'] };
const VALIDATION: Schema = { type: 'object', properties: { error: str, code: str, field: str }, required: ['error', 'field'] };

export const ACTION_PATHS: PathsContribution = {
  '/api/actions/{name}': {
    post: {
      summary: 'Invoke an action directly (its job goes to queue `actions`, kind = the action)',
      description: 'The input is checked against the action\'s declaration in schema.ts; `access` decides who may call it. '
        + 'The job carries the caller\'s tenant. `idempotencyKey` is scoped to the caller and the action: a repeat returns the same job. '
        + `With \`wait\` (0..${MAX_WAIT_SECS} seconds) the answer waits for the job to end: 200 with its result or error, else 202.`,
      tags: ['actions'],
      security: ['bearer'],
      requestBody: {
        type: 'object',
        properties: {
          input: { type: 'object', description: 'the action\'s input (its declaration in schema.ts)' },
          idempotencyKey: { type: 'string', maxLength: 200 },
          wait: { type: 'number', minimum: 0, maximum: MAX_WAIT_SECS },
        },
      },
      responses: {
        200: {
          description: 'the job ended within `wait`',
          schema: {
            oneOf: [
              { type: 'object', properties: { jobId: str, status: { const: 'succeeded' }, result: {} }, required: ['jobId', 'status', 'result'] },
              { type: 'object', properties: { jobId: str, status: { const: 'dead' }, error: { type: ['string', 'null'] } }, required: ['jobId', 'status', 'error'] },
            ],
          },
        },
        202: {
          description: 'enqueued (or, with `wait`, not ended in time): the job\'s current status',
          schema: { type: 'object', properties: { jobId: str, status: { enum: ['queued', 'leased', 'succeeded', 'dead'] } }, required: ['jobId', 'status'] },
        },
        400: { description: 'bad input: `field` names it (`input.leadId`, `wait`)', schema: VALIDATION },
        401: { description: 'no valid token', schema: ERROR },
        403: { description: 'the action\'s `access` refuses the caller, or a tenant it may not act in', schema: ERROR },
        404: { description: 'no action of that name', schema: ERROR },
      },
    },
  },
};
