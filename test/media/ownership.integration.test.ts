/**
 * Who may commit, and what may be deleted (issue 26, item 8): a pending upload
 * is committed by its uploader only (anyone else, an Admin too, gets 404 as for
 * an unknown id); a media item that a live record's Media field holds is not
 * deleted (409 naming the records, at most 10) until no live record holds it.
 * Fixture crm: Company.logo is a Media field.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../jobs/helpers.ts';
import { CREATE, UPDATE, clientFor, type Gql } from '../records/helpers.ts';
import { request, sha256, startMediaService, upload, userOf, type MediaService, type User } from './helpers.ts';

const DELETE_RECORD = 'mutation($id: ID!) { delete(model: "Company", id: $id) }';

let service: MediaService;
let alice: User;
let bob: User;
let admin: User;
let acme: Gql;

beforeAll(async () => {
  service = await startMediaService({}, 'crm');
  alice = await userOf(service, 'Sales', 'alice', 'acme');
  bob = await userOf(service, 'Sales', 'bob', 'acme');
  admin = await userOf(service, 'Admin', 'acme-admin', 'acme');
  acme = await clientFor(service, { role: 'Admin', tenantId: 'acme', userId: 'acme-admin' });
});
afterAll(async () => {
  await service?.close();
});

const commit = (id: string, user: User) => request(service, 'POST', '/media/commit', user.headers, { id });
const deleteMedia = (id: string, user: User = admin) => request(service, 'DELETE', `/media/${id}`, user.headers);

async function company(logo: string): Promise<string> {
  const reply = await acme(CREATE, { model: 'Company', data: { name: `Co ${Math.random()}`, logo } });
  expect(reply.errors).toBeUndefined();
  return reply.data.create.id;
}

describe('POST /media/commit', () => {
  it('commits for the uploader only: another user of the tenant, or its Admin, gets 404', async () => {
    const grant = (await request(service, 'POST', '/media/presign', alice.headers, { filename: 'a.txt', contentType: 'text/plain', size: 5 })).body;
    expect((await fetch(grant.uploadUrl, { method: 'PUT', headers: grant.headers, body: 'alice' })).status).toBe(200);
    for (const other of [bob, admin]) {
      const reply = await commit(grant.id, other);
      expect(reply.status).toBe(404);
      expect(reply.body).toMatchObject({ code: 'NOT_FOUND' });
    }
    const row = await service.ctx.db.one('select status from svc_media where id = $1', [grant.id]);
    expect(row.status).toBe('pending');
    const committed = await commit(grant.id, alice);
    expect(committed.status).toBe(201);
    expect(committed.body.sha256).toBe(sha256('alice'));
    expect((await commit(grant.id, bob)).status).toBe(404);
  });
});

describe('DELETE /media/{id} of media a record holds', () => {
  it('answers 409 naming the records while one holds it, and 204 once none does', async () => {
    const logo = (await upload(service, admin.headers, 'held logo', { type: 'image/png' })).body.id;
    const holder = await company(logo);
    const refused = await deleteMedia(logo);
    expect(refused.status).toBe(409);
    expect(refused.body).toEqual({
      error: 'media is referenced by records', code: 'CONFLICT', references: [{ model: 'Company', id: holder }], more: false,
    });
    expect((await request(service, 'GET', `/media/${logo}`, admin.headers)).bytes.toString()).toBe('held logo');
    expect((await service.ctx.db.one('select refcount from svc_media_blobs where sha256 = $1', [sha256('held logo')])).refcount).toBe(1);

    expect((await acme(UPDATE, { model: 'Company', id: holder, data: { logo: null } })).errors).toBeUndefined();
    expect((await deleteMedia(logo)).status).toBe(204);
  });

  it('a record write racing a delete of its media waits for it, then is refused: no record holds a deleted id', async () => {
    const logo = (await upload(service, admin.headers, 'raced logo', { type: 'image/png' })).body.id;
    // A delete in flight: its row lock taken, not yet committed.
    const deleting = new pg.Client({ connectionString: service.database.url });
    await deleting.connect();
    try {
      await deleting.query('begin');
      await deleting.query('update svc_media set deleted_at = now() where id = $1', [logo]);
      const write = acme(CREATE, { model: 'Company', data: { name: 'Racer', logo } });
      // The write waits on the media row (its reference check takes it `for share`) ...
      await waitFor(async () => (await service.ctx.db.one(
        `select count(*)::int as n from pg_stat_activity where wait_event_type = 'Lock' and datname = current_database() and query like '%svc_media%'`,
      )).n > 0);
      await deleting.query('commit');
      // ... and, once the delete commits, sees the item gone.
      const reply = await write;
      expect(reply.errors?.[0].extensions).toMatchObject({ code: 'VALIDATION_ERROR', field: 'logo' });
    } finally {
      await deleting.end();
    }
    expect((await service.ctx.db.one(`select count(*)::int as n from "company" where "name" = 'Racer'`)).n).toBe(0);
  });

  it('does not count a deleted record, and names at most 10 holders', async () => {
    const logo = (await upload(service, admin.headers, 'shared logo', { type: 'image/png' })).body.id;
    const trashed = await company(logo);
    expect((await acme(DELETE_RECORD, { id: trashed })).errors).toBeUndefined();
    const holders = [];
    for (let i = 0; i < 12; i++) holders.push(await company(logo));
    const refused = await deleteMedia(logo);
    expect(refused.status).toBe(409);
    expect(refused.body.references).toHaveLength(10);
    expect(refused.body.more).toBe(true);
    for (const reference of refused.body.references) expect(holders).toContain(reference.id);

    for (const id of holders) await acme(DELETE_RECORD, { id });
    expect((await deleteMedia(logo)).status).toBe(204);
  });

  it('looks the holders up through an index of the Media column', async () => {
    const indexes = await service.ctx.db.manyOrNone<{ indexdef: string }>("select indexdef from pg_indexes where tablename = 'company'");
    expect(indexes.map((i) => i.indexdef)).toContain('CREATE INDEX company_logo_idx ON public.company USING btree (logo)');
  });
});
