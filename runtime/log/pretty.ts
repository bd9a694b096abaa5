/**
 * Human-readable log lines for a person at a terminal (SVC_LOG_FORMAT=pretty,
 * the default of `svc-gen dev`): the same pino records, redacted the same
 * way, formatted by pino-pretty as `[12:04:05.123] INFO: message {"key":"value"}`,
 * an error's stack indented below. Colour only when the output is a terminal.
 *
 * pino-pretty's formatter runs in this thread, line by line (not as a
 * transport): a line is written before `log.info` returns, as with JSON. It
 * is loaded on first use: a server logging JSON never loads it (~45 ms of a
 * cold start).
 */
import { createRequire } from 'node:module';
import type { DestinationStream } from 'pino';
import type PinoPretty from 'pino-pretty';

const require = createRequire(import.meta.url);

export interface PrettyOptions {
  readonly colour?: boolean;
}

type Format = (line: string) => string;

/** One pino-pretty formatter per colour setting, made on first use. */
const formats = new Map<boolean, Format>();

function formatter(colour: boolean): Format {
  let format = formats.get(colour);
  if (!format) {
    const { prettyFactory } = require('pino-pretty') as typeof PinoPretty;
    format = prettyFactory({ colorize: colour, translateTime: 'HH:MM:ss.l', ignore: 'pid,hostname,name', singleLine: true });
    formats.set(colour, format);
  }
  return format;
}

export function prettyDestination(out: { write(text: string): unknown } = process.stdout, options: PrettyOptions = {}): DestinationStream {
  const colour = options.colour ?? ((out as { isTTY?: boolean }).isTTY === true && !process.env.NO_COLOR);
  const format = formatter(colour);
  return {
    write(line: string) {
      out.write(format(line));
    },
  };
}

/** One JSON log line as text; a line that is not JSON passes through. */
export function formatLine(line: string, colour = false): string {
  const text = formatter(colour)(line);
  return text.endsWith('\n') ? text : `${text}\n`;
}
