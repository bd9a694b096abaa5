/** Structured logging (pino). Secrets never reach a log line: see REDACT. */
import { pino, type Logger } from 'pino';
import type { LogLevel } from '../config/index.ts';

export type { Logger } from 'pino';

const REDACT = [
  'password', '*.password', 'token', '*.token', 'refresh_token', '*.refresh_token', 'refreshToken',
  'req.headers.authorization', 'req.headers["x-worker-token"]', 'req.headers.cookie',
];

export function createLogger(level: LogLevel, name = 'svc-gen'): Logger {
  return pino({ name, level, redact: { paths: REDACT, censor: '[redacted]' } });
}
