/**
 * The runner and a running service (ADR 019): a backfill's progress reaches
 * an Admin on the realtime channel `migrations` (a real WebSocket) and GET
 * /meta/migrations; a contract migration held back at start applies while the
 * service runs, once the instance of the older build is gone.
 */
import { mkdtempSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '../helpers/db.ts';
import { privateBuild, startTestService, type TestService } from '../helpers/service.ts';
import { RtClient, type Frame } from '../realtime/client.ts';
import { migrate } from '../../runtime/db/migrate/index.ts';
import type { Db } from '../../runtime/db/types.ts';
import { modelTable, openDb, recordingLog } from './helpers.ts';

const WAIT_MS = 60_000;

const get = async (service: TestService, token: string, path: string) => {
  const reply = await fetch(`${service.url}${path}`, { headers: { authorization: `Bearer ${token}` } });
  return { status: reply.status, body: await reply.json() as Record<string, any> };
};

describe('backfill progress on the realtime channel `migrations`', () => {
  let service: TestService;
  let db: Db;
  beforeAll(async () => {
    service = await startTestService();
    db = openDb(service.database.url, 3);
  });
  afterAll(async () => {
    await db?.$pool.end();
    await service?.close();
  });

  it('is for Admins without a tenant only, reserved (no other migrations... channel) and never published by a client', async () => {
    for (const principal of [{ role: 'Manager' as const, userId: 'progress-manager' }, { role: 'Admin' as const, userId: 'progress-tenant-admin', tenantId: 't1' }]) {
      const client = await RtClient.connect(service.url, await service.token(principal));
      client.send({ op: 'subscribe', channel: 'migrations' });
      expect(await client.next((f) => f.op === 'error')).toMatchObject({ code: 'forbidden', channel: 'migrations' });
      client.close();
    }
    const admin = await RtClient.connect(service.url, await service.token({ role: 'Admin', userId: 'progress-publisher' }));
    await admin.subscribe('migrations');
    admin.send({ op: 'publish', channel: 'migrations', data: { type: 'applied', file: 'fake' } });
    expect(await admin.next((f) => f.op === 'error')).toMatchObject({ code: 'forbidden', channel: 'migrations' });
    admin.send({ op: 'subscribe', channel: 'migrations:other' });
    expect(await admin.next((f) => f.op === 'error')).toMatchObject({ code: 'forbidden', channel: 'migrations:other' });
    admin.close();
  });

  it('sends each batch, then the vacuum and the end, ending at 100 %; GET /meta/migrations shows the step meanwhile', async () => {
    const admin = await service.token({ role: 'Admin', userId: 'progress-admin' });
    const client = await RtClient.connect(service.url, admin);
    await client.subscribe('migrations');
    // Another runner (a starting instance, `svc-gen migrate`) on the service's database, under its own scope.
    const dir = join(mkdtempSync(join(tmpdir(), 'svc-progress-')), 'migrations');
    mkdirSync(dir);
    writeFileSync(join(dir, '0001_progress.sql'), modelTable('progress', 20_000));
    const set = { scope: 'test:progress', dir };
    await migrate(db, [set]);
    writeFileSync(join(dir, '0002_fill.sql'), '-- svc-gen migration 0002: Progress.kind\n-- step 1 backfill "progress": fill Progress.kind\n'
      + 'update "progress" set "kind" = \'lead\' where "kind" is null;\n');
    // A client holding row 15,000 stops the backfill at that batch: the route is read while it is surely running.
    const holder = openDb(service.database.url, 1);
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let held!: () => void;
    const holding = new Promise<void>((resolve) => (held = resolve));
    const holderDone = holder.tx(async (tx) => {
      await tx.any(`select 1 from "progress" where "id" = lpad(to_hex(15000), 26, '0') for update`);
      held();
      await released;
    });
    await holding;
    const log = recordingLog();
    const migrated = migrate(db, [set], { log, settings: { batchRows: 2_000, batchPauseMs: 0, lockTimeoutMs: 50 } });
    await log.waitFor(/lock not granted/);
    const during = await get(service, admin, '/meta/migrations');
    expect(during.status).toBe(200);
    const running = during.body.running.find((r: Frame) => r.file === 'test:progress/0002_fill.sql');
    expect(running).toMatchObject({ step: 1, kind: 'backfill', description: 'fill Progress.kind', live: true,
      progress: { type: 'backfill', table: 'progress', phase: 'backfill', estimatedTotal: 20_000 } });
    expect(running.progress.rowsDone).toBeGreaterThan(0);
    expect(running.progress.rowsDone).toBeLessThan(15_000);
    expect(running.progress.percent).toBe(Math.floor(running.progress.rowsDone / 200));
    release();
    await holderDone;
    expect(await migrated).toEqual(['test:progress/0002_fill.sql']);

    const frames: Frame[] = [];
    for (;;) {
      const frame = await client.next((f) => f.op === 'message' && f.channel === 'migrations' && f.data.type === 'backfill', WAIT_MS);
      expect(frame.from).toBeNull();
      frames.push(frame.data);
      if (frame.data.phase === 'done') break;
    }
    const batches = frames.filter((f) => f.phase === 'backfill');
    expect(batches.length).toBeGreaterThanOrEqual(10); // 20,000 rows in batches of at most 2,000: one frame per committed batch
    for (const [i, f] of batches.entries()) {
      expect(f).toMatchObject({ file: 'test:progress/0002_fill.sql', step: 1, table: 'progress', estimatedTotal: 20_000 });
      if (i > 0) {
        // The last batch may be empty (the one before ended on the last row): it says 100 % at the same count.
        if (i < batches.length - 1) expect(f.rowsDone).toBeGreaterThan(batches[i - 1].rowsDone);
        else expect(f.rowsDone).toBeGreaterThanOrEqual(batches[i - 1].rowsDone);
        expect(f.percent).toBeGreaterThanOrEqual(batches[i - 1].percent);
      }
      expect(f.percent).toBe(i === batches.length - 1 ? 100 : Math.min(99, Math.floor(f.rowsDone / 200)));
    }
    expect(frames.slice(-2).map((f) => [f.phase, f.percent])).toEqual([['vacuum', 100], ['done', 100]]);
    expect(frames.at(-1)).toMatchObject({ rowsDone: 20_000, rowsUpdated: 20_000 });
    expect(await client.next((f) => f.op === 'message' && f.data.type === 'applied' && f.data.file === 'test:progress/0002_fill.sql', WAIT_MS))
      .toMatchObject({ channel: 'migrations', data: { contract: false, at: expect.any(String) } });
    const after = await get(service, admin, '/meta/migrations');
    expect(after.body.running.filter((r: Frame) => r.file.startsWith('test:progress/'))).toEqual([]);
    client.close();
    await holder.$pool.end();
  });
});

describe('a contract migration held back at start', () => {
  it('applies while the service runs once the instance of the older build deregisters, and says so on `migrations`', async () => {
    const database = await createTestDatabase('svc_t', { fixture: 'small' });
    const oldDir = await privateBuild('small');
    const newDir = await privateBuild('small');
    const last = Number(readdirSync(join(newDir, 'migrations')).sort().at(-1)!.slice(0, 4));
    const expand = `${String(last + 1).padStart(4, '0')}_probe.sql`;
    const contract = `${String(last + 2).padStart(4, '0')}_probe_contract.sql`;
    writeFileSync(join(newDir, 'migrations', expand), `-- svc-gen migration ${expand.slice(0, 4)}: a probe table (expand)\n`
      + 'create table "contract_probe" ("id" text primary key);\n');
    writeFileSync(join(newDir, 'migrations', contract), `-- svc-gen migration ${contract.slice(0, 4)}: drop the probe table\n`
      + `-- contract of ${expand.slice(0, 4)}: drop the probe table\n-- step 1 transactional: drop the probe table\ndrop table "contract_probe";\n`);
    const old = await startTestService({ dir: oldDir, database });
    let oldRunning = true;
    let current: TestService | null = null;
    try {
      current = await startTestService({ dir: newDir, database, env: { SVC_MIGRATE_CONTRACT_RETRY_SECS: '1' } });
      const admin = await current.token({ role: 'Admin', userId: 'contract-admin' });
      const held = await get(current, admin, '/meta/migrations');
      expect(held.body.heldBack).toEqual([`schema/${contract}`]);
      expect(held.body.applied.map((a: Frame) => a.name)).toContain(expand);
      const client = await RtClient.connect(current.url, admin);
      await client.subscribe('migrations');

      await old.stop(); // deregisters from svc_realtime_instances
      oldRunning = false;
      const applied = await client.next((f) => f.op === 'message' && f.data.type === 'applied', WAIT_MS);
      expect(applied.data).toMatchObject({ file: `schema/${contract}`, contract: true });
      const after = await get(current, admin, '/meta/migrations');
      expect(after.body.heldBack).toEqual([]);
      expect(after.body.pending).toEqual([]);
      expect(after.body.applied.map((a: Frame) => a.name)).toContain(contract);
      const db = openDb(database.url, 1);
      expect((await db.one<{ gone: boolean }>(`select to_regclass('contract_probe') is null as gone`)).gone).toBe(true);
      await db.$pool.end();
      client.close();
    } finally {
      if (oldRunning) await old.stop();
      await current?.stop();
      await database.drop();
    }
  });
});
