/**
 * The audit retention sweep's deletions in /metrics (ADR 022): entries past
 * SVC_AUDIT_RETAIN_DAYS, seeded before the service starts, are deleted by the
 * sweep that runs at start and counted in svc_audit_deleted_total, even when
 * that sweep ends before the metrics capability starts listening.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, queryOnce, type TestDatabase } from '../helpers/db.ts';
import type { TestService } from '../helpers/service.ts';
import { waitFor } from '../jobs/helpers.ts';
import { startAuditService } from './helpers.ts';

const OLD = 25;
const RECENT = 3;

let database: TestDatabase;
let service: TestService;

beforeAll(async () => {
  database = await createTestDatabase('svc_aud', { fixture: 'crm' });
  await queryOnce(database.url, `
    insert into svc_audit (id, occurred_at, tenant_id, actor_kind, action, outcome)
    select svc_audit_next_id(), now() - case when i <= $1 then interval '40 days' else interval '1 day' end, 'ret', 'system', 'record.create', 'success'
      from generate_series(1, $2::int) i`, [OLD, OLD + RECENT]);
  service = await startAuditService({ database, env: { SVC_AUDIT_RETAIN_DAYS: '30' } });
}, 60_000);
afterAll(async () => {
  await service?.close();
  await database?.drop();
});

describe('audit retention in /metrics', () => {
  it('counts the entries the sweep deleted, and keeps the recent ones', async () => {
    const deleted = await waitFor(async () => {
      const text = await (await fetch(`${service.url}/metrics`)).text();
      const match = /^svc_audit_deleted_total (\d+)$/m.exec(text);
      return match && Number(match[1]) > 0 ? Number(match[1]) : null;
    });
    expect(deleted).toBe(OLD);
    const left = await service.ctx.db.one<{ n: number }>(`select count(*)::int as n from svc_audit where tenant_id = 'ret'`);
    expect(left.n).toBe(RECENT);
  });
});
