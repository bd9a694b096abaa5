/**
 * Errors that are safe to show a client. Anything else is logged and answered
 * as a 500 `{error: 'internal error'}`: no SQL text, no stack, no secret.
 */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    /** Extra fields of the JSON body, beside `error`. */
    readonly body: Readonly<Record<string, unknown>> = {},
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(message);
    this.name = 'HttpError';
  }
}

export const badRequest = (message: string, body?: Record<string, unknown>) => new HttpError(400, message, body);
export const unauthorized = (message = 'authentication required') => new HttpError(401, message);
export const forbidden = (message = 'forbidden') => new HttpError(403, message);
export const notFound = (message = 'not found') => new HttpError(404, message);
export const conflict = (message: string, body?: Record<string, unknown>) => new HttpError(409, message, body);
