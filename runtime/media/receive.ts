/**
 * Reads one `multipart/form-data` upload with busboy: the part named `file`
 * is handed to `store` as a stream while it arrives, so it is never held
 * whole in memory. Content types that a browser would run (HTML, SVG) are
 * refused before a byte is stored.
 */
import type { IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';
import busboy from 'busboy';
import { badRequest, HttpError } from '../http/errors.ts';

export interface FilePart {
  readonly filename: string;
  readonly contentType: string;
}

export interface ReceiveOptions<T> {
  readonly accepts: (contentType: string) => boolean;
  readonly store: (file: Readable, part: FilePart) => Promise<T>;
}

export const unsupportedType = (type: string) =>
  new HttpError(415, 'unsupported_media_type', { message: `content type ${type} is not allowed` });

/** `text/HTML; charset=utf-8` -> `text/html`; anything unreadable -> application/octet-stream. */
export function normaliseType(value: string | undefined): string {
  const type = (value ?? '').split(';')[0].trim().toLowerCase();
  return /^[\w.+-]+\/[\w.+-]+$/.test(type) ? type : 'application/octet-stream';
}

export function receiveFile<T>(req: IncomingMessage, options: ReceiveOptions<T>): Promise<T> {
  let parser: busboy.Busboy;
  try {
    parser = busboy({ headers: req.headers, limits: { files: 1, fields: 20, parts: 21, fieldSize: 1024 }, defParamCharset: 'utf8' });
  } catch {
    throw badRequest('expected multipart/form-data with one file part "file"');
  }
  return new Promise<T>((resolve, reject) => {
    let stored: Promise<T> | null = null;
    let current: Readable | null = null;
    let settled = false;
    const fail = (error: unknown) => {
      if (settled) return;
      settled = true;
      req.unpipe(parser);
      // The store's pipeline fails with the file stream and removes what it wrote.
      current?.destroy(error instanceof Error ? error : new Error(String(error)));
      reject(error);
    };
    parser.on('file', (name, file, info) => {
      if (name !== 'file' || stored) {
        file.resume();
        return;
      }
      const contentType = normaliseType(info.mimeType);
      if (!options.accepts(contentType)) {
        file.resume();
        fail(unsupportedType(contentType));
        return;
      }
      current = file;
      stored = options.store(file, { filename: unescapeFilename(info.filename ?? ''), contentType });
      stored.catch(fail);
    });
    parser.on('filesLimit', () => fail(badRequest('only one file part "file" is accepted')));
    parser.on('error', () => fail(badRequest('malformed multipart body')));
    parser.on('close', () => {
      if (!stored) fail(badRequest('file part "file" is required'));
      else stored.then((value) => { settled = true; resolve(value); }, fail);
    });
    req.on('error', fail);
    // A client that goes away mid-upload: nothing more will come.
    req.on('close', () => { if (!req.complete) fail(badRequest('upload aborted')); });
    req.pipe(parser);
  });
}

/** Browsers send `"`, CR and LF of a filename as %22, %0D, %0A (HTML's multipart encoding). */
function unescapeFilename(name: string): string {
  return name.replace(/%22/g, '"').replace(/%0D/gi, '\r').replace(/%0A/gi, '\n');
}
