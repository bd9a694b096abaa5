/**
 * The `http` step's request: only to an origin of SVC_WORKFLOW_HTTP_ALLOW
 * (any other is never sent), with `Idempotency-Key: {runId}:{stepId}` so a
 * receiver can drop the repeats that at-least-once delivery allows, and a
 * timeout of at most 30 s. Redirects are not followed: a redirect could lead
 * outside the allowlist.
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

export async function send(call: HttpCall, allow: readonly string[]): Promise<HttpResult> {
  const allowed = allowedOrigin(call.url, allow);
  if (!allowed.ok) return allowed;
  const headers = new Headers();
  for (const [name, value] of Object.entries(call.headers)) {
    if (value !== null && value !== undefined) headers.set(name, typeof value === 'string' ? value : JSON.stringify(value));
  }
  headers.set('idempotency-key', call.idempotencyKey);
  const hasBody = call.body !== null && call.body !== undefined && call.method !== 'GET';
  if (hasBody && !headers.has('content-type')) headers.set('content-type', 'application/json');
  const timeoutMs = Math.min(call.timeoutSecs, MAX_HTTP_TIMEOUT_SECS) * 1000;
  try {
    const response = await fetch(call.url, {
      method: call.method, headers, redirect: 'manual', signal: AbortSignal.timeout(timeoutMs),
      body: hasBody ? (typeof call.body === 'string' ? call.body : JSON.stringify(call.body)) : undefined,
    });
    const body = await readBody(response);
    if (response.status >= 200 && response.status < 300) return { ok: true, status: response.status, body };
    return { ok: false, status: response.status, body, error: `${call.method} ${new URL(call.url).origin} answered ${response.status}` };
  } catch (error) {
    const name = (error as Error).name;
    if (name === 'TimeoutError' || name === 'AbortError') return { ok: false, error: `no answer within ${timeoutMs / 1000} s` };
    return { ok: false, error: `request failed: ${(error as Error).message}` };
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
