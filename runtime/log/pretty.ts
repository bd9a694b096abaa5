/**
 * Human-readable log lines for a person at a terminal (SVC_LOG_FORMAT=pretty,
 * the default of `svc-gen dev`): the same pino records, redacted the same
 * way, written as `12:04:05.123 INFO  message  key=value`. Colour only when
 * the output is a terminal. A small equivalent of pino-pretty, without its
 * dependency tree.
 */
import type { DestinationStream } from 'pino';

const LEVELS: Record<number, { name: string; colour: number }> = {
  10: { name: 'TRACE', colour: 90 },
  20: { name: 'DEBUG', colour: 90 },
  30: { name: 'INFO ', colour: 32 },
  40: { name: 'WARN ', colour: 33 },
  50: { name: 'ERROR', colour: 31 },
  60: { name: 'FATAL', colour: 35 },
};

/** Fields every pino record has, shown elsewhere in the line or not at all. */
const HIDDEN = new Set(['level', 'time', 'pid', 'hostname', 'name', 'msg', 'err']);

export interface PrettyOptions {
  readonly colour?: boolean;
}

export function prettyDestination(out: { write(text: string): unknown } = process.stdout, options: PrettyOptions = {}): DestinationStream {
  const colour = options.colour ?? ((out as { isTTY?: boolean }).isTTY === true && !process.env.NO_COLOR);
  return {
    write(line: string) {
      out.write(formatLine(line, colour));
    },
  };
}

/** One JSON log line as text; a line that is not JSON passes through. */
export function formatLine(line: string, colour = false): string {
  let record: Record<string, unknown>;
  try {
    record = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return line.endsWith('\n') ? line : `${line}\n`;
  }
  const paint = (code: number, text: string) => (colour ? `\x1b[${code}m${text}\x1b[0m` : text);
  const level = LEVELS[record.level as number] ?? { name: String(record.level).padEnd(5), colour: 0 };
  const time = typeof record.time === 'number' ? new Date(record.time).toISOString().slice(11, 23) : '';
  const fields = Object.entries(record)
    .filter(([key]) => !HIDDEN.has(key))
    .map(([key, value]) => `${paint(90, `${key}=`)}${show(value)}`);
  const head = `${paint(90, time)} ${paint(level.colour, level.name)} ${String(record.msg ?? '')}`;
  const err = record.err as { type?: string; message?: string; stack?: string } | undefined;
  const errLines = err ? [`    ${err.stack ?? `${err.type ?? 'Error'}: ${err.message ?? ''}`}`.replace(/\n/g, '\n    ')] : [];
  return `${[fields.length ? `${head}  ${fields.join(' ')}` : head, ...errLines].join('\n')}\n`;
}

function show(value: unknown): string {
  if (typeof value === 'string') return /^[^\s"=]+$/.test(value) ? value : JSON.stringify(value);
  return JSON.stringify(value) ?? String(value);
}
