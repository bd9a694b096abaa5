/**
 * The `Media` field type at run time (fixture crm, Company.logo): a write must
 * name a committed, live media item of the record's own tenant; anything else
 * is a VALIDATION_ERROR naming the field.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CREATE, UPDATE, clientFor, type Gql } from '../records/helpers.ts';
import { request, startMediaService, upload, userOf, type MediaService, type User } from './helpers.ts';

let service: MediaService;
let acme: Gql;
let acmeUser: User;
let globexUser: User;

beforeAll(async () => {
  service = await startMediaService({}, 'crm');
  acme = await clientFor(service, { role: 'Admin', tenantId: 'acme', userId: 'acme-admin' });
  acmeUser = await userOf(service, 'Admin', 'acme-admin', 'acme');
  globexUser = await userOf(service, 'Admin', 'globex-admin', 'globex');
});
afterAll(async () => {
  await service?.close();
});

const createCompany = (data: Record<string, unknown>) => acme(CREATE, { model: 'Company', data: { name: `Co ${Math.random()}`, ...data } });

function expectFieldError(reply: Awaited<ReturnType<Gql>>, field: string) {
  expect(reply.errors?.map((e) => [e.extensions.code, e.extensions.field])).toEqual([['VALIDATION_ERROR', field]]);
}

describe('a Media field', () => {
  it('accepts a committed media id of the same tenant, and null', async () => {
    const logo = (await upload(service, acmeUser.headers, 'png bytes', { type: 'image/png' })).body.id;
    const created = await createCompany({ logo });
    expect(created.errors).toBeUndefined();
    expect(created.data.create.logo).toBe(logo);
    const cleared = await acme(UPDATE, { model: 'Company', id: created.data.create.id, data: { logo: null } });
    expect(cleared.data.update.logo).toBeNull();
  });

  it('refuses an unknown id, another tenant\'s media, a deleted one and an uncommitted one', async () => {
    const foreign = (await upload(service, globexUser.headers, 'globex logo')).body.id;
    const deleted = (await upload(service, acmeUser.headers, 'deleted logo')).body.id;
    expect((await request(service, 'DELETE', `/media/${deleted}`, acmeUser.headers)).status).toBe(204);
    const pending = (await request(service, 'POST', '/media/presign', acmeUser.headers, { filename: 'p.png', contentType: 'image/png', size: 3 })).body.id;
    for (const logo of ['01UNKNOWN0000000000000000', foreign, deleted, pending]) {
      expectFieldError(await createCompany({ logo }), 'logo');
    }
    expectFieldError(await createCompany({ logo: 42 }), 'logo');
  });

  it('is checked on update too', async () => {
    const created = await createCompany({});
    const foreign = (await upload(service, globexUser.headers, 'globex again')).body.id;
    expectFieldError(await acme(UPDATE, { model: 'Company', id: created.data.create.id, data: { logo: foreign } }), 'logo');
  });
});
