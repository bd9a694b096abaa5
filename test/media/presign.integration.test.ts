/**
 * Presign and commit (CONTRACT section 10) on both drivers: the same client
 * flow whether the upload URL is the server's own (local) or a presigned S3
 * PUT (s3rver). The server hashes the bytes itself; 409 nothing uploaded,
 * 410 expired, 422 size mismatch; a repeated commit returns the same metadata.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request, sha256, startMediaService, startS3rver, upload, userOf, type MediaService, type S3Server, type User } from './helpers.ts';

const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

describe.each(['local', 's3'] as const)('presign and commit with the %s driver', (driver) => {
  let service: MediaService;
  let s3: S3Server | null = null;
  let alice: User;
  let outsider: User;

  beforeAll(async () => {
    s3 = driver === 's3' ? await startS3rver() : null;
    service = await startMediaService({ SVC_MEDIA_MAX_BYTES: String(1024 * 1024), ...s3?.env });
    alice = await userOf(service, 'Sales', 'alice', 'acme');
    outsider = await userOf(service, 'Admin', 'eve', 'globex');
  });
  afterAll(async () => {
    await service?.close();
    await s3?.close();
  });

  const presign = (body: unknown, user = alice) => request(service, 'POST', '/media/presign', user.headers, body);
  const commit = (id: string, user = alice) => request(service, 'POST', '/media/commit', user.headers, { id });
  const put = (grant: { uploadUrl: string; headers: Record<string, string> }, bytes: string | Buffer) =>
    fetch(grant.uploadUrl, { method: 'PUT', headers: grant.headers, body: bytes });

  it('presigns, takes the PUT, commits with the server-computed sha256, serves the bytes', async () => {
    const bytes = `direct upload ${driver}`;
    const grant = await presign({ filename: 'direct.txt', contentType: 'text/plain', size: bytes.length });
    expect(grant.status).toBe(201);
    expect(grant.body).toEqual({
      id: expect.any(String), uploadUrl: expect.any(String), method: 'PUT', headers: { 'content-type': 'text/plain' },
      expiresAt: expect.stringMatching(ISO_MS),
    });
    if (driver === 'local') expect(grant.body.uploadUrl.startsWith(`${service.url}/media/upload/${grant.body.id}?`)).toBe(true);
    else expect(grant.body.uploadUrl.startsWith(s3!.endpoint)).toBe(true);
    expect((await put(grant.body, bytes)).status).toBe(200);

    const committed = await commit(grant.body.id);
    expect(committed.status).toBe(201);
    expect(committed.body).toMatchObject({
      id: grant.body.id, filename: 'direct.txt', contentType: 'text/plain', size: bytes.length, sha256: sha256(bytes),
      createdAt: expect.stringMatching(ISO_MS),
    });
    const again = await commit(grant.body.id);
    expect(again.status).toBe(201);
    expect(again.body).toEqual(committed.body);

    const served = await request(service, 'GET', `/media/${grant.body.id}`, alice.headers, undefined);
    expect(served.status).toBe(200);
    expect(served.bytes.toString()).toBe(bytes);
    const ranged = await request(service, 'GET', `/media/${grant.body.id}`, { ...alice.headers, range: 'bytes=0-5' });
    expect(ranged.status).toBe(206);
    expect(ranged.bytes.toString()).toBe(bytes.slice(0, 6));
    expect(ranged.headers.get('content-range')).toBe(`bytes 0-5/${bytes.length}`);
  });

  it('commits once when two commits race: both get the same metadata, one reference is taken', async () => {
    const bytes = `raced commit ${driver} ${Date.now()}`;
    const grant = await presign({ filename: 'race.txt', contentType: 'text/plain', size: bytes.length });
    await put(grant.body, bytes);
    const [a, b] = await Promise.all([commit(grant.body.id), commit(grant.body.id)]);
    expect([a.status, b.status]).toEqual([201, 201]);
    expect(a.body).toEqual(b.body);
    const blob = await service.ctx.db.one('select refcount from svc_media_blobs where tenant_id = $1 and sha256 = $2', ['acme', sha256(bytes)]);
    expect(blob.refcount).toBe(1);
  });

  it('answers 409 to a commit before any upload, and 404 to an unknown or foreign id', async () => {
    const grant = await presign({ filename: 'none.bin', contentType: 'application/octet-stream', size: 10 });
    expect((await commit(grant.body.id)).status).toBe(409);
    expect((await commit('01UNKNOWN0000000000000000')).status).toBe(404);
    expect((await commit(grant.body.id, outsider)).status).toBe(404);
    expect((await request(service, 'GET', `/media/${grant.body.id}`, alice.headers)).status).toBe(404);
  });

  it('answers 422 when the uploaded size differs from the announced one', async () => {
    const grant = await presign({ filename: 'short.bin', contentType: 'application/octet-stream', size: 100 });
    expect((await put(grant.body, 'only a few bytes')).status).toBe(200);
    const reply = await commit(grant.body.id);
    expect(reply.status).toBe(422);
    expect(reply.body.error).toBe('size mismatch');
  });

  it('answers 410 to a commit after the upload expired', async () => {
    const grant = await presign({ filename: 'late.txt', contentType: 'text/plain', size: 4 });
    expect((await put(grant.body, 'late')).status).toBe(200);
    await service.ctx.db.none(`update svc_media set expires_at = now() - interval '1 second' where id = $1`, [grant.body.id]);
    expect((await commit(grant.body.id)).status).toBe(410);
  });

  it('stores bytes already held by the tenant once, under a record of their own', async () => {
    const bytes = `dedupe via presign ${driver}`;
    const first = await upload(service, alice.headers, bytes);
    const grant = await presign({ filename: 'again.txt', contentType: 'text/plain', size: bytes.length });
    await put(grant.body, bytes);
    const committed = await commit(grant.body.id);
    expect(committed.body.sha256).toBe(first.body.sha256);
    expect(committed.body.id).not.toBe(first.body.id);
    const blob = await service.ctx.db.one('select refcount from svc_media_blobs where tenant_id = $1 and sha256 = $2', ['acme', first.body.sha256]);
    expect(blob.refcount).toBe(2);
    const driverHandle = service.ctx.services.media.driver;
    expect(await driverHandle.head(`staging/t-acme/${grant.body.id}`)).toBeNull();
  });

  it('validates the presign body: 400 naming the field, 415 for active content, 413 past the limit', async () => {
    expect((await presign({ contentType: 'text/plain', size: 1 })).body).toMatchObject({ field: 'filename' });
    expect((await presign({ filename: 'a', size: 1 })).status).toBe(400);
    expect((await presign({ filename: 'a', contentType: 'text/plain', size: 0 })).body).toMatchObject({ field: 'size' });
    expect((await presign({ filename: 'a', contentType: 'text/plain', size: '5' })).status).toBe(400);
    expect((await presign({ filename: 'a.html', contentType: 'text/html', size: 5 })).status).toBe(415);
    const big = await presign({ filename: 'a', contentType: 'text/plain', size: 1024 * 1024 + 1 });
    expect(big.status).toBe(413);
    expect(big.body).toEqual({ error: 'payload_too_large', code: 'PAYLOAD_TOO_LARGE' });
    expect((await request(service, 'POST', '/media/presign', {}, { filename: 'a', contentType: 'text/plain', size: 1 })).status).toBe(401);
    expect((await request(service, 'POST', '/media/commit', {}, { id: 'x' })).status).toBe(401);
  });

  if (driver === 'local') {
    it('refuses a tampered or expired upload URL, and more bytes than announced', async () => {
      const grant = await presign({ filename: 'x.bin', contentType: 'application/octet-stream', size: 8 });
      const tampered = grant.body.uploadUrl.replace(/sig=[^&]+/, 'sig=AAAA');
      expect((await fetch(tampered, { method: 'PUT', body: '12345678' })).status).toBe(403);
      const later = grant.body.uploadUrl.replace(/expires=\d+/, 'expires=9999999999');
      expect((await fetch(later, { method: 'PUT', body: '12345678' })).status).toBe(403);
      const tooMuch = await fetch(grant.body.uploadUrl, { method: 'PUT', body: '123456789' });
      expect(tooMuch.status).toBe(413);
      expect((await fetch(grant.body.uploadUrl, { method: 'PUT', body: '12345678' })).status).toBe(200);
      expect((await commit(grant.body.id)).status).toBe(201);
      expect((await fetch(grant.body.uploadUrl, { method: 'PUT', body: '12345678' })).status).toBe(404);
    });
  }
});

describe('the local driver\'s upload URL', () => {
  let service: MediaService;
  let alice: User;

  beforeAll(async () => {
    service = await startMediaService({});
    alice = await userOf(service, 'Sales', 'alice', 'acme');
  });
  afterAll(() => service?.close());

  it('signs the tenant in beside the id: another tenant in it is refused and the body is not taken (ADR 025)', async () => {
    const bytes = 'tenant-bound upload';
    const grant = await request(service, 'POST', '/media/presign', alice.headers, { filename: 't.txt', contentType: 'text/plain', size: bytes.length });
    const put = (uploadUrl: string) => fetch(uploadUrl, { method: 'PUT', headers: grant.body.headers, body: bytes });
    const url = new URL(grant.body.uploadUrl);
    expect(url.searchParams.get('tenant')).toBe('acme');
    url.searchParams.set('tenant', 'globex');
    expect((await put(url.toString())).status).toBe(403);
    url.searchParams.delete('tenant');
    expect((await put(url.toString())).status).toBe(403);
    expect((await request(service, 'POST', '/media/commit', alice.headers, { id: grant.body.id })).status).toBe(409);
    expect((await put(grant.body.uploadUrl)).status).toBe(200);
    expect((await request(service, 'POST', '/media/commit', alice.headers, { id: grant.body.id })).status).toBe(201);
  });
});
