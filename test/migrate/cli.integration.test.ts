/** `svc-gen migrate DIR [--plan]`: the lock report before applying, and a held-back contract file said with exit 0. */
import { dirname } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, queryOnce, type TestDatabase } from '../helpers/db.ts';
import { runCli } from '../helpers/cli.ts';
import { modelTable, schemaSet } from './helpers.ts';

let database: TestDatabase;

beforeAll(async () => {
  database = await createTestDatabase('svc_t_migrate_cli');
});
afterAll(async () => {
  await database?.drop();
});

describe('svc-gen migrate', { timeout: 90_000 }, () => {
  it('--plan prints each pending step with its lock and applies nothing; a held-back contract file is said, exit 0', async () => {
    const set = schemaSet({ '0001_lead.sql': modelTable('lead', 1_000) });
    const project = dirname(set.dir);
    const env = { DATABASE_URL: database.url };
    expect((await runCli(['migrate', project], { env })).code).toBe(0);
    set.add('0002_index.sql', '-- svc-gen migration 0002: index Lead.email\n-- step 1 online: index Lead.email\ncreate index concurrently if not exists "lead_email_idx" on "lead" ("email");\n');
    const plan = await runCli(['migrate', '--plan', project], { env });
    expect(plan.code).toBe(0);
    expect(plan.stdout).toBe([
      'schema/0002_index.sql step 1 online: index Lead.email',
      '  lock: SHARE UPDATE EXCLUSIVE on lead (for the whole statement; blocks no reads or writes)',
      '  rewrites table: no; scans table: yes; online: yes; rows: ~1,000',
      '',
    ].join('\n'));
    expect(await queryOnce(database.url, `select 1 from pg_class where relname = 'lead_email_idx'`)).toEqual([]);

    await queryOnce(database.url, `insert into svc_realtime_instances (instance_id, schema_migration, ttl_ms) values ('old', '0001_lead.sql', 60000)`);
    set.add('0003_contract.sql', '-- svc-gen migration 0003\n-- contract of 0002: drop Lead.kind\nalter table "lead" drop column "kind";\n');
    const held = await runCli(['migrate', project], { env });
    expect(held.code).toBe(0);
    expect(held.stdout).toMatch(/^applied schema\/0002_index.sql\nschema\/0003_contract.sql is a contract migration, held back: 1 live instance\(s\) still run an older schema: old /);
  });
});
