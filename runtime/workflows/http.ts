/**
 * The `http` step's request: only to an origin of SVC_WORKFLOW_HTTP_ALLOW
 * (any other is never sent), with `Idempotency-Key: {runId}:{stepId}` so a
 * receiver can drop the repeats that at-least-once delivery allows, and a
 * timeout of at most 30 s. Redirects are not followed: a redirect could lead
 * outside the allowlist. A request is prepared first (origin, headers and body
 * checked and serialised; a refusal is the step's failure, nothing is sent),
 * then sent; at most SVC_WORKFLOW_HTTP_PER_ORIGIN requests of an instance are
 * in flight to one origin (OriginSlots).
 */
import { MAX_HTTP_TIMEOUT_SECS, type HttpMethod } from '../ir/automation.ts';

/** Bytes of a response body kept as the step's output. */
export const MAX_RESPONSE_BYTES = 64 * 1024;

export interface HttpCall {
  readonly method: HttpMethod;
  readonly url: string;
  readonly headers: Readonly<Record<string, unknown>>;
  readonly body: unknown;
  readonly timeoutSecs: number;
  readonly idempotencyKey: string;
}

export type HttpResult =
  | { readonly ok: true; readonly status: number; readonly body: unknown }
  | { readonly ok: false; readonly error: string; readonly status?: number; readonly body?: unknown };

/** The origin of `url` when it is an allowed http(s) URL, else why not. */
export function allowedOrigin(url: string, allow: readonly string[]): { ok: true } | { ok: false; error: string } {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { ok: false, error: `url ${JSON.stringify(url)} is not an absolute URL` };
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return { ok: false, error: `url scheme ${parsed.protocol} is not http(s)` };
  if (parsed.username || parsed.password) return { ok: false, error: 'url must not carry credentials' };
  if (!allow.includes(parsed.origin)) return { ok: false, error: `origin ${parsed.origin} is not in SVC_WORKFLOW_HTTP_ALLOW: not sent` };
  return { ok: true };
}

/** A request checked and serialised, ready to send to `origin`. */
export interface PreparedRequest {
  readonly origin: string;
  readonly url: string;
  readonly method: HttpMethod;
  readonly headers: Headers;
  readonly body: string | undefined;
  readonly timeoutMs: number;
}

/** An HTTP token (RFC 9110): what a header name may be. */
const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/** Why a header cannot be sent as given, or null. A rendered value may hold anything the data held. */
function headerProblem(name: string, value: string): string | null {
  if (!HEADER_NAME.test(name)) return `header name ${JSON.stringify(name)} is not a valid HTTP header name`;
  if (/[\r\n]/.test(value)) return `header ${name} contains a line break`;
  if (value.includes('\0')) return `header ${name} contains a NUL character`;
  return null;
}

/** The request `call` describes, or why it is not sent (an origin outside `allow`, a header that cannot be one). */
export function prepare(call: HttpCall, allow: readonly string[]): { ok: true; request: PreparedRequest } | { ok: false; error: string } {
  const allowed = allowedOrigin(call.url, allow);
  if (!allowed.ok) return allowed;
  const headers = new Headers();
  for (const [name, raw] of Object.entries(call.headers)) {
    if (raw === null || raw === undefined) continue;
    const value = typeof raw === 'string' ? raw : JSON.stringify(raw);
    const problem = headerProblem(name, value);
    if (problem) return { ok: false, error: `${problem}: not sent` };
    headers.set(name, value);
  }
  headers.set('idempotency-key', call.idempotencyKey);
  const hasBody = call.body !== null && call.body !== undefined && call.method !== 'GET';
  if (hasBody && !headers.has('content-type')) headers.set('content-type', 'application/json');
  return {
    ok: true,
    request: {
      origin: new URL(call.url).origin, url: call.url, method: call.method, headers,
      body: hasBody ? (typeof call.body === 'string' ? call.body : JSON.stringify(call.body)) : undefined,
      timeoutMs: Math.min(call.timeoutSecs, MAX_HTTP_TIMEOUT_SECS) * 1000,
    },
  };
}

export async function send(request: PreparedRequest): Promise<HttpResult> {
  try {
    const response = await fetch(request.url, {
      method: request.method, headers: request.headers, redirect: 'manual', signal: AbortSignal.timeout(request.timeoutMs), body: request.body,
    });
    const body = await readBody(response);
    if (response.status >= 200 && response.status < 300) return { ok: true, status: response.status, body };
    return { ok: false, status: response.status, body, error: `${request.method} ${request.origin} answered ${response.status}` };
  } catch (error) {
    const name = (error as Error).name;
    if (name === 'TimeoutError' || name === 'AbortError') return { ok: false, error: `no answer within ${request.timeoutMs / 1000} s` };
    return { ok: false, error: `request failed: ${(error as Error).message}` };
  }
}

/**
 * Requests in flight per origin on this instance, at most `perOrigin` each:
 * an endpoint that does not answer holds its own slots, never the others'.
 */
export class OriginSlots {
  private readonly taken = new Map<string, number>();

  constructor(private readonly perOrigin: number) {}

  /** A slot of `origin` and the function that frees it; null when all are taken. */
  take(origin: string): (() => void) | null {
    const count = this.taken.get(origin) ?? 0;
    if (count >= this.perOrigin) return null;
    this.taken.set(origin, count + 1);
    let freed = false;
    return () => {
      if (freed) return;
      freed = true;
      const left = (this.taken.get(origin) ?? 1) - 1;
      if (left === 0) this.taken.delete(origin);
      else this.taken.set(origin, left);
    };
  }
}

/** JSON when the answer says so and parses, else text; cut at MAX_RESPONSE_BYTES. */
async function readBody(response: Response): Promise<unknown> {
  const text = await readText(response);
  if (text === '') return null;
  if ((response.headers.get('content-type') ?? '').includes('json')) {
    try {
      return JSON.parse(text);
    } catch {
      return text;
    }
  }
  return text;
}

/** At most MAX_RESPONSE_BYTES of the body: a large answer is never held whole. */
async function readText(response: Response): Promise<string> {
  if (!response.body) return '';
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  while (size < MAX_RESPONSE_BYTES) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
    size += value.byteLength;
  }
  await reader.cancel().catch(() => undefined);
  return Buffer.concat(chunks).subarray(0, MAX_RESPONSE_BYTES).toString('utf8');
}
