/**
 * The worker protocol over HTTP: one typed method per endpoint. Transient
 * failures (network errors, 5xx, 429) are retried with exponential backoff and
 * jitter, honouring Retry-After; a 409 is a lost lease, not an error to retry.
 *
 * Requests go through node:http with a keep-alive agent rather than fetch:
 * a worker makes two requests per leased batch for as long as it runs, and
 * fetch's web streams cost it several times the CPU per request (profiled:
 * most of the worker process's time in a drain).
 */
import { Agent as HttpAgent, request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';

export interface LeasedJob<P = unknown> {
  readonly id: string;
  readonly queue: string;
  readonly kind: string;
  readonly payload: P;
  readonly attempts: number;
  readonly maxAttempts: number;
  readonly leaseId: string;
}

export type FailOutcome = { outcome: 'retry'; delaySecs: number } | { outcome: 'dead' };

/** A GraphQL response (`POST /graphql`): errors of the operation come back here, not as exceptions. */
export interface GraphQLResult<T = any> {
  readonly data?: T | null;
  readonly errors?: ReadonlyArray<{ message: string; path?: ReadonlyArray<string | number>; extensions?: { code?: string; field?: string } }>;
}

/** The lease a write-back acts under: the job's actor and tenant, never the worker's own. */
export interface LeaseRef {
  readonly jobId: string;
  readonly leaseId: string;
}

export interface ClientOptions {
  readonly baseUrl: string;
  readonly token: string;
  /** Attempts per request for transient failures (default 6). */
  readonly maxTries?: number;
  /** First retry delay in ms (default 100), doubled per try, capped at 5 s. */
  readonly retryBaseMs?: number;
}

/** A non-transient HTTP error answered by the server. */
export class WorkerHttpError extends Error {
  constructor(readonly status: number, message: string) {
    super(message);
    this.name = 'WorkerHttpError';
  }
}

const MAX_RETRY_DELAY_MS = 5000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export class WorkerClient {
  private readonly baseUrl: string;
  private readonly maxTries: number;
  private readonly retryBaseMs: number;
  private readonly http: Http;

  constructor(private readonly options: ClientOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.maxTries = options.maxTries ?? 6;
    this.retryBaseMs = options.retryBaseMs ?? 100;
    this.http = createHttp(this.baseUrl);
  }

  /** Closes the idle keep-alive connections (the worker calls it when it stops). */
  close(): void {
    this.http.close();
  }

  async lease<P>(queues: readonly string[], capacity: number, visibilitySecs: number): Promise<LeasedJob<P>[]> {
    const body = await this.post('/jobs/lease', { queues, capacity, visibilitySecs });
    return (body as { jobs: LeasedJob<P>[] }).jobs;
  }

  /** False when the lease was lost (409). */
  async heartbeat(id: string, leaseId: string, visibilitySecs: number): Promise<boolean> {
    return (await this.post(`/jobs/${encodeURIComponent(id)}/heartbeat`, { leaseId, visibilitySecs }, true)) !== LOST;
  }

  async progress(id: string, leaseId: string, percent: number, message?: string, data?: unknown): Promise<boolean> {
    const body = { leaseId, percent, message: message ?? null, data: data ?? null };
    return (await this.post(`/jobs/${encodeURIComponent(id)}/progress`, body, true)) !== LOST;
  }

  async complete(id: string, leaseId: string, result: unknown): Promise<boolean> {
    return (await this.post(`/jobs/${encodeURIComponent(id)}/complete`, { leaseId, result }, true)) !== LOST;
  }

  /** Acknowledges many jobs in one request and one server transaction. */
  async completeMany(items: ReadonlyArray<{ id: string; leaseId: string; result: unknown }>) {
    return (await this.post('/jobs/complete', { items })) as { completed: string[]; stale: string[] };
  }

  /** Null when the lease was lost (409). */
  async fail(id: string, leaseId: string, error: string, retryable: boolean): Promise<FailOutcome | null> {
    const body = await this.post(`/jobs/${encodeURIComponent(id)}/fail`, { leaseId, error, retryable }, true);
    return body === LOST ? null : (body as FailOutcome);
  }

  /**
   * Write-back (docs/actions.md): a GraphQL operation run as the actor of the
   * job whose lease is `lease`, in its tenant. A 409 (the lease is not
   * current) throws WorkerHttpError with status 409. A mutation is never
   * retried after it may have reached the server (only a 429 is retried).
   */
  async graphql<T = any>(lease: LeaseRef, query: string, variables?: Record<string, unknown>): Promise<GraphQLResult<T>> {
    for (let attempt = 1; ; attempt++) {
      const response = await this.http.post(`${this.baseUrl}/graphql`, {
        'x-worker-token': this.options.token, 'x-job-id': lease.jobId, 'x-lease-id': lease.leaseId,
      }, JSON.stringify({ query, variables: variables ?? null }));
      if (response.status === 429 && attempt < this.maxTries) {
        await sleep(this.retryDelay(attempt, header(response.headers, 'retry-after')));
        continue;
      }
      if (response.status === 200) return JSON.parse(response.body) as GraphQLResult<T>;
      throw new WorkerHttpError(response.status, `/graphql: ${response.status} ${errorText(response.body)}`);
    }
  }

  private async post(path: string, payload: unknown, lostIsAnswer = false): Promise<unknown> {
    for (let attempt = 1; ; attempt++) {
      let response: HttpResponse;
      try {
        response = await this.http.post(this.baseUrl + path, { 'x-worker-token': this.options.token }, JSON.stringify(payload));
      } catch (error) {
        if (attempt >= this.maxTries) throw error;
        await sleep(this.retryDelay(attempt, null));
        continue;
      }
      if (response.status === 409 && lostIsAnswer) return LOST;
      if (response.status >= 200 && response.status < 300) return response.status === 204 || response.body === '' ? null : JSON.parse(response.body);
      if ((response.status >= 500 || response.status === 429) && attempt < this.maxTries) {
        await sleep(this.retryDelay(attempt, header(response.headers, 'retry-after')));
        continue;
      }
      throw new WorkerHttpError(response.status, `${path}: ${response.status} ${errorText(response.body)}`);
    }
  }

  private retryDelay(attempt: number, retryAfter: string | null): number {
    const seconds = Number(retryAfter);
    if (retryAfter && Number.isFinite(seconds)) return Math.min(MAX_RETRY_DELAY_MS, seconds * 1000);
    const base = Math.min(MAX_RETRY_DELAY_MS, this.retryBaseMs * 2 ** (attempt - 1));
    return base / 2 + Math.random() * (base / 2);
  }
}

const LOST = Symbol('lease lost');

interface HttpResponse {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

interface Http {
  post(url: string, headers: Record<string, string>, body: string): Promise<HttpResponse>;
  close(): void;
}

/** POST with a JSON body over a keep-alive agent; the whole answer is read (keeps the connection reusable). */
function createHttp(baseUrl: string): Http {
  const secure = new URL(baseUrl).protocol === 'https:';
  const agent = secure ? new HttpsAgent({ keepAlive: true }) : new HttpAgent({ keepAlive: true });
  const send = secure ? httpsRequest : httpRequest;
  return {
    post(url, headers, body) {
      return new Promise((resolve, reject) => {
        const req = send(url, {
          method: 'POST', agent,
          headers: { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
        }, (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('error', reject);
          res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
        });
        req.on('error', reject);
        req.end(body);
      });
    },
    close: () => agent.destroy(),
  };
}

function header(headers: IncomingHttpHeaders, name: string): string | null {
  const value = headers[name];
  return Array.isArray(value) ? value[0] ?? null : value ?? null;
}

function errorText(text: string): string {
  try {
    const body = JSON.parse(text) as { error?: string; errors?: Array<{ message?: string }> };
    return body.error ?? body.errors?.[0]?.message ?? text;
  } catch {
    return text;
  }
}
