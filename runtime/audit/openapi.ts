/** The audit routes in the OpenAPI document (CONTRACT section 9). */
import type { PathsContribution, Schema } from '../openapi/index.ts';
import { bearer, errors, int, obj, op, str, strOrNull, timestamp } from '../openapi/paths.ts';

const ENTRY: Schema = obj({
  id: str, occurredAt: timestamp, tenantId: strOrNull,
  actor: obj({ kind: { type: 'string', enum: ['user', 'worker', 'system', 'anonymous'] }, id: strOrNull, role: strOrNull }),
  action: str, entityType: strOrNull, entityId: strOrNull, eventId: strOrNull,
  outcome: { type: 'string', enum: ['success', 'denied', 'error'] },
  changes: {}, ip: strOrNull, userAgent: strOrNull, requestId: strOrNull,
});
const PAGE: Schema = obj({ items: { type: 'array', items: ENTRY }, nextCursor: strOrNull });
const FILTERS = ['entityType', 'entityId', 'actorId', 'action', 'outcome', 'from', 'to', 'limit', 'cursor']
  .map((name) => ({ name, in: 'query', schema: name === 'limit' ? int : str }));
const counts: Schema = { type: 'object', additionalProperties: int };

const page = (summary: string, parameters = FILTERS, extra: number[] = []) => op({
  summary, tags: ['audit'], security: bearer, parameters,
  description: 'Newest first; `limit` 1..200 (default 50, larger is clamped); `nextCursor` pages on. Scoped to the caller\'s tenant.',
  responses: { 200: { description: 'a page of entries', schema: PAGE }, ...errors(400, 401, 403, ...extra) },
});

export const AUDIT_PATHS: PathsContribution = {
  '/audit/logs': { get: page('Audit entries (Admin, Manager)') },
  '/audit/user/{id}/activity': { get: page('One user\'s actions (Admin, Manager, or the user)', FILTERS.filter((f) => f.name !== 'actorId')) },
  '/audit/entity/{type}/{id}/audit': {
    get: page('One entity\'s trail (Admin, Manager); type: a model, User, Job, WorkerToken, Projection or Media',
      FILTERS.filter((f) => f.name !== 'entityType' && f.name !== 'entityId'), [404]),
  },
  '/audit/statistics': { get: op({
    summary: 'Counts by action, outcome, entity type; top actors (Admin, Manager)', tags: ['audit'], security: bearer,
    parameters: ['from', 'to'].map((name) => ({ name, in: 'query', schema: str })),
    responses: { 200: { description: 'statistics', schema: obj({
      total: int, byAction: counts, byOutcome: counts,
      byEntityType: { type: 'array', items: obj({ entityType: str, count: int }) },
      topActors: { type: 'array', items: obj({ actorId: strOrNull, count: int, lastAt: timestamp }) },
      range: obj({ from: str, to: str }),
    }) }, ...errors(400, 401, 403) },
  }) },
};
