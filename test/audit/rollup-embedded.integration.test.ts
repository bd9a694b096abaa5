/**
 * The audit statistics' rollup fold on the embedded database (PGlite, one
 * connection, `svc-gen dev` without DATABASE_URL): the service starts with
 * its periodic fold on, the fold reaches the last entry while requests and
 * notifications use the same connection, and /audit/statistics from the
 * rollups answers what counting the log answers.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { TokenSigner } from '../../runtime/auth/index.ts';
import { statistics } from '../../runtime/audit/query.ts';
import { startService, type RunningService } from '../../runtime/service/index.ts';
import { TenantScope } from '../../runtime/tenancy/index.ts';
import { buildFixture, loadDefinition, mintToken, TEST_JWT_SECRET } from '../helpers/service.ts';
import { post, RECORDS_FIXTURE } from '../records/helpers.ts';
import { until } from '../feed/helpers.ts';

const DAY = 86_400_000;
let service: RunningService;
let token: string;

beforeAll(async () => {
  const dir = await buildFixture(RECORDS_FIXTURE);
  const env = { JWT_SECRET: TEST_JWT_SECRET, SVC_LOG_LEVEL: 'warn', RATE_LIMIT_RPS: '1000000', SVC_ARGON2_MEMORY_KIB: '1024', SVC_ARGON2_TIME_COST: '1' };
  const embeddedDir = join(mkdtempSync(join(tmpdir(), 'svc-audit-embedded-')), 'pgdata');
  service = await startService(await loadDefinition(dir), { env, port: 0, host: '127.0.0.1', embeddedDir, log: pino({ level: 'silent' }) });
  expect(service.ctx.dbKind).toBe('embedded');
  token = await mintToken(service.ctx.db, new TokenSigner(TEST_JWT_SECRET, 3600), { role: 'Manager' });
}, 120_000);
afterAll(async () => {
  await service?.stop();
});

const foldedTo = async () => BigInt((await service.ctx.db.one('select folded_to::text as f from svc_audit_rollup_state')).f);
const lastId = async () => BigInt((await service.ctx.db.one('select coalesce(max(id), 0)::text as m from svc_audit')).m);

it('the periodic fold runs and the statistics from the rollups equal the direct count', { timeout: 90_000 }, async () => {
  // Entries of the global scope over the last 10 days, then records written through the API (their audit entries
  // and realtime notifications share the connection with the fold).
  await service.ctx.db.none(`
    insert into svc_audit (occurred_at, tenant_id, actor_kind, actor_id, action, entity_type, entity_id, outcome)
    select now() - make_interval(secs => i * 864.0), '', 'user', 'embedded-actor-' || (i % 5),
           (array['record.create', 'record.update', 'auth.login'])[1 + i % 3], 'Company', 'e' || i,
           case when i % 7 = 0 then 'denied' else 'success' end
      from generate_series(1, 1000) i`);
  const created = await Promise.all(Array.from({ length: 10 }, (_, i) => post(service.url, {
    query: 'mutation($d: JSON!) { create(model: "Company", data: $d) }', variables: { d: { name: `Audited ${i}` } },
  }, { authorization: `Bearer ${token}` })));
  expect(created.every((r) => r.data?.create?.id)).toBe(true);
  const last = await lastId();
  // The service's own fold (every ROLLUP_MS): nothing here calls it.
  await until(async () => (await foldedTo()) >= last, 'the periodic fold to reach the last entry', 60_000);
  expect((await service.ctx.db.one(`select count(*)::int as n from svc_audit_daily where tenant_id = ''`)).n).toBeGreaterThan(10);

  const now = Date.now();
  for (const [from, to] of [[now - 10 * DAY, now + 1000], [now - 5 * DAY + 3_600_000, now - DAY], [Math.floor(now / DAY) * DAY - 3 * DAY, now + 1000]]) {
    const range = { from: new Date(from), to: new Date(to) };
    const res = await fetch(`${service.url}/audit/statistics?from=${range.from.toISOString()}&to=${range.to.toISOString()}`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(res.status).toBe(200);
    const direct = await statistics(service.ctx.db, TenantScope.of(null), range);
    expect(direct.total).toBeGreaterThan(0);
    expect(await res.json()).toEqual(direct);
  }
});
