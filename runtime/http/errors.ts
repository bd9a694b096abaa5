/**
 * Errors that are safe to show a client: `SafeError {status, code, message,
 * field?}`. Each wire format has one renderer (REST `{error, code, ...}`
 * here, GraphQL `extensions.code` in graphql/errors.ts, realtime error frames
 * in realtime/protocol.ts). Anything else is logged and answered as a 500
 * `{error: 'internal error'}`: no SQL text, no stack, no secret.
 */
export type SafeCode =
  | 'VALIDATION_ERROR' | 'UNAUTHORIZED' | 'FORBIDDEN' | 'NOT_FOUND' | 'METHOD_NOT_ALLOWED' | 'CONFLICT'
  | 'PAYLOAD_TOO_LARGE' | 'RATE_LIMITED' | 'INTERNAL_ERROR' | 'BAD_GATEWAY' | 'UNAVAILABLE';

const CODE_OF_STATUS: Record<number, SafeCode> = {
  400: 'VALIDATION_ERROR', 401: 'UNAUTHORIZED', 403: 'FORBIDDEN', 404: 'NOT_FOUND', 405: 'METHOD_NOT_ALLOWED',
  409: 'CONFLICT', 413: 'PAYLOAD_TOO_LARGE', 429: 'RATE_LIMITED', 500: 'INTERNAL_ERROR', 502: 'BAD_GATEWAY', 503: 'UNAVAILABLE',
};

const STATUS_OF_CODE: Partial<Record<SafeCode, number>> = Object.fromEntries(
  Object.entries(CODE_OF_STATUS).map(([status, code]) => [code, Number(status)]),
);

export const codeOfStatus = (status: number): SafeCode =>
  CODE_OF_STATUS[status] ?? (status >= 500 ? 'INTERNAL_ERROR' : 'VALIDATION_ERROR');

export const statusOfCode = (code: SafeCode): number => STATUS_OF_CODE[code] ?? 500;

/** One invalid input field of a request that has several (CONTRACT section 15). */
export interface FieldError {
  readonly field: string;
  readonly message: string;
}

export interface SafeErrorOptions {
  /** The input field at fault (`email`, `where.stage`). */
  readonly field?: string;
  /**
   * Every invalid field when there are several, the first being `field`: REST
   * adds them as `errors`, GraphQL answers one error per field.
   */
  readonly fieldErrors?: readonly FieldError[];
  /** Extra fields of the REST body, beside `error` and `code`. */
  readonly body?: Readonly<Record<string, unknown>>;
  readonly headers?: Readonly<Record<string, string>>;
}

export class SafeError extends Error {
  readonly field: string | undefined;
  readonly fieldErrors: readonly FieldError[];
  readonly body: Readonly<Record<string, unknown>>;
  readonly headers: Readonly<Record<string, string>>;

  constructor(readonly status: number, readonly code: SafeCode, message: string, options: SafeErrorOptions = {}) {
    super(message);
    this.name = 'SafeError';
    this.field = options.field;
    this.fieldErrors = options.fieldErrors ?? (options.field === undefined ? [] : [{ field: options.field, message }]);
    this.body = options.body ?? {};
    this.headers = options.headers ?? {};
  }
}

/** A SafeError made from an HTTP status (the code follows from it). */
export class HttpError extends SafeError {
  constructor(
    status: number,
    message: string,
    body: Readonly<Record<string, unknown>> = {},
    headers: Readonly<Record<string, string>> = {},
  ) {
    super(status, codeOfStatus(status), message, { body, headers, field: typeof body.field === 'string' ? body.field : undefined });
    this.name = 'HttpError';
  }
}

/** The REST rendering: `{error, code, field?, errors?, ...body}` (`error` and `field`: the first invalid field). */
export function restBody(error: SafeError): Record<string, unknown> {
  return {
    error: error.message, code: error.code,
    ...(error.field === undefined ? {} : { field: error.field }),
    ...(error.fieldErrors.length > 1 ? { errors: error.fieldErrors } : {}),
    ...error.body,
  };
}

/** Seconds a client should wait before retrying while the database is unreachable. */
export const UNAVAILABLE_RETRY_SECS = 5;

export const badRequest = (message: string, body?: Record<string, unknown>) => new HttpError(400, message, body);
export const invalidField = (field: string, message: string) => new SafeError(400, 'VALIDATION_ERROR', message, { field });
export const unauthorized = (message = 'authentication required') => new HttpError(401, message);
export const forbidden = (message = 'forbidden') => new HttpError(403, message);
export const notFound = (message = 'not found') => new HttpError(404, message);
export const conflict = (message: string, body?: Record<string, unknown>) => new HttpError(409, message, body);
export const unavailable = (message = 'service temporarily unavailable') =>
  new SafeError(503, 'UNAVAILABLE', message, { headers: { 'Retry-After': String(UNAVAILABLE_RETRY_SECS) } });
