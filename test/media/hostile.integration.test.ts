/**
 * Upload routes under hostile input (issue 26): no body sent to an upload
 * route may end the process, an upload URL takes one body, and a commit
 * records the hash of exactly the bytes it serves, however PUTs race with it.
 */
import { request as httpRequest } from 'node:http';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request, sha256, startMediaService, userOf, type MediaService, type User } from './helpers.ts';

let service: MediaService;
let alice: User;

beforeAll(async () => {
  service = await startMediaService({ SVC_MEDIA_MAX_BYTES: String(1024 * 1024) });
  alice = await userOf(service, 'Sales', 'alice', 'acme');
});
afterAll(async () => {
  await service?.close();
});

interface Grant { readonly id: string; readonly uploadUrl: string; readonly headers: Record<string, string> }

async function presign(size: number): Promise<Grant> {
  const reply = await request(service, 'POST', '/media/presign', alice.headers, { filename: 'f.bin', contentType: 'application/octet-stream', size });
  expect(reply.status).toBe(201);
  return reply.body;
}

const commit = (id: string) => request(service, 'POST', '/media/commit', alice.headers, { id });
const put = (grant: Grant, bytes: string | Buffer) => fetch(grant.uploadUrl, { method: 'PUT', headers: grant.headers, body: bytes });

/**
 * Sends `total` bytes over a raw socket in 16 KiB chunks (chunked transfer
 * encoding unless `chunked` is false), stopping once the server answers.
 * Resolves with the status; a server that hangs up is answered, not an error.
 */
function streamTo(url: string, method: string, headers: Record<string, string>, total: number): Promise<number> {
  return new Promise((resolve, reject) => {
    let sent = 0;
    let answered = false;
    const req = httpRequest(url, { method, headers }, (res) => {
      answered = true;
      res.resume();
      res.on('end', () => resolve(res.statusCode!));
    });
    req.on('error', (error) => { if (!answered) reject(error); });
    const chunk = Buffer.alloc(16 * 1024, 9);
    const pump = () => {
      while (!answered && sent < total) {
        sent += chunk.length;
        if (!req.write(chunk)) return void req.once('drain', pump);
      }
      if (!answered) req.end();
    };
    pump();
  });
}

async function stillServing() {
  expect((await request(service, 'GET', '/health', {})).status).toBe(200);
  const grant = await presign(5);
  expect((await put(grant, 'fine!')).status).toBe(200);
  expect((await commit(grant.id)).status).toBe(201);
}

describe('no upload input ends the process', () => {
  it('answers 413 to a chunked PUT longer than announced, and keeps serving', async () => {
    for (let attempt = 0; attempt < 3; attempt++) {
      const grant = await presign(1000);
      expect(await streamTo(grant.uploadUrl, 'PUT', grant.headers, 512 * 1024)).toBe(413);
      await stillServing();
    }
  });

  it('answers 413 to a chunked multipart POST /media past the limit, and keeps serving', async () => {
    const boundary = 'hostile';
    const headers = { ...alice.headers, 'content-type': `multipart/form-data; boundary=${boundary}` };
    const status = await new Promise<number>((resolve, reject) => {
      let answered = false;
      const req = httpRequest(new URL('/media', service.url), { method: 'POST', headers }, (res) => {
        answered = true;
        res.resume();
        res.on('end', () => resolve(res.statusCode!));
      });
      req.on('error', (error) => { if (!answered) reject(error); });
      req.write(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.bin"\r\n\r\n`);
      const chunk = Buffer.alloc(64 * 1024, 1);
      const pump = () => {
        while (!answered) if (!req.write(chunk)) return void req.once('drain', pump);
      };
      pump();
    });
    expect(status).toBe(413);
    await stillServing();
  });

  it('keeps serving after a PUT whose client hangs up midway, and the URL may be used again', async () => {
    const grant = await presign(64 * 1024);
    const req = httpRequest(grant.uploadUrl, { method: 'PUT', headers: grant.headers });
    req.on('error', () => undefined);
    req.write(Buffer.alloc(16 * 1024, 1));
    const claimed = async () => (await service.ctx.db.one('select upload_state is not null as claimed from svc_media where id = $1', [grant.id])).claimed;
    await waitUntil(claimed);
    req.destroy();
    await waitUntil(async () => !(await claimed()));
    expect((await put(grant, Buffer.alloc(64 * 1024, 2))).status).toBe(200);
    expect((await commit(grant.id)).body.sha256).toBe(sha256(Buffer.alloc(64 * 1024, 2)));
    await stillServing();
  });
});

describe('an upload URL takes one body', () => {
  it('refuses a second PUT once a body was accepted, and keeps the first bytes', async () => {
    const grant = await presign(6);
    expect((await put(grant, 'first!')).status).toBe(200);
    const second = await put(grant, 'other!');
    expect(second.status).toBe(409);
    expect(await second.json()).toMatchObject({ code: 'CONFLICT' });
    const committed = await commit(grant.id);
    expect(committed.body.sha256).toBe(sha256('first!'));
    expect((await request(service, 'GET', `/media/${grant.id}`, alice.headers)).bytes.toString()).toBe('first!');
  });

  it('refuses a PUT while another one is being received', async () => {
    const grant = await presign(32 * 1024);
    const req = httpRequest(grant.uploadUrl, { method: 'PUT', headers: { ...grant.headers, 'content-length': String(32 * 1024) } });
    const first = new Promise<number>((resolve) => {
      req.on('response', (res) => { res.resume(); resolve(res.statusCode!); });
      req.on('error', () => resolve(0));
    });
    req.write(Buffer.alloc(16 * 1024, 1));
    await waitUntil(async () => (await service.ctx.db.one('select upload_state is not null as c from svc_media where id = $1', [grant.id])).c);
    expect((await put(grant, Buffer.alloc(32 * 1024, 2))).status).toBe(409);
    req.end(Buffer.alloc(16 * 1024, 1));
    expect(await first).toBe(200);
    expect((await commit(grant.id)).body.sha256).toBe(sha256(Buffer.alloc(32 * 1024, 1)));
  });

  it('records the sha256 of the bytes it serves when PUTs of other bytes race with the commit', async () => {
    const size = 64 * 1024;
    for (let attempt = 0; attempt < 15; attempt++) {
      const grant = await presign(size);
      expect((await put(grant, Buffer.alloc(size, 0))).status).toBe(200);
      const replays = Array.from({ length: 6 }, (_, i) => put(grant, Buffer.alloc(size, i + 1)).then((r) => r.status));
      const committed = await commit(grant.id);
      const statuses = await Promise.all(replays);
      expect(statuses.every((status) => status === 409 || status === 404)).toBe(true);
      expect(committed.status).toBe(201);
      const served = await request(service, 'GET', `/media/${grant.id}`, alice.headers);
      expect(sha256(served.bytes)).toBe(committed.body.sha256);
      expect(served.bytes.equals(Buffer.alloc(size, 0))).toBe(true);
    }
  });

  it('records the sha256 of the bytes it serves when the staged bytes are replaced during the commit (a replayed S3 URL)', async () => {
    const size = 256 * 1024;
    const driver = service.ctx.services.media.driver;
    for (let attempt = 0; attempt < 10; attempt++) {
      const grant = await presign(size);
      expect((await put(grant, Buffer.alloc(size, 0))).status).toBe(200);
      let done = false;
      const replays = (async () => {
        for (let i = 1; !done; i++) await driver.put(`staging/t-acme/${grant.id}`, Readable.from([Buffer.alloc(size, i % 250 + 1)]), size);
      })();
      const committed = await commit(grant.id).finally(() => { done = true; });
      await replays;
      expect(committed.status).toBe(201);
      const served = await request(service, 'GET', `/media/${grant.id}`, alice.headers);
      expect(sha256(served.bytes)).toBe(committed.body.sha256);
    }
  });
});

async function waitUntil(check: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('waitUntil: timed out');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
