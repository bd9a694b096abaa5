/**
 * Media on the local driver: upload, serve (ETag, 304, Range 206/416, safety
 * headers), metadata, delete by owner or Admin/Manager only, dedupe with
 * independent deletes, 415 for active content, tenant isolation.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request, sha256, startMediaService, upload, userOf, type MediaService, type User } from './helpers.ts';

let service: MediaService;
let alice: User;
let bob: User;
let manager: User;
let otherTenant: User;

beforeAll(async () => {
  service = await startMediaService();
  alice = await userOf(service, 'Sales', 'alice', 'acme');
  bob = await userOf(service, 'Sales', 'bob', 'acme');
  manager = await userOf(service, 'Manager', 'mona', 'acme');
  otherTenant = await userOf(service, 'Admin', 'eve', 'globex');
});
afterAll(async () => {
  await service?.close();
});

const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const blobFiles = () => readdirSync(join(service.mediaDir), { recursive: true, withFileTypes: true })
  .filter((entry) => entry.isFile() && entry.parentPath.includes('blobs')).length;

describe('POST /media', () => {
  it('stores the file part and answers 201 with id, url, filename, contentType, size, sha256, createdAt', async () => {
    const bytes = 'hello media';
    const reply = await upload(service, alice.headers, bytes, { filename: 'hello.txt', type: 'text/plain' });
    expect(reply.status).toBe(201);
    expect(reply.body).toEqual({
      id: expect.stringMatching(/^[0-9A-Z]{26}$/), url: `/media/${reply.body.id}`, filename: 'hello.txt',
      contentType: 'text/plain', size: bytes.length, sha256: sha256(bytes), createdAt: expect.stringMatching(ISO_MS),
    });
  });

  it('needs authentication', async () => {
    expect((await upload(service, {}, 'x')).status).toBe(401);
    expect((await upload(service, { authorization: 'Bearer nope' }, 'x')).status).toBe(401);
  });

  it('refuses text/html and image/svg+xml with 415, storing nothing', async () => {
    const before = blobFiles();
    for (const type of ['text/html', 'image/svg+xml', 'TEXT/HTML; charset=utf-8']) {
      const reply = await upload(service, alice.headers, '<script>alert(1)</script>', { type, filename: 'x.html' });
      expect(reply.status).toBe(415);
      expect(reply.body.error).toBe('unsupported_media_type');
    }
    expect(blobFiles()).toBe(before);
  });

  it('answers 400 without a file part named file', async () => {
    const reply = await upload(service, alice.headers, 'x', { field: 'other' });
    expect(reply.status).toBe(400);
    const notMultipart = await request(service, 'POST', '/media', alice.headers, { file: 'x' });
    expect(notMultipart.status).toBe(400);
  });
});

describe('GET /media/{id}', () => {
  const bytes = Buffer.from(Array.from({ length: 1000 }, (_, i) => i % 256));
  let id: string;

  beforeAll(async () => {
    id = (await upload(service, alice.headers, bytes, { filename: 'données "1".png', type: 'image/png' })).body.id;
  });

  it('serves the bytes with type, length, ETag and the safety headers', async () => {
    const reply = await request(service, 'GET', `/media/${id}`, bob.headers);
    expect(reply.status).toBe(200);
    expect(reply.bytes.equals(bytes)).toBe(true);
    expect(reply.headers.get('content-type')).toBe('image/png');
    expect(reply.headers.get('content-length')).toBe('1000');
    expect(reply.headers.get('etag')).toBe(`"${sha256(bytes)}"`);
    expect(reply.headers.get('x-content-type-options')).toBe('nosniff');
    expect(reply.headers.get('content-security-policy')).toBe("default-src 'none'; sandbox");
    expect(reply.headers.get('accept-ranges')).toBe('bytes');
    expect(reply.headers.get('content-disposition')).toBe(
      `inline; filename="donnees _1_.png"; filename*=UTF-8''donn%C3%A9es%20%221%22.png`,
    );
  });

  it('answers 304 to a matching If-None-Match, 200 to another', async () => {
    const etag = `"${sha256(bytes)}"`;
    const same = await request(service, 'GET', `/media/${id}`, { ...bob.headers, 'if-none-match': `"other", W/${etag}` });
    expect(same.status).toBe(304);
    expect(same.bytes.length).toBe(0);
    expect(same.headers.get('etag')).toBe(etag);
    expect((await request(service, 'GET', `/media/${id}`, { ...bob.headers, 'if-none-match': '"other"' })).status).toBe(200);
  });

  it.each([
    ['bytes=0-99', 0, 99],
    ['bytes=900-', 900, 999],
    ['bytes=-10', 990, 999],
    ['bytes=990-5000', 990, 999],
  ])('serves Range %s as 206', async (range, start, end) => {
    const reply = await request(service, 'GET', `/media/${id}`, { ...bob.headers, range });
    expect(reply.status).toBe(206);
    expect(reply.headers.get('content-range')).toBe(`bytes ${start}-${end}/1000`);
    expect(reply.headers.get('content-length')).toBe(String(end - start + 1));
    expect(reply.bytes.equals(bytes.subarray(start, end + 1))).toBe(true);
  });

  it('answers 416 with Content-Range */size to an unsatisfiable range', async () => {
    for (const range of ['bytes=1000-', 'bytes=5000-6000', 'bytes=-0']) {
      const reply = await request(service, 'GET', `/media/${id}`, { ...bob.headers, range });
      expect(reply.status).toBe(416);
      expect(reply.headers.get('content-range')).toBe('bytes */1000');
    }
  });

  it('answers HEAD with the headers of GET and no body', async () => {
    const reply = await request(service, 'HEAD', `/media/${id}`, bob.headers);
    expect(reply.status).toBe(200);
    expect(reply.headers.get('content-length')).toBe('1000');
    expect(reply.headers.get('etag')).toBe(`"${sha256(bytes)}"`);
    expect(reply.bytes.length).toBe(0);
  });

  it('serves several ranges as the whole body', async () => {
    const reply = await request(service, 'GET', `/media/${id}`, { ...bob.headers, range: 'bytes=0-1,5-6' });
    expect(reply.status).toBe(200);
    expect(reply.bytes.length).toBe(1000);
  });

  it('serves other kinds as attachments', async () => {
    const other = (await upload(service, alice.headers, 'a,b', { filename: 'x.csv', type: 'text/csv' })).body.id;
    const reply = await request(service, 'GET', `/media/${other}`, alice.headers);
    expect(reply.headers.get('content-disposition')).toMatch(/^attachment; filename="x.csv"/);
  });
});

describe('GET /media/{id}/metadata', () => {
  it('answers {id, filename, contentType, size, sha256, createdAt}', async () => {
    const created = (await upload(service, alice.headers, 'meta', { filename: 'm.txt', type: 'text/plain' })).body;
    const reply = await request(service, 'GET', `/media/${created.id}/metadata`, bob.headers);
    expect(reply.status).toBe(200);
    expect((await request(service, 'GET', `/media/${created.id}`, bob.headers)).headers.get('content-type')).toBe('text/plain');
    expect(reply.body).toEqual({
      id: created.id, filename: 'm.txt', contentType: 'text/plain', size: 4, sha256: sha256('meta'), createdAt: created.createdAt,
    });
    expect(reply.body.createdAt).toMatch(ISO_MS);
  });

  it('answers 404 for an unknown id and 401 without a token', async () => {
    expect((await request(service, 'GET', '/media/01UNKNOWN0000000000000000/metadata', bob.headers)).status).toBe(404);
    expect((await request(service, 'GET', '/media/01UNKNOWN0000000000000000/metadata', {})).status).toBe(401);
  });
});

describe('DELETE /media/{id}', () => {
  it('lets the uploader delete: 204, then 404 everywhere', async () => {
    const id = (await upload(service, alice.headers, 'mine')).body.id;
    expect((await request(service, 'DELETE', `/media/${id}`, alice.headers)).status).toBe(204);
    expect((await request(service, 'GET', `/media/${id}`, alice.headers)).status).toBe(404);
    expect((await request(service, 'GET', `/media/${id}/metadata`, alice.headers)).status).toBe(404);
    expect((await request(service, 'DELETE', `/media/${id}`, alice.headers)).status).toBe(404);
  });

  it('answers 404 to another user of the tenant, 204 to a Manager of it', async () => {
    const id = (await upload(service, alice.headers, 'managed')).body.id;
    expect((await request(service, 'DELETE', `/media/${id}`, bob.headers)).status).toBe(404);
    expect((await request(service, 'GET', `/media/${id}`, bob.headers)).status).toBe(200);
    expect((await request(service, 'DELETE', `/media/${id}`, manager.headers)).status).toBe(204);
  });
});

describe('identical bytes', () => {
  it('are stored once per tenant; each upload has its own id and owner; deleting one keeps the other', async () => {
    const bytes = `shared ${Date.now()}`;
    const before = blobFiles();
    const first = (await upload(service, alice.headers, bytes, { filename: 'a.txt', type: 'text/plain' })).body;
    const second = (await upload(service, bob.headers, bytes, { filename: 'b.txt', type: 'text/plain' })).body;
    expect(second.id).not.toBe(first.id);
    expect(second.sha256).toBe(first.sha256);
    expect(blobFiles()).toBe(before + 1);
    const rows = await service.ctx.db.many('select owner_id from svc_media where id in ($1, $2) order by owner_id', [first.id, second.id]);
    expect(rows.map((row) => row.owner_id)).toEqual(['alice', 'bob']);
    const blob = await service.ctx.db.one('select refcount from svc_media_blobs where sha256 = $1 and tenant_id = $2', [first.sha256, 'acme']);
    expect(blob.refcount).toBe(2);

    expect((await request(service, 'DELETE', `/media/${first.id}`, alice.headers)).status).toBe(204);
    const served = await request(service, 'GET', `/media/${second.id}`, bob.headers);
    expect(served.status).toBe(200);
    expect(served.bytes.toString()).toBe(bytes);
    expect((await request(service, 'GET', `/media/${second.id}/metadata`, bob.headers)).body.filename).toBe('b.txt');
  });

  it('are stored again in another tenant', async () => {
    const bytes = `cross ${Date.now()}`;
    const before = blobFiles();
    await upload(service, alice.headers, bytes);
    await upload(service, otherTenant.headers, bytes);
    expect(blobFiles()).toBe(before + 2);
  });
});

describe('tenant isolation', () => {
  it('answers 404 on every route for media of another tenant', async () => {
    const id = (await upload(service, alice.headers, 'acme only')).body.id;
    for (const [method, path] of [['GET', `/media/${id}`], ['GET', `/media/${id}/metadata`], ['DELETE', `/media/${id}`]]) {
      expect((await request(service, method, path, otherTenant.headers)).status).toBe(404);
    }
    expect((await request(service, 'POST', '/media/commit', otherTenant.headers, { id })).status).toBe(404);
    expect((await request(service, 'GET', `/media/${id}`, alice.headers)).status).toBe(200);
  });

  it('answers 403 to a tenant-bound user naming another tenant, and lets a tenant-less Admin enter one', async () => {
    const id = (await upload(service, alice.headers, 'enter')).body.id;
    expect((await request(service, 'GET', `/media/${id}`, { ...alice.headers, 'x-tenant-id': 'globex' })).status).toBe(403);
    const operator = await userOf(service, 'Admin', 'operator', null);
    expect((await request(service, 'GET', `/media/${id}`, operator.headers)).status).toBe(404);
    expect((await request(service, 'GET', `/media/${id}`, { ...operator.headers, 'x-tenant-id': 'acme' })).status).toBe(200);
    const viewer = await userOf(service, 'Viewer', 'loner', null);
    expect((await request(service, 'GET', `/media/${id}`, { ...viewer.headers, 'x-tenant-id': 'acme' })).status).toBe(403);
  });
});
