/**
 * The statements one HTTP request itself sends to Postgres before it answers.
 * Background work (the change feed, consumers, heartbeats, sweeps) runs in
 * other async contexts and is not counted; anything sent after the response
 * is ended (a read the feed arms while the request commits) is not the
 * request's either. Counting every `Client.query` globally instead is flaky:
 * a sweep that fires during the request is counted as the request's.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { Server, ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import pg from 'pg';

interface Recording {
  readonly sent: string[];
  open: boolean;
}

export interface StatementRecorder {
  /** The statements of the request that started last (texts, whitespace collapsed). */
  last(): readonly string[];
  /** Puts `Client.query` back and stops recording. */
  restore(): void;
}

/** Records, per request of `server`, the statements of the project's pg and of pg-promise's own copy of it. */
export function recordStatements(server: Server): StatementRecorder {
  const context = new AsyncLocalStorage<Recording>();
  let last: Recording = { sent: [], open: false };
  const require = createRequire(import.meta.url);
  const clients = new Set([pg.Client, (require(createRequire(require.resolve('pg-promise')).resolve('pg')) as typeof pg).Client]);
  const originals = new Map<typeof pg.Client, (...args: unknown[]) => unknown>();
  for (const Client of clients) {
    const original = Client.prototype.query as (...args: unknown[]) => unknown;
    originals.set(Client, original);
    Client.prototype.query = function query(this: unknown, ...args: unknown[]) {
      const recording = context.getStore();
      if (recording?.open) {
        const first = args[0] as string | { text?: string; name?: string };
        recording.sent.push((typeof first === 'string' ? first : first?.text ?? `(named ${first?.name})`).replace(/\s+/g, ' ').trim());
      }
      return original.apply(this, args);
    } as typeof Client.prototype.query;
  }
  const onRequest = (_request: unknown, response: ServerResponse) => {
    const recording: Recording = { sent: [], open: true };
    last = recording;
    context.enterWith(recording);
    const end = response.end;
    response.end = function (this: ServerResponse, ...args: unknown[]) {
      recording.open = false;
      return (end as (...a: unknown[]) => ServerResponse).apply(this, args);
    } as typeof response.end;
  };
  server.prependListener('request', onRequest);
  return {
    last: () => last.sent,
    restore() {
      server.off('request', onRequest);
      for (const [Client, original] of originals) Client.prototype.query = original as typeof Client.prototype.query;
    },
  };
}

export interface SentStatement {
  /** As sent: parameterised text, or text pg-promise formatted with its values inlined. */
  readonly text: string;
  readonly values: unknown[];
}

/**
 * Every statement any pg client of this process sends (requests, start-up,
 * background work alike) until `stop`: for a window where the test controls
 * what runs, such as a start (a count of what a start sends) or a whole
 * scenario whose statements are then EXPLAINed.
 */
export function captureStatements(): { readonly sent: readonly SentStatement[]; stop(): void } {
  const require = createRequire(import.meta.url);
  const clients = new Set([pg.Client, (require(createRequire(require.resolve('pg-promise')).resolve('pg')) as typeof pg).Client]);
  const originals = new Map<typeof pg.Client, (...args: unknown[]) => unknown>();
  const sent: SentStatement[] = [];
  for (const Client of clients) {
    const original = Client.prototype.query as (...args: unknown[]) => unknown;
    originals.set(Client, original);
    Client.prototype.query = function query(this: unknown, ...args: unknown[]) {
      const first = args[0] as string | { text?: string; values?: unknown[] };
      if (typeof first === 'string') sent.push({ text: first, values: Array.isArray(args[1]) ? args[1] : [] });
      else if (first?.text) sent.push({ text: first.text, values: first.values ?? [] });
      return original.apply(this, args);
    } as typeof Client.prototype.query;
  }
  return {
    sent,
    stop() {
      for (const [Client, original] of originals) Client.prototype.query = original as typeof Client.prototype.query;
    },
  };
}

/** The statements matching `pattern` that any pg client of this process sends while `run` runs. */
export async function captureMatching(pattern: RegExp, run: () => Promise<unknown>): Promise<SentStatement[]> {
  const capture = captureStatements();
  try {
    await run();
  } finally {
    capture.stop();
  }
  return capture.sent.filter((statement) => pattern.test(statement.text));
}
