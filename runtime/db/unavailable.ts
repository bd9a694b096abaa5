/**
 * Whether an error means the database cannot be reached or cannot take the
 * work now (restarting, out of connections, the network cut, a statement
 * cancelled by its time limit), rather than a fault of the request or of the
 * code. Such a failure is answered 503 with Retry-After (the client should try
 * again), never a 500 that reads as a bug.
 */

/** SQLSTATE classes and codes: connection exceptions, insufficient resources, shutdowns and recovery. */
const UNAVAILABLE_CLASSES = ['08', '53'];
const UNAVAILABLE_CODES = new Set(['57P01', '57P02', '57P03']);

/** Node's socket errors on the way to Postgres. */
const SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN']);

/** node-postgres and pg-pool say it in their messages only. */
const DRIVER_MESSAGES = [
  'Connection terminated',
  'timeout exceeded when trying to connect',
  'Client has encountered a connection error and is not queryable',
  'Cannot use a pool after calling end on the pool',
];

/** What a client is told when the database cannot take the work now. */
export function unavailableMessage(error: unknown): string {
  return isStatementTimeout(error) ? 'the request exceeded the database time limit' : 'service temporarily unavailable';
}

/** Postgres cancelled the statement: its statement_timeout (SVC_DB_STATEMENT_TIMEOUT_MS), or an administrator. */
export function isStatementTimeout(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === '57014';
}

export function isDatabaseUnavailable(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const { code, message } = error as { code?: unknown; message?: unknown };
  if (typeof code === 'string') {
    if (SOCKET_CODES.has(code) || UNAVAILABLE_CODES.has(code) || isStatementTimeout(error)) return true;
    if (/^[0-9A-Z]{5}$/.test(code) && UNAVAILABLE_CLASSES.includes(code.slice(0, 2))) return true;
  }
  return typeof message === 'string' && DRIVER_MESSAGES.some((m) => message.startsWith(m));
}
