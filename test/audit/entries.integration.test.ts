/**
 * What gets written: one entry per committed change (none for a rolled-back
 * or refused one), from every mutation path, with `{field: [old, new]}`,
 * request facts, denied attempts in their own transaction, and no secret.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestService } from '../helpers/service.ts';
import {
  allEntries, clientFor, create, DELETE, HARD_DELETE, RESTORE, startAuditService, UPDATE, UPDATE_MANY, type Client,
} from './helpers.ts';
import { ANONYMOUS_BURST, ANONYMOUS_PER_SEC } from '../../runtime/audit/log.ts';
import { waitFor } from '../jobs/helpers.ts';

const ADMIN_EMAIL = 'root@audit.test';
const ADMIN_PASSWORD = 'Sup3rSecretPassw0rd';
const PHONE = '5550001234567';

let service: TestService;
let admin: Client;
let manager: Client;

/** Entries about one record, oldest first. */
async function entriesOf(entityType: string, id: string): Promise<any[]> {
  return (await allEntries(admin, `/audit/entity/${entityType}/${id}/audit`)).reverse();
}

async function count(sql: string, values: unknown[] = []): Promise<number> {
  return (await service.ctx.db.one<{ n: number }>(`select count(*)::int as n from (${sql}) x`, values)).n;
}

beforeAll(async () => {
  service = await startAuditService({ env: { ADMIN_EMAIL, ADMIN_PASSWORD, SVC_ENABLE_SELF_REGISTRATION: 'true' } });
  admin = await clientFor(service, { role: 'Admin', userId: 'admin-1' });
  manager = await clientFor(service, { role: 'Manager', userId: 'manager-1' });
});
afterAll(() => service?.close());

describe('record mutations', () => {
  it('a committed create has exactly one entry, tied to its event, with the written fields and the request', async () => {
    const response = await fetch(`${service.url}/graphql`, {
      method: 'POST',
      headers: { authorization: `Bearer ${manager.token}`, 'content-type': 'application/json', 'x-request-id': 'req-create-1', 'user-agent': 'audit-test/1' },
      body: JSON.stringify({ query: 'mutation($d: JSON!) { create(model: "Company", data: $d) }', variables: { d: { name: 'Acme', employees: 3 } } }),
    });
    const company = ((await response.json()) as any).data.create;
    const entries = await entriesOf('Company', company.id);
    expect(entries).toHaveLength(1);
    const [entry] = entries;
    expect(entry).toMatchObject({
      action: 'record.create', outcome: 'success', tenantId: null, entityType: 'Company', entityId: company.id,
      actor: { kind: 'user', id: 'manager-1', role: 'Manager' }, changes: { name: 'Acme', employees: 3 },
      ip: '127.0.0.1', userAgent: 'audit-test/1', requestId: 'req-create-1',
    });
    expect(entry.occurredAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    const event = await service.ctx.db.one('select id from svc_events where stream_type = $1 and stream_id = $2', ['Company', company.id]);
    expect(entry.eventId).toBe(event.id);
  });

  it('an update records {field: [old, new]} for the fields it set; delete, restore and hardDelete one entry each', async () => {
    const company = await create(manager, 'Company', { name: 'Lifecycle', employees: 10 });
    const updated = await manager.gql(UPDATE, { model: 'Company', id: company.id, data: { employees: 11, website: 'https://x.test' } });
    expect(updated.status).toBe(200);
    expect((await manager.gql(DELETE, { model: 'Company', id: company.id })).body.data.delete).toBe(true);
    expect((await manager.gql(RESTORE, { model: 'Company', id: company.id })).body.data.restore.id).toBe(company.id);
    expect((await admin.gql(HARD_DELETE, { model: 'Company', id: company.id })).body.data.hardDelete).toBe(true);
    const entries = await entriesOf('Company', company.id);
    expect(entries.map((e) => e.action)).toEqual(['record.create', 'record.update', 'record.delete', 'record.restore', 'record.hardDelete']);
    expect(entries[1].changes).toEqual({ employees: [10, 11], website: [null, 'https://x.test'] });
    const eventIds = (await service.ctx.db.manyOrNone('select id from svc_events where stream_id = $1 order by version', [company.id])).map((r) => r.id);
    expect(entries.map((e) => e.eventId)).toEqual(eventIds);
  });

  it('updateMany writes one entry per row, each with its own old values', async () => {
    const tag = `bulk-${Date.now()}`;
    const rows = [];
    for (let i = 0; i < 3; i++) rows.push(await create(manager, 'Company', { name: `${tag}-${i}`, employees: i }));
    const before = await count('select 1 from svc_audit');
    const r = await manager.gql(UPDATE_MANY, { model: 'Company', where: { name: { startsWith: tag } }, data: { employees: 100 } });
    expect(r.body.data.updateMany).toBe(3);
    expect(await count('select 1 from svc_audit')).toBe(before + 3);
    for (const [i, row] of rows.entries()) {
      const entries = await entriesOf('Company', row.id);
      expect(entries.map((e) => e.action)).toEqual(['record.create', 'record.update']);
      expect(entries[1].changes).toEqual({ employees: [i, 100] });
    }
  });

  it('a refused or rolled-back write leaves no entry', async () => {
    const before = await count('select 1 from svc_audit where outcome = $1', ['success']);
    // Refused by validation.
    expect((await manager.gql('mutation { create(model: "Company", data: {name: "x"}) }')).body.errors[0].extensions.code).toBe('VALIDATION_ERROR');
    // A reference to nothing: the one-statement create inserts no row, so no entry.
    const contact = await manager.gql('mutation($d: JSON!) { create(model: "Contact", data: $d) }', {
      d: { firstName: 'Ann', email: `ann-${Date.now()}@x.test`, companyId: 'missing' },
    });
    expect(contact.body.errors[0].extensions.code).toBe('VALIDATION_ERROR');
    // A unique violation rolls the update's transaction back.
    const a = await create(manager, 'Company', { name: `Unique-A-${Date.now()}` });
    const b = await create(manager, 'Company', { name: `Unique-B-${Date.now()}` });
    const clash = await manager.gql(UPDATE, { model: 'Company', id: b.id, data: { name: a.name } });
    expect(clash.body.errors[0].extensions.code).toBe('VALIDATION_ERROR');
    expect(await count('select 1 from svc_audit where outcome = $1', ['success'])).toBe(before + 2); // the two creates
    expect((await entriesOf('Company', b.id)).map((e) => e.action)).toEqual(['record.create']);
  });

  it('a @sensitive field appears as "[redacted]" in creates and updates', async () => {
    const contact = await create(manager, 'Contact', { firstName: 'Sam', email: `sam-${Date.now()}@x.test`, phone: PHONE });
    await manager.gql(UPDATE, { model: 'Contact', id: contact.id, data: { phone: '5550009999999', firstName: 'Samuel' } });
    const entries = await entriesOf('Contact', contact.id);
    expect(entries[0].changes.phone).toBe('[redacted]');
    expect(entries[1].changes).toEqual({ phone: ['[redacted]', '[redacted]'], firstName: ['Sam', 'Samuel'] });
  });
});

describe('denied attempts', () => {
  it('a FORBIDDEN GraphQL write is one denied entry naming the action attempted and the model', async () => {
    const viewer = await clientFor(service, { role: 'Viewer', userId: 'viewer-1' });
    const r = await viewer.gql('mutation { create(model: "Company", data: {name: "Nope"}) }');
    expect(r.body.errors[0].extensions.code).toBe('FORBIDDEN');
    const entries = await allEntries(admin, '/audit/logs?actorId=viewer-1&outcome=denied');
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({
      action: 'record.create', entityType: 'Company', actor: { kind: 'user', id: 'viewer-1', role: 'Viewer' }, changes: { graphql: ['create'] },
    });
  });

  it('names a refused field by its own name (not its alias) and its model; refused reads are access.denied of the model', async () => {
    const viewer = await clientFor(service, { role: 'Viewer', userId: 'viewer-2' });
    const write = await viewer.gql('mutation { gone: hardDelete(model: "Company", id: "01ARZ3NDEKTSV4RRFFQ69G5FAV") }');
    expect(write.body.errors[0].extensions.code).toBe('FORBIDDEN');
    const read = await viewer.gql('{ a: records(model: "Contact") b: record(model: "Contact", id: "01ARZ3NDEKTSV4RRFFQ69G5FAV") }');
    expect(read.body.errors.map((e: any) => e.extensions.code)).toEqual(['FORBIDDEN', 'FORBIDDEN']);
    const entries = await allEntries(admin, '/audit/logs?actorId=viewer-2&outcome=denied');
    expect(entries.map((e) => [e.action, e.entityType, [...e.changes.graphql].sort()]).sort()).toEqual([
      ['access.denied', 'Contact', ['record', 'records']], ['record.hardDelete', 'Company', ['hardDelete']],
    ]);
  });

  it('401 and 403 on protected routes are denied entries', async () => {
    const before = await count("select 1 from svc_audit where action = 'access.denied'");
    expect((await fetch(`${service.url}/jobs/stats`)).status).toBe(401);
    expect((await manager.get('/jobs/stats')).status).toBe(403);
    const rows = await service.ctx.db.manyOrNone(
      "select actor_kind, actor_id, outcome, changes from svc_audit where action = 'access.denied' order by id desc limit 2",
    );
    expect(await count("select 1 from svc_audit where action = 'access.denied'")).toBe(before + 2);
    expect(rows.map((r) => [r.actor_kind, r.actor_id, r.outcome, r.changes.status])).toEqual([
      ['user', 'manager-1', 'denied', 403], ['anonymous', null, 'denied', 401],
    ]);
  });
});

describe('auth, users, worker tokens, jobs, projections', () => {
  const secrets: string[] = [ADMIN_PASSWORD, PHONE];

  it('writes every action, and the whole audit trail holds no secret', async () => {
    const post = (path: string, body: unknown, token?: string) => fetch(`${service.url}${path}`, {
      method: 'POST', headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: JSON.stringify(body),
    });
    expect((await post('/auth/login', { email: ADMIN_EMAIL, password: 'wrong-password-1' })).status).toBe(401);
    const login = (await (await post('/auth/login', { email: ADMIN_EMAIL, password: ADMIN_PASSWORD })).json()) as any;
    secrets.push(login.token, login.refresh_token);
    const refreshed = (await (await post('/auth/refresh', { refreshToken: login.refresh_token })).json()) as any;
    secrets.push(refreshed.token, refreshed.refresh_token);
    expect((await post('/auth/refresh', { refreshToken: login.refresh_token })).status).toBe(401); // reuse
    const created = await admin.request('POST', '/auth/users', { email: 'new@audit.test', password: 'An0therSecret99', role: 'Viewer' });
    secrets.push('An0therSecret99');
    expect(created.status).toBe(201);
    expect((await admin.request('PATCH', `/auth/users/${created.body.id}`, { role: 'Sales' })).status).toBe(200);
    const minted = await admin.request('POST', '/jobs/workers', { name: 'w1', queues: ['mail'] });
    secrets.push(minted.body.token);
    expect((await admin.request('DELETE', `/jobs/workers/${minted.body.id}`)).status).toBe(204);
    const job = await manager.request('POST', '/jobs', { queue: 'mail', kind: 'send' });
    const gqlJob = await manager.gql('mutation { enqueueJob(queue: "mail", kind: "digest") { id } }');
    expect((await admin.request('POST', '/projections/rebuild')).status).toBe(200);
    const second = (await (await post('/auth/login', { email: ADMIN_EMAIL, password: ADMIN_PASSWORD })).json()) as any;
    secrets.push(second.token, second.refresh_token);
    expect((await post('/auth/logout', {}, second.token)).status).toBe(204);
    const registered = (await (await post('/auth/register', { email: 'self@audit.test', password: 'S3lfRegistered' })).json()) as any;
    secrets.push('S3lfRegistered', registered.token, registered.refresh_token);

    const trail = await allEntries(admin, '/audit/logs');
    const actions = trail.map((e) => `${e.action}:${e.outcome}`);
    for (const expected of [
      'auth.login_failed:denied', 'auth.login:success', 'auth.refresh:success', 'auth.refresh_reuse:denied',
      'user.create:success', 'user.update:success', 'worker_token.create:success', 'worker_token.revoke:success',
      'job.enqueue:success', 'projection.rebuild:success', 'auth.logout:success', 'auth.register:success',
    ]) expect(actions).toContain(expected);
    expect(trail.find((e) => e.action === 'auth.register')).toMatchObject({ entityId: registered.user.id, actor: { kind: 'user', id: registered.user.id } });
    const jobEntries = trail.filter((e) => e.action === 'job.enqueue').map((e) => e.entityId);
    expect(jobEntries).toEqual(expect.arrayContaining([job.body.id, gqlJob.body.data.enqueueJob.id]));
    expect(trail.find((e) => e.action === 'user.update').changes).toEqual({ role: ['Viewer', 'Sales'] });
    const userCreates = trail.filter((e) => e.action === 'user.create');
    expect(userCreates.find((e) => e.actor.kind === 'user').changes).toEqual({ email: 'new@audit.test', role: 'Viewer', tenantId: null });
    // The admin bootstrap at start, by the system.
    expect(userCreates.find((e) => e.actor.kind === 'system').changes).toEqual({ email: ADMIN_EMAIL, role: 'Admin', tenantId: null });

    // No secret anywhere in what the routes return, nor in the table itself.
    const text = (await admin.get('/audit/logs?limit=200')).text + JSON.stringify(trail);
    const table = JSON.stringify(await service.ctx.db.manyOrNone('select * from svc_audit'));
    for (const secret of secrets) {
      expect(secret.length).toBeGreaterThan(8);
      expect(text).not.toContain(secret);
      expect(table).not.toContain(secret);
    }
    expect(table).not.toMatch(/\$argon2/);
  });
});

// Last in the file: it spends the instance's anonymous audit budget, which refills at
// ANONYMOUS_PER_SEC, so an anonymous entry a later test expects could be counted, not written.
describe('anonymous attempts', () => {
  it('1,000 anonymous 401s, each with its own X-Forwarded-For, write a bounded number of entries and say how many were not written', async () => {
    const anonymousDenied = "select 1 from svc_audit where action = 'access.denied' and actor_kind = 'anonymous'";
    const suppressedSum = async () => (await service.ctx.db.one<{ n: number }>(
      `select coalesce(sum((changes->>'suppressed')::int), 0)::int as n from svc_audit where action = 'access.denied' and actor_kind = 'anonymous'`,
    )).n;
    const before = await count(anonymousDenied);
    const suppressedBefore = await suppressedSum();
    const started = Date.now();
    for (let start = 0; start < 1000; start += 50) {
      const statuses = await Promise.all(Array.from({ length: 50 }, (_, n) =>
        fetch(`${service.url}/jobs/stats`, { headers: { 'x-forwarded-for': `198.51.${(start + n) >> 8}.${(start + n) & 255}` } })
          .then((response) => response.status)));
      expect(statuses.every((status) => status === 401)).toBe(true);
    }
    const elapsedSecs = (Date.now() - started) / 1000;
    const written = (await count(anonymousDenied)) - before;
    expect(written).toBeGreaterThan(0);
    expect(written).toBeLessThanOrEqual(ANONYMOUS_BURST + Math.ceil(ANONYMOUS_PER_SEC * elapsedSecs) + 1);
    expect(written).toBeLessThan(1000);

    // Written entries carry the count of those that were not (the last count once the budget refills): none is lost silently.
    const accounted = await waitFor(async () => {
      await fetch(`${service.url}/jobs/stats`);
      const total = (await count(anonymousDenied)) - before + (await suppressedSum()) - suppressedBefore;
      return total >= 1001 ? total : null;
    });
    expect(accounted).toBeLessThanOrEqual(1000 + 100);
  });
});
