/**
 * GraphQL errors as clients see them: `{message, extensions: {code}}` with a
 * code of CONTRACT section 4. Safe errors keep their message; anything
 * unexpected is logged and masked as INTERNAL_ERROR (no SQL text, no stack).
 */
import { GraphQLError, type GraphQLFormattedError } from 'graphql';
import { HttpError } from '../http/errors.ts';
import type { Logger } from '../log/index.ts';
import { RecordError, type ErrorCode } from '../records/index.ts';

const BY_STATUS: Record<number, ErrorCode> = { 400: 'VALIDATION_ERROR', 401: 'UNAUTHORIZED', 403: 'FORBIDDEN', 404: 'NOT_FOUND' };

interface Safe {
  readonly code: ErrorCode;
  readonly message: string;
  readonly field?: string;
}

function safeOf(error: GraphQLError): Safe | null {
  const original = error.originalError;
  // No original error: the document or its arguments are invalid (graphql-js' own messages).
  if (!original || (original instanceof GraphQLError && !original.originalError)) {
    return { code: 'VALIDATION_ERROR', message: error.message };
  }
  if (original instanceof RecordError) return { code: original.code, message: original.message, field: original.field };
  if (original instanceof HttpError && BY_STATUS[original.status]) return { code: BY_STATUS[original.status], message: original.message };
  return null;
}

export function formatError(error: GraphQLError, log: Logger): GraphQLFormattedError {
  const safe = safeOf(error);
  const where = { ...(error.locations ? { locations: error.locations } : {}), ...(error.path ? { path: error.path } : {}) };
  if (!safe) {
    log.error({ err: error.originalError ?? error, path: error.path }, 'graphql operation failed');
    return { message: 'internal error', ...where, extensions: { code: 'INTERNAL_ERROR' } };
  }
  const extensions = safe.field === undefined ? { code: safe.code } : { code: safe.code, field: safe.field };
  return { message: safe.message, ...where, extensions };
}

/** A whole-request error (bad body, wrong tenant) in the GraphQL response shape. */
export function requestError(code: ErrorCode, message: string): { errors: GraphQLFormattedError[] } {
  return { errors: [{ message, extensions: { code } }] };
}
