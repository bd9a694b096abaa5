/**
 * What the scale bench measures on one seeded database, each row as p50 and
 * p99 over BENCH_SCALE_REQUESTS sequential requests (default 200): the
 * latency one client sees, not throughput. Every row's first answer is
 * checked (status, no GraphQL errors), so a row never times an error page.
 */
import type { TestService } from '../../test/helpers/service.ts';
import { BIG_TENANT, QUEUE, TENANT } from './seed.ts';

export interface Latency {
  readonly p50: number;
  readonly p99: number;
}

export type Row = readonly [name: string, latency: Latency];

const REQUESTS = Number(process.env.BENCH_SCALE_REQUESTS ?? 200);

export function percentiles(samples: readonly number[]): Latency {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)];
  return { p50: at(0.5), p99: at(0.99) };
}

interface Answer {
  readonly status: number;
  readonly body: any;
}

type Call = () => Promise<Answer>;

async function sample(name: string, call: Call, requests = REQUESTS): Promise<Row> {
  const first = await call();
  if (first.status >= 300 || first.body?.errors) throw new Error(`${name}: ${first.status} ${JSON.stringify(first.body).slice(0, 300)}`);
  const times: number[] = [];
  for (let i = 0; i < requests; i++) {
    const started = performance.now();
    const answer = await call();
    times.push(performance.now() - started);
    if (answer.status >= 300) throw new Error(`${name}: ${answer.status} on request ${i}`);
  }
  process.stderr.write(`  ${name}: p50 ${percentiles(times).p50.toFixed(1)} ms\n`);
  return [name, percentiles(times)];
}

async function http(url: string, init: RequestInit): Promise<Answer> {
  const response = await fetch(url, init);
  const text = await response.text();
  return { status: response.status, body: text.startsWith('{') ? JSON.parse(text) : text };
}

function clients(svc: TestService, tokens: Record<string, string>) {
  const headers = (token: string) => ({ authorization: `Bearer ${token}`, 'content-type': 'application/json' });
  return {
    graphql: (who: string, query: string, variables: object = {}) =>
      () => http(`${svc.url}/graphql`, { method: 'POST', headers: headers(tokens[who]), body: JSON.stringify({ query, variables }) }),
    get: (who: string | null, path: string) =>
      () => http(`${svc.url}${path}`, { headers: who ? headers(tokens[who]) : {} }),
    post: (headersOf: Record<string, string>, path: string, body: object) =>
      http(`${svc.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headersOf }, body: JSON.stringify(body) }),
  };
}

const PAGE = `query($o: JSON, $after: String) { paginatedRecords(model: "Deal", orderBy: $o, first: 20, after: $after) {
  items pageInfo { hasNextPage endCursor } } }`;
const BY_AMOUNT = { o: { amount: 'DESC' } };

/** The cursor after page 99 of the big tenant's deals by amount: the 100th page starts there. */
async function cursorOfPage100(call: ReturnType<typeof clients>): Promise<string> {
  let after: string | null = null;
  for (let page = 1; page < 100; page++) {
    const answer: Answer = await call.graphql('big', PAGE, { ...BY_AMOUNT, after })();
    const info = answer.body?.data?.paginatedRecords?.pageInfo;
    if (!info?.hasNextPage) throw new Error(`page ${page} of the big tenant has no next page: ${JSON.stringify(answer.body).slice(0, 300)}`);
    after = info.endCursor;
  }
  return after!;
}

export async function measureRequests(svc: TestService): Promise<Row[]> {
  const tokens = {
    tenant: await svc.token({ role: 'Admin', userId: 'bench-tenant', tenantId: TENANT }),
    big: await svc.token({ role: 'Admin', userId: 'bench-big', tenantId: BIG_TENANT }),
    admin: await svc.token({ role: 'Admin', userId: 'bench-admin' }),
  };
  const call = clients(svc, tokens);
  const { id } = await svc.ctx.db.one<{ id: string }>(`select id from deal where tenant_id = $1 order by id desc limit 1`, [TENANT]);
  const after = await cursorOfPage100(call);
  const day = new Date(Date.now() - 86_400_000).toISOString();
  const rows: Row[] = [];
  const add = async (name: string, c: Call, requests?: number) => void rows.push(await sample(name, c, requests));

  const records = `query($o: JSON) { records(model: "Deal", orderBy: $o, limit: 20) }`;
  await add('records by amount, first page (tenant)', call.graphql('tenant', records, BY_AMOUNT));
  await add('records by amount, first page (big tenant)', call.graphql('big', records, BY_AMOUNT));
  await add('keyset page 100 by amount (big tenant)', call.graphql('big', PAGE, { ...BY_AMOUNT, after }));
  await add('record by id', call.graphql('tenant', `query($id: ID!) { record(model: "Deal", id: $id) }`, { id }));
  await add('recordHistory', call.graphql('tenant', `query($id: ID!) { recordHistory(model: "Deal", id: $id) { eventId version } }`, { id }));
  const counted = `query($o: JSON) { paginatedRecords(model: "Deal", orderBy: $o, first: 20) { totalCount items } }`;
  await add('paginatedRecords + totalCount (tenant)', call.graphql('tenant', counted, BY_AMOUNT));
  await add('paginatedRecords + totalCount (big tenant)', call.graphql('big', counted, BY_AMOUNT));
  for (const filter of ['', 'entityType=Deal', `entityId=${id}`, 'actorId=u7', 'action=record.update', 'outcome=denied', `from=${day}&to=${new Date().toISOString()}`]) {
    await add(`/audit/logs ${filter ? filter.replace(/=.*?(&|$)/g, '=..$1') : '(no filter)'} (big tenant)`, call.get('big', `/audit/logs?${filter}`));
  }
  await add('/audit/statistics (big tenant)', call.get('big', '/audit/statistics'));
  await add('/storage/diagnostics', call.get('admin', '/storage/diagnostics'), Math.min(REQUESTS, 200));
  await add('/jobs/stats', call.get('admin', '/jobs/stats'));
  await add('lease + complete', await leaseAndComplete(call, tokens.admin));
  await add('projection read (/public/records)', call.get(null, '/public/records/Deal?limit=20'));
  rows.push(await feedLagUnderWrites(svc, call));
  return rows;
}

/** One lease of one job and its completion, as one sample. */
async function leaseAndComplete(call: ReturnType<typeof clients>, admin: string): Promise<Call> {
  const minted = await call.post({ authorization: `Bearer ${admin}` }, '/jobs/workers', { name: 'bench', queues: [QUEUE] });
  if (minted.status !== 201) throw new Error(`worker token: ${minted.status} ${JSON.stringify(minted.body)}`);
  const worker = { 'x-worker-token': minted.body.token as string };
  return async () => {
    const leased = await call.post(worker, '/jobs/lease', { queues: [QUEUE], capacity: 1, visibilitySecs: 60 });
    const job = leased.body?.jobs?.[0];
    if (leased.status !== 200 || !job) return { status: 599, body: leased.body };
    return call.post(worker, `/jobs/${job.id}/complete`, { leaseId: job.leaseId, result: { ok: true } });
  };
}

/**
 * Feed lag under writes: while 4 clients create deals, 200 more creates each
 * time from sending the create to its change reaching a feed subscriber of
 * this process (the path every durable consumer and subscription takes).
 */
async function feedLagUnderWrites(svc: TestService, call: ReturnType<typeof clients>): Promise<Row> {
  const create = `mutation($d: JSON!) { create(model: "Deal", data: $d) }`;
  const delivered = new Map<string, number>();
  const waiting = new Map<string, () => void>();
  const subscription = svc.ctx.services.feed.subscribe({ streams: ['Deal'], maxQueued: 100_000 });
  void (async () => {
    for await (const change of subscription) {
      delivered.set(change.recordId, performance.now());
      waiting.get(change.recordId)?.();
    }
  })();
  let writing = true;
  const background = Array.from({ length: 4 }, async () => {
    while (writing) await call.graphql('tenant', create, { d: { title: 'load', amount: 1 } })();
  });
  const lags: number[] = [];
  try {
    for (let i = 0; i < REQUESTS; i++) {
      const started = performance.now();
      const answer = await call.graphql('tenant', create, { d: { title: `lag ${i}`, amount: i } })();
      const recordId = answer.body?.data?.create?.id as string | undefined;
      if (!recordId) throw new Error(`create: ${JSON.stringify(answer.body).slice(0, 300)}`);
      if (!delivered.has(recordId)) await new Promise<void>((resolve) => waiting.set(recordId, resolve));
      lags.push(delivered.get(recordId)! - started);
    }
  } finally {
    writing = false;
    await Promise.all(background);
    subscription.close();
  }
  process.stderr.write(`  feed lag under writes: p50 ${percentiles(lags).p50.toFixed(1)} ms\n`);
  return ['feed lag under writes (create sent -> change delivered)', percentiles(lags)];
}
