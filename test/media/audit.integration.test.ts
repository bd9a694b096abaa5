/**
 * Media changes in the audit log (CONTRACT section 9): an upload (direct or
 * presigned) and a delete each write one entry in the transaction of the
 * change, in the uploader's tenant; a repeated commit or a refused delete
 * writes no second success entry.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request, sha256, startMediaService, upload, userOf, type MediaService, type User } from './helpers.ts';

let service: MediaService;
let alice: User;
let bob: User;

beforeAll(async () => {
  service = await startMediaService();
  alice = await userOf(service, 'Sales', 'alice', 'acme');
  bob = await userOf(service, 'Sales', 'bob', 'acme');
});
afterAll(() => service?.close());

const entries = (entityId: string) => service.ctx.db.any<{ action: string; outcome: string; tenant_id: string | null; actor_id: string; changes: any }>(
  `select action, outcome, tenant_id, actor_id, changes from svc_audit where entity_type = 'Media' and entity_id = $1 order by occurred_at, id`, [entityId],
);

describe('media in the audit log', () => {
  it('writes media.upload for a direct upload and media.delete for its delete, in the tenant', async () => {
    const uploaded = await upload(service, alice.headers, 'audited bytes', { filename: 'a.txt', type: 'text/plain' });
    expect(uploaded.status).toBe(201);
    expect(await entries(uploaded.body.id)).toEqual([{
      action: 'media.upload', outcome: 'success', tenant_id: 'acme', actor_id: 'alice',
      changes: { filename: 'a.txt', contentType: 'text/plain', size: 13, sha256: sha256('audited bytes') },
    }]);
    expect((await request(service, 'DELETE', `/media/${uploaded.body.id}`, bob.headers)).status).toBe(404);
    expect((await request(service, 'DELETE', `/media/${uploaded.body.id}`, alice.headers)).status).toBe(204);
    expect((await entries(uploaded.body.id)).map((e) => [e.action, e.outcome, e.actor_id])).toEqual([
      ['media.upload', 'success', 'alice'], ['media.delete', 'success', 'alice'],
    ]);
  });

  it('writes one media.upload for a presigned upload however often it is committed', async () => {
    const bytes = 'presigned audited';
    const grant = await request(service, 'POST', '/media/presign', alice.headers, { filename: 'p.txt', contentType: 'text/plain', size: bytes.length });
    expect(grant.status).toBe(201);
    expect(await entries(grant.body.id)).toEqual([]);
    expect((await fetch(grant.body.uploadUrl, { method: 'PUT', headers: grant.body.headers, body: bytes })).status).toBe(200);
    const commits = await Promise.all([1, 2, 3].map(() => request(service, 'POST', '/media/commit', alice.headers, { id: grant.body.id })));
    expect(commits.map((c) => c.status)).toEqual([201, 201, 201]);
    const written = await entries(grant.body.id);
    expect(written.map((e) => e.action)).toEqual(['media.upload']);
    expect(written[0].changes.sha256).toBe(sha256(bytes));
  });
});

describe('GET /audit/entity/Media/{id}/audit', () => {
  it('lists a media item\'s trail to a Manager of its tenant only', async () => {
    const uploaded = await upload(service, alice.headers, 'trail', { filename: 't.txt', type: 'text/plain' });
    const manager = await userOf(service, 'Manager', 'mia', 'acme');
    const foreign = await userOf(service, 'Manager', 'max', 'globex');
    const trail = await request(service, 'GET', `/audit/entity/Media/${uploaded.body.id}/audit`, manager.headers);
    expect(trail.status).toBe(200);
    expect(trail.body.items.map((e: any) => e.action)).toEqual(['media.upload']);
    const other = await request(service, 'GET', `/audit/entity/Media/${uploaded.body.id}/audit`, foreign.headers);
    expect(other.body.items).toEqual([]);
  });
});
