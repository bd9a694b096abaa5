/**
 * GraphQL errors as clients see them: `{message, extensions: {code}}` with a
 * code of CONTRACT section 4 (this wire's renderer of SafeError). Safe errors keep their message; anything
 * unexpected is logged and masked as INTERNAL_ERROR (no SQL text, no stack).
 * A write with several invalid fields answers one error per field, in input
 * order, each with `extensions.field` (CONTRACT section 15).
 */
import { GraphQLError, type GraphQLFormattedError } from 'graphql';
import { SafeError } from '../http/errors.ts';
import { safeErr, type Logger } from '../log/index.ts';
import { isDatabaseUnavailable, unavailableMessage } from '../db/index.ts';
import { ERROR_CODES, type ErrorCode } from '../records/index.ts';

/** A SafeError's code on this wire: the five of CONTRACT section 4 (a too-large input is a validation error). */
function graphqlCode(error: SafeError): ErrorCode {
  if ((ERROR_CODES as readonly string[]).includes(error.code)) return error.code as ErrorCode;
  return error.status === 413 || error.status === 409 ? 'VALIDATION_ERROR' : 'INTERNAL_ERROR';
}

interface Safe {
  readonly code: ErrorCode;
  readonly message: string;
  readonly field?: string;
  readonly fieldErrors?: SafeError['fieldErrors'];
}

function safeOf(error: GraphQLError): Safe | null {
  const original = error.originalError;
  // No original error: the document or its arguments are invalid (graphql-js' own messages).
  if (!original || (original instanceof GraphQLError && !original.originalError)) {
    return { code: 'VALIDATION_ERROR', message: error.message };
  }
  if (original instanceof SafeError) {
    return { code: graphqlCode(original), message: original.message, field: original.field, fieldErrors: original.fieldErrors };
  }
  // INTERNAL_ERROR is this wire's code for it (CONTRACT section 4); the HTTP status says 503 (graphql/http.ts).
  if (isDatabaseUnavailable(original)) return { code: 'INTERNAL_ERROR', message: unavailableMessage(original) };
  return null;
}

/** An error that only says the database cannot take the work now: the client should retry. */
export const isUnavailableError = (error: GraphQLError): boolean => isDatabaseUnavailable(error.originalError);

/** The errors clients see for one GraphQL error: one per invalid field when there are several. */
export function formatErrors(error: GraphQLError, log: Logger): GraphQLFormattedError[] {
  const safe = safeOf(error);
  const where = { ...(error.locations ? { locations: error.locations } : {}), ...(error.path ? { path: error.path } : {}) };
  if (!safe) {
    log.error({ err: safeErr(error.originalError ?? error), path: error.path }, 'graphql operation failed');
    return [{ message: 'internal error', ...where, extensions: { code: 'INTERNAL_ERROR' } }];
  }
  // Told to the client as a 503, and to the operator: REST logs the same failures (http/app.ts).
  if (isUnavailableError(error)) log.warn({ err: safeErr(error.originalError), path: error.path }, 'graphql operation: database unavailable');
  if (safe.fieldErrors && safe.fieldErrors.length > 1) {
    return safe.fieldErrors.map((e) => ({ message: e.message, ...where, extensions: { code: safe.code, field: e.field } }));
  }
  const extensions = safe.field === undefined ? { code: safe.code } : { code: safe.code, field: safe.field };
  return [{ message: safe.message, ...where, extensions }];
}

/** A whole-request error (bad body, wrong tenant) in the GraphQL response shape. */
export function requestError(code: ErrorCode, message: string, field?: string): { errors: GraphQLFormattedError[] } {
  return { errors: [{ message, extensions: field === undefined ? { code } : { code, field } }] };
}
