/**
 * Structured logging (pino). Secrets never reach a log line: see REDACT. Nor
 * does user data through a database error: pg-promise hangs the statement
 * text and every bound value on the error (`query`, `params`), and Postgres'
 * own message and detail quote the offending value. `safeErr` keeps the
 * statement's name, the SQLSTATE and the schema objects involved, nothing else.
 */
import { pino, stdSerializers, type DestinationStream, type Logger } from 'pino';
import type { LogFormat, LogLevel } from '../config/index.ts';
import { prettyDestination } from './pretty.ts';

export type { Logger } from 'pino';

const REDACT = [
  'password', '*.password', 'token', '*.token', 'refresh_token', '*.refresh_token', 'refreshToken',
  'req.headers.authorization', 'req.headers["x-worker-token"]', 'req.headers.cookie',
];

interface DatabaseErrorLike {
  readonly severity: string;
  readonly code: string;
  readonly routine?: string;
  readonly table?: string;
  readonly column?: string;
  readonly constraint?: string;
  readonly query?: unknown;
}

function isDatabaseError(error: unknown): error is DatabaseErrorLike {
  const e = error as Partial<DatabaseErrorLike> | null;
  return typeof e === 'object' && e !== null && typeof e.severity === 'string' && typeof e.code === 'string';
}

/** The name of a prepared statement (pg-promise's query object), never its text. */
function statementName(query: unknown): string | undefined {
  const name = (query as { name?: unknown } | null)?.name;
  return typeof query === 'object' && typeof name === 'string' ? name : undefined;
}

/** An error as a log line may show it. */
export function safeErr(error: unknown): Record<string, unknown> {
  if (isDatabaseError(error)) {
    return {
      type: 'DatabaseError', sqlstate: error.code, statement: statementName(error.query) ?? 'unnamed',
      routine: error.routine, table: error.table, column: error.column, constraint: error.constraint,
    };
  }
  if (error instanceof Error) {
    const serialized = stdSerializers.err(error) as unknown as Record<string, unknown>;
    const { query: _query, params: _params, ...rest } = serialized;
    if (error.cause !== undefined) rest.cause = safeErr(error.cause);
    return rest;
  }
  // Already made safe (a caller passed `safeErr(error)`), or a plain value.
  return typeof error === 'object' && error !== null ? (error as Record<string, unknown>) : { value: String(error) };
}

/**
 * `destination` defaults to stdout (tests pass a stream to read the lines back);
 * `format` pretty writes the same redacted records as readable lines.
 */
export function createLogger(level: LogLevel, name = 'svc-gen', destination?: DestinationStream, format: LogFormat = 'json'): Logger {
  const options = { name, level, redact: { paths: REDACT, censor: '[redacted]' }, serializers: { err: safeErr } };
  if (format === 'pretty') return pino(options, prettyDestination(destination ?? process.stdout));
  return destination ? pino(options, destination) : pino(options);
}

export { formatLine, prettyDestination } from './pretty.ts';
