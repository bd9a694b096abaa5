/**
 * The sweep, called directly with a controlled clock: presigned uploads never
 * committed go once expired; bytes go only after SVC_MEDIA_UPLOAD_TTL_SECS
 * without a live reference; referenced bytes stay; one instance per interval.
 */
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claimSweep, sweepMedia } from '../../runtime/media/index.ts';
import { request, startMediaService, startS3rver, upload, userOf, type MediaService, type S3Server, type User } from './helpers.ts';

const TTL = 3600;

describe.each(['local', 's3'] as const)('the media sweep with the %s driver', (driver) => {
  let service: MediaService;
  let s3: S3Server | null = null;
  let alice: User;

  beforeAll(async () => {
    s3 = driver === 's3' ? await startS3rver() : null;
    service = await startMediaService({ SVC_MEDIA_UPLOAD_TTL_SECS: String(TTL), ...s3?.env });
    alice = await userOf(service, 'Sales', 'alice', 'acme');
  });
  afterAll(async () => {
    await service?.close();
    await s3?.close();
  });

  const store = () => service.ctx.services.media.driver;
  const sweep = (secondsFromNow: number) =>
    sweepMedia(service.ctx.db, store(), { now: new Date(Date.now() + secondsFromNow * 1000), ttlSecs: TTL });
  const blobOf = (sha256: string) =>
    service.ctx.db.oneOrNone('select storage_key, refcount from svc_media_blobs where tenant_id = $1 and sha256 = $2', ['acme', sha256]);

  it('removes an expired, uncommitted upload and its staged bytes, and keeps one not yet expired', async () => {
    const presign = (size: number) => request(service, 'POST', '/media/presign', alice.headers, { filename: 'p.bin', contentType: 'application/octet-stream', size });
    const stale = (await presign(5)).body;
    await fetch(stale.uploadUrl, { method: 'PUT', headers: stale.headers, body: 'stale' });
    const fresh = (await presign(5)).body;
    const stagedKey = `staging/t-acme/${stale.id}`;
    expect(await store().head(stagedKey)).toEqual({ size: 5 });

    const early = await sweep(TTL / 2);
    expect(early.uploads).toBe(0);
    const late = await sweep(TTL + 1);
    expect(late.uploads).toBeGreaterThanOrEqual(2);
    expect(await store().head(stagedKey)).toBeNull();
    const left = await service.ctx.db.manyOrNone('select id from svc_media where id in ($1, $2)', [stale.id, fresh.id]);
    expect(left).toEqual([]);
    expect((await request(service, 'POST', '/media/commit', alice.headers, { id: stale.id })).status).toBe(404);
  });

  it('removes what an upload URL stored after its commit, and a commit key a crashed commit left, once the URL expired', async () => {
    const presign = (size: number) => request(service, 'POST', '/media/presign', alice.headers, { filename: 'p.bin', contentType: 'application/octet-stream', size });
    const grant = (await presign(8)).body;
    await fetch(grant.uploadUrl, { method: 'PUT', headers: grant.headers, body: 'original' });
    const committed = await request(service, 'POST', '/media/commit', alice.headers, { id: grant.id });
    expect(committed.status).toBe(201);
    // An S3 URL takes a PUT until it expires; a local one refuses it, so the test stores the late bytes itself.
    const stagedKey = `staging/t-acme/${grant.id}`;
    await store().put(stagedKey, Readable.from([Buffer.from('too late')]), 8);
    // A pending upload whose commit moved the bytes, then crashed.
    const crashed = (await presign(5)).body;
    await fetch(crashed.uploadUrl, { method: 'PUT', headers: crashed.headers, body: 'crash' });
    expect(await store().move(`staging/t-acme/${crashed.id}`, `commit/t-acme/${crashed.id}`)).toBe(true);

    await sweep(TTL / 2);
    expect(await store().head(stagedKey)).toEqual({ size: 8 });
    const swept = await sweep(TTL + 1);
    expect(await store().head(stagedKey)).toBeNull();
    expect(await store().head(`commit/t-acme/${crashed.id}`)).toBeNull();
    expect(swept.staged).toBeGreaterThanOrEqual(1);
    expect((await request(service, 'GET', `/media/${grant.id}`, alice.headers)).bytes.toString()).toBe('original');
    const row = await service.ctx.db.one('select status, staging_key from svc_media where id = $1', [grant.id]);
    expect(row).toEqual({ status: 'committed', staging_key: null });
  });

  it('removes bytes only after the TTL without a live reference, and never referenced ones', async () => {
    const bytes = `sweep me ${driver} ${Date.now()}`;
    const first = (await upload(service, alice.headers, bytes)).body;
    const second = (await upload(service, alice.headers, bytes)).body;
    const { storage_key: key } = (await blobOf(first.sha256))!;

    await request(service, 'DELETE', `/media/${first.id}`, alice.headers);
    await sweep(TTL * 2);
    expect(await blobOf(first.sha256)).toMatchObject({ refcount: 1 });
    expect(await store().head(key)).not.toBeNull();
    expect((await request(service, 'GET', `/media/${second.id}`, alice.headers)).bytes.toString()).toBe(bytes);

    await request(service, 'DELETE', `/media/${second.id}`, alice.headers);
    await sweep(TTL / 2);
    expect(await blobOf(first.sha256)).toMatchObject({ refcount: 0 });
    expect(await store().head(key)).not.toBeNull();

    const swept = await sweep(TTL + 5);
    expect(swept.blobs).toBeGreaterThanOrEqual(1);
    expect(await blobOf(first.sha256)).toBeNull();
    expect(await store().head(key)).toBeNull();

    // The same bytes uploaded again are stored anew.
    const again = (await upload(service, alice.headers, bytes)).body;
    expect((await request(service, 'GET', `/media/${again.id}`, alice.headers)).bytes.toString()).toBe(bytes);
  });

  if (driver === 'local') {
    it('removes temporary files a crashed upload left, once older than the TTL', async () => {
      const { mkdirSync, writeFileSync, utimesSync, existsSync } = await import('node:fs');
      const { join } = await import('node:path');
      mkdirSync(join(service.mediaDir, '.tmp'), { recursive: true });
      const old = join(service.mediaDir, '.tmp', 'crashed-upload');
      const recent = join(service.mediaDir, '.tmp', 'in-flight-upload');
      writeFileSync(old, 'half');
      writeFileSync(recent, 'half');
      const twoHoursAgo = new Date(Date.now() - 2 * TTL * 1000);
      utimesSync(old, twoHoursAgo, twoHoursAgo);
      const result = await sweep(0);
      expect(result.temporary).toBe(1);
      expect(existsSync(old)).toBe(false);
      expect(existsSync(recent)).toBe(true);
    });
  }

  it('is claimed by one instance per interval', async () => {
    await service.ctx.db.none(`delete from svc_periodic where name = 'media-sweep'`);
    const claims = await Promise.all([claimSweep(service.ctx.db, 60), claimSweep(service.ctx.db, 60), claimSweep(service.ctx.db, 60)]);
    expect(claims.filter(Boolean)).toHaveLength(1);
    expect(await claimSweep(service.ctx.db, 60)).toBe(false);
  });
});
