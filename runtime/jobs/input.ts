/**
 * Validation of the queue's inputs: bad input is a 400 with a readable
 * message, never a 500 from a constraint or a cast in SQL.
 */
import { badRequest } from '../http/errors.ts';
import { rejectTooDeep } from '../http/input.ts';
import type { EnqueueInput } from './types.ts';

export const DEFAULT_MAX_ATTEMPTS = 5;
export const DEFAULT_PRIORITY = 0;
const MAX_NAME_LENGTH = 200;
/**
 * Queues the runtime keeps for itself (the workflow engine's `svc.workflows`):
 * no client may enqueue into them, and no worker token may lease from them.
 */
export const INTERNAL_QUEUE_PREFIX = 'svc.';

export const isInternalQueue = (queue: string) => queue.startsWith(INTERNAL_QUEUE_PREFIX);

/** A queue name a client may use: not one of the runtime's own. */
export function requirePublicQueue(value: unknown, field: string): string {
  const queue = requireName(value, field);
  if (isInternalQueue(queue)) throw badRequest(`${field}: queue names starting with ${INTERNAL_QUEUE_PREFIX} are reserved`);
  return queue;
}
const INT32_MAX = 2_147_483_647;

export interface NormalizedJob {
  readonly queue: string;
  readonly kind: string;
  readonly payload: unknown;
  readonly idempotencyKey: string | null;
  readonly maxAttempts: number;
  readonly priority: number;
}

/** A non-blank string of at most 200 characters (kept as given, only trimmed). */
export function requireName(value: unknown, field: string): string {
  if (typeof value !== 'string' || value.trim() === '') throw badRequest(`${field} must be a non-blank string`);
  const name = value.trim();
  if (name.length > MAX_NAME_LENGTH) throw badRequest(`${field} must be at most ${MAX_NAME_LENGTH} characters`);
  return name;
}

export function optionalInt(value: unknown, field: string, fallback: number, min: number, max = INT32_MAX): number {
  if (value === undefined || value === null) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw badRequest(`${field} must be an integer between ${min} and ${max}`);
  }
  return value;
}

/** Clamps a number into [min, max]; a missing value gives `fallback`, a non-number a 400. */
export function clampInt(value: unknown, field: string, fallback: number, min: number, max: number): number {
  if (value === undefined || value === null) return fallback;
  if (typeof value !== 'number' || !Number.isFinite(value)) throw badRequest(`${field} must be a number`);
  return Math.min(max, Math.max(min, Math.floor(value)));
}

/** `internal`: the runtime's own enqueue, which may use a reserved queue. */
export function normalizeJob(input: EnqueueInput, internal = false): NormalizedJob {
  if (typeof input !== 'object' || input === null) throw badRequest('body must be a JSON object');
  const key = input.idempotencyKey;
  if (key !== undefined && key !== null && (typeof key !== 'string' || key.length > MAX_NAME_LENGTH)) {
    throw badRequest(`idempotencyKey must be a string of at most ${MAX_NAME_LENGTH} characters`);
  }
  rejectTooDeep(input.payload, 'payload');
  return {
    queue: internal ? requireName(input.queue, 'queue') : requirePublicQueue(input.queue, 'queue'),
    kind: requireName(input.kind, 'kind'),
    payload: input.payload === undefined ? {} : input.payload,
    idempotencyKey: key === undefined || key === null || key === '' ? null : key,
    maxAttempts: optionalInt(input.maxAttempts, 'maxAttempts', DEFAULT_MAX_ATTEMPTS, 1, 1000),
    priority: optionalInt(input.priority, 'priority', DEFAULT_PRIORITY, -INT32_MAX, INT32_MAX),
  };
}

export function requireObject(body: unknown): Record<string, unknown> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw badRequest('body must be a JSON object');
  return body as Record<string, unknown>;
}

export function requireLeaseId(body: Record<string, unknown>): string {
  const leaseId = body.leaseId;
  if (typeof leaseId !== 'string' || leaseId === '') throw badRequest('leaseId is required');
  return leaseId;
}
