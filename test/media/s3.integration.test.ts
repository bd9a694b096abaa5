/**
 * POST /media and GET /media/{id} with the s3 driver against a real
 * S3-compatible server (s3rver over HTTP): single-part and multipart uploads,
 * Range passed through to GetObject, 304, dedupe, the 413 cut-off leaving no object.
 */
import { ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request, sha256, startMediaService, startS3rver, upload, userOf, type MediaService, type S3Server, type User } from './helpers.ts';

let s3: S3Server;
let service: MediaService;
let alice: User;
let bob: User;
let client: S3Client;

beforeAll(async () => {
  s3 = await startS3rver();
  service = await startMediaService({ ...s3.env, SVC_MEDIA_MAX_BYTES: String(8 * 1024 * 1024) });
  alice = await userOf(service, 'Sales', 'alice', 'acme');
  bob = await userOf(service, 'Sales', 'bob', 'acme');
  client = new S3Client({
    region: 'us-east-1', endpoint: s3.endpoint, forcePathStyle: true, credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
  });
});
afterAll(async () => {
  client?.destroy();
  await service?.close();
  await s3?.close();
});

const objectKeys = async () =>
  ((await client.send(new ListObjectsV2Command({ Bucket: s3.bucket }))).Contents ?? []).map((object) => object.Key!);

describe('the s3 driver', () => {
  it('uploads a small file in one part and serves it with Range, ETag and 304', async () => {
    const bytes = Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 7) % 256));
    const created = await upload(service, alice.headers, bytes, { filename: 'pic.png', type: 'image/png' });
    expect(created.status).toBe(201);
    expect(created.body.sha256).toBe(sha256(bytes));
    const whole = await request(service, 'GET', `/media/${created.body.id}`, bob.headers);
    expect(whole.status).toBe(200);
    expect(whole.bytes.equals(bytes)).toBe(true);
    expect(whole.headers.get('content-length')).toBe('4096');
    expect(whole.headers.get('x-content-type-options')).toBe('nosniff');
    const part = await request(service, 'GET', `/media/${created.body.id}`, { ...bob.headers, range: 'bytes=100-199' });
    expect(part.status).toBe(206);
    expect(part.bytes.equals(bytes.subarray(100, 200))).toBe(true);
    expect(part.headers.get('content-range')).toBe('bytes 100-199/4096');
    const cached = await request(service, 'GET', `/media/${created.body.id}`, { ...bob.headers, 'if-none-match': whole.headers.get('etag')! });
    expect(cached.status).toBe(304);
    expect((await request(service, 'GET', `/media/${created.body.id}`, { ...bob.headers, range: 'bytes=5000-' })).status).toBe(416);
  });

  it('streams a file larger than one part as a multipart upload', async () => {
    const bytes = Buffer.alloc(6 * 1024 * 1024 + 123);
    for (let i = 0; i < bytes.length; i += 4096) bytes[i] = i % 251;
    const created = await upload(service, alice.headers, bytes);
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ size: bytes.length, sha256: sha256(bytes) });
    const tail = await request(service, 'GET', `/media/${created.body.id}`, { ...alice.headers, range: 'bytes=-1000' });
    expect(tail.bytes.equals(bytes.subarray(bytes.length - 1000))).toBe(true);
  });

  it('stores identical bytes once and keeps them while another record references them', async () => {
    const bytes = `s3 shared ${Date.now()}`;
    const before = (await objectKeys()).length;
    const first = (await upload(service, alice.headers, bytes)).body;
    const second = (await upload(service, bob.headers, bytes)).body;
    expect(await objectKeys()).toHaveLength(before + 1);
    expect((await request(service, 'DELETE', `/media/${first.id}`, alice.headers)).status).toBe(204);
    expect((await request(service, 'GET', `/media/${second.id}`, bob.headers)).bytes.toString()).toBe(bytes);
  });

  it('keeps serving the committed bytes when the presigned PUT is replayed after the commit', async () => {
    const grant = (await request(service, 'POST', '/media/presign', alice.headers, { filename: 'r.txt', contentType: 'text/plain', size: 8 })).body;
    const put = (body: string) => fetch(grant.uploadUrl, { method: 'PUT', headers: grant.headers, body });
    expect((await put('original')).status).toBe(200);
    const committed = await request(service, 'POST', '/media/commit', alice.headers, { id: grant.id });
    expect(committed.body.sha256).toBe(sha256('original'));
    expect((await put('replayed')).status).toBe(200); // S3 takes it: the URL is valid until it expires
    const served = await request(service, 'GET', `/media/${grant.id}`, bob.headers);
    expect(served.bytes.toString()).toBe('original');
    expect(sha256(served.bytes)).toBe(committed.body.sha256);
    const again = await request(service, 'POST', '/media/commit', alice.headers, { id: grant.id });
    expect(again.body).toEqual(committed.body);
  });

  it('cuts an upload past SVC_MEDIA_MAX_BYTES off with 413 and leaves no object', async () => {
    const before = await objectKeys();
    const reply = await upload(service, alice.headers, Buffer.alloc(8 * 1024 * 1024 + 1));
    expect(reply.status).toBe(413);
    expect(reply.body).toEqual({ error: 'payload_too_large', code: 'PAYLOAD_TOO_LARGE' });
    expect(await objectKeys()).toEqual(before);
  });
});
