/**
 * JSON request bodies: read up to the limit (413 above it, declared or not),
 * parsed with JSON.parse. A `__proto__` key is accepted and dropped: JSON.parse
 * makes it an own property, but code that later copies with assignment would
 * turn it into a prototype. Strings holding U+0000 are refused (400 naming the
 * field) except on the paths listed in `nulCheckedBy`, whose handlers check it
 * and answer in their own wire format (GraphQL).
 */
import type Koa from 'koa';
import { HttpError } from './errors.ts';
import { rejectNul } from './input.ts';

declare module 'koa' {
  interface Request {
    /** The parsed JSON body (POST, PUT, PATCH with a JSON content type). */
    body?: any;
  }
}

const PARSED_METHODS = new Set(['POST', 'PUT', 'PATCH']);

export interface JsonBodyOptions {
  readonly maxBodyBytes: number;
  readonly nulCheckedBy?: readonly string[];
}

const tooLarge = () => new HttpError(413, 'request body too large');
const malformed = () => new HttpError(400, 'malformed JSON body');

export function jsonBody(options: JsonBodyOptions): Koa.Middleware {
  const delegated = new Set(options.nulCheckedBy ?? []);
  return async function jsonBody(ctx, next) {
    if (!PARSED_METHODS.has(ctx.method) || !isJsonRequest(ctx)) return await next();
    const length = Number(ctx.get('content-length') || 0);
    if (length > options.maxBodyBytes) throw tooLarge();
    const encoding = ctx.get('content-encoding').toLowerCase();
    if (encoding !== '' && encoding !== 'identity') throw new HttpError(415, 'compressed request bodies are not accepted');
    const text = await readText(ctx.req, options.maxBodyBytes);
    const body = parse(text);
    // JSON can only carry U+0000 escaped (`\u0000`): text without a `\u` escape holds none.
    if (!delegated.has(ctx.path) && mayHoldEscapes(text)) rejectNul(body);
    ctx.request.body = body;
    await next();
  };
}

/** The content types nearly every JSON client sends, matched without parsing. */
const PLAIN_JSON = new Set(['application/json', 'application/json; charset=utf-8', 'application/json;charset=utf-8']);

/**
 * Is the request's body JSON (`application/json` or a `+json` type), as Koa's
 * `request.is('json', '+json')` answers it? The usual header is matched
 * directly: type-is parses the header and normalises both types on every call
 * (~0.7 µs against 19 ns, and a GraphQL POST asks twice). As there, a request
 * without a body (no Transfer-Encoding, no numeric Content-Length) is not.
 */
export function isJsonRequest(ctx: Koa.Context): boolean {
  const headers = ctx.req.headers;
  const type = headers['content-type'];
  if (type !== undefined && PLAIN_JSON.has(type)) {
    return headers['transfer-encoding'] !== undefined || !Number.isNaN(Number(headers['content-length'] ?? Number.NaN));
  }
  return Boolean(ctx.request.is('json', '+json'));
}

function parse(text: string): unknown {
  if (text.trim() === '') return {};
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw malformed();
  }
  if (typeof body !== 'object' || body === null) throw malformed();
  if (mayHoldEscapes(text) || text.includes('__proto__')) dropProtoKeys(body);
  return body;
}

/**
 * Does the text hold a `\u` escape? Only through one can a JSON string or key
 * spell U+0000 (raw control characters are refused by JSON.parse) or spell
 * `__proto__` without the literal word: most bodies have none, and skip the walks.
 */
const mayHoldEscapes = (text: string): boolean => text.includes('\\u');

/** Deletes every own `__proto__` key, iteratively (a reviver would recurse, and deep input would overflow the stack). */
function dropProtoKeys(root: object): void {
  const stack: object[] = [root];
  while (stack.length > 0) {
    const node = stack.pop()!;
    if (Object.hasOwn(node, '__proto__')) delete (node as Record<string, unknown>)['__proto__'];
    for (const child of Object.values(node)) if (typeof child === 'object' && child !== null) stack.push(child);
  }
}

/** The body as UTF-8 text; past `limit` bytes the rest is drained and discarded so the 413 still reaches the client. */
function readText(req: NodeJS.ReadableStream, limit: number): Promise<string> {
  return new Promise((resolve, reject) => new TextReader(req, limit, resolve, reject));
}

/**
 * One body being read. A class rather than closures: no function objects are
 * made (and, under tsx, named) per request beyond the three bound listeners.
 */
class TextReader {
  private readonly chunks: Buffer[] = [];
  private size = 0;
  private readonly onData: (chunk: Buffer) => void;
  private readonly onEnd: () => void;
  private readonly onError: (error: Error) => void;

  constructor(
    private readonly req: NodeJS.ReadableStream,
    private readonly limit: number,
    private readonly resolve: (text: string) => void,
    private readonly reject: (error: unknown) => void,
  ) {
    this.onData = this.data.bind(this);
    this.onEnd = this.end.bind(this);
    this.onError = this.error.bind(this);
    req.on('data', this.onData);
    req.on('end', this.onEnd);
    req.on('error', this.onError);
  }

  private data(chunk: Buffer): void {
    this.size += chunk.length;
    if (this.size <= this.limit) return void this.chunks.push(chunk);
    this.cleanup();
    this.req.resume();
    this.reject(tooLarge());
  }

  private end(): void {
    this.cleanup();
    this.resolve(Buffer.concat(this.chunks).toString('utf8'));
  }

  private error(error: Error): void {
    this.cleanup();
    this.reject(Object.assign(new HttpError(400, 'request body could not be read'), { cause: error }));
  }

  private cleanup(): void {
    this.req.off('data', this.onData);
    this.req.off('end', this.onEnd);
    this.req.off('error', this.onError);
  }
}
