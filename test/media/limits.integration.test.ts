/**
 * SVC_MEDIA_MAX_BYTES: an upload is cut off with 413 {error:'payload_too_large'}
 * as soon as the limit is passed (the answer arrives while the client is still
 * sending), and the partial file is removed.
 */
import { request as httpRequest } from 'node:http';
import { readdirSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request, startMediaService, upload, userOf, type MediaService, type User } from './helpers.ts';

const LIMIT = 256 * 1024;
let service: MediaService;
let user: User;

beforeAll(async () => {
  service = await startMediaService({ SVC_MEDIA_MAX_BYTES: String(LIMIT), SVC_MAX_BODY_BYTES: '1024', SVC_MEDIA_ALLOWED_TYPES: 'image/svg+xml' });
  user = await userOf(service, 'Sales', 'uploader', 'acme');
});
afterAll(async () => {
  await service?.close();
});

const storedFiles = () => readdirSync(service.mediaDir, { recursive: true, withFileTypes: true }).filter((e) => e.isFile()).length;

/**
 * Streams a multipart body of `total` file bytes in 64 KiB chunks, honouring
 * backpressure, and stops as soon as a response arrives. Resolves with the
 * status, the body and how many file bytes had been sent by then.
 */
function streamUpload(total: number, chunked: boolean): Promise<{ status: number; body: any; sent: number }> {
  const boundary = 'svcboundary';
  const head = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`);
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  const url = new URL('/media', service.url);
  return new Promise((resolve, reject) => {
    let sent = 0;
    let answered = false;
    const req = httpRequest(url, {
      method: 'POST',
      headers: {
        ...user.headers,
        'content-type': `multipart/form-data; boundary=${boundary}`,
        ...(chunked ? {} : { 'content-length': String(head.length + total + tail.length) }),
      },
    }, (res) => {
      answered = true;
      const chunks: Buffer[] = [];
      res.on('data', (chunk) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(Buffer.concat(chunks).toString()), sent }));
    });
    req.on('error', (error) => { if (!answered) reject(error); });
    const chunk = Buffer.alloc(64 * 1024, 7);
    const pump = () => {
      while (!answered && sent < total) {
        sent += chunk.length;
        if (!req.write(chunk)) return void req.once('drain', pump);
      }
      if (!answered) req.end(tail);
    };
    req.write(head);
    pump();
  });
}

describe('SVC_MEDIA_MAX_BYTES', () => {
  it('accepts an upload at the limit, above SVC_MAX_BODY_BYTES (multipart is not the JSON parser\'s)', async () => {
    const reply = await upload(service, user.headers, Buffer.alloc(LIMIT, 1));
    expect(reply.status).toBe(201);
    expect(reply.body.size).toBe(LIMIT);
  });

  it('cuts a chunked upload off with 413 as soon as the limit is passed, keeping nothing', async () => {
    const before = storedFiles();
    const total = 64 * 1024 * 1024;
    const reply = await streamUpload(total, true);
    expect(reply.status).toBe(413);
    expect(reply.body).toEqual({ error: 'payload_too_large', code: 'PAYLOAD_TOO_LARGE' });
    // The answer came long before the client had sent everything.
    expect(reply.sent).toBeLessThan(total / 4);
    expect(storedFiles()).toBe(before);
    expect(await service.ctx.db.one("select count(*)::int as n from svc_media where size > $1", [LIMIT])).toEqual({ n: 0 });
  });

  it('refuses at once an upload whose Content-Length is past the limit', async () => {
    const reply = await streamUpload(8 * LIMIT, false);
    expect(reply.status).toBe(413);
    expect(reply.body).toEqual({ error: 'payload_too_large', code: 'PAYLOAD_TOO_LARGE' });
  });

  it('removes what it wrote when the client goes away mid-upload', async () => {
    const before = storedFiles();
    const boundary = 'svcboundary';
    const req = httpRequest(new URL('/media', service.url), {
      method: 'POST',
      headers: { ...user.headers, 'content-type': `multipart/form-data; boundary=${boundary}` },
    });
    req.on('error', () => undefined);
    req.write(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="gone.bin"\r\n\r\n`);
    req.write(Buffer.alloc(LIMIT / 2, 3));
    // Wait until the server has started writing the file, then hang up.
    const deadline = Date.now() + 10_000;
    while (storedFiles() === before && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(storedFiles()).toBe(before + 1);
    req.destroy();
    while (storedFiles() !== before && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(storedFiles()).toBe(before);
  });

  it('accepts a type SVC_MEDIA_ALLOWED_TYPES lists, served as a sandboxed attachment; others stay refused', async () => {
    const svg = await upload(service, user.headers, '<svg xmlns="http://www.w3.org/2000/svg"/>', { type: 'image/svg+xml', filename: 'a.svg' });
    expect(svg.status).toBe(201);
    const served = await request(service, 'GET', `/media/${svg.body.id}`, user.headers);
    expect(served.headers.get('content-security-policy')).toBe("default-src 'none'; sandbox");
    expect(served.headers.get('content-disposition')).toMatch(/^attachment;/);
    expect((await upload(service, user.headers, '<p>', { type: 'text/html' })).status).toBe(415);
  });

  it('keeps serving after a cut-off upload', async () => {
    expect((await upload(service, user.headers, 'after')).status).toBe(201);
  });
});
