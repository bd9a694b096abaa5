/**
 * The README's first command on a fresh machine: `svc-gen dev` on the CRM
 * fixture with no DATABASE_URL runs on embedded Postgres (PGlite), rebuilds
 * and restarts on a schema change, and keeps the old server on a schema error.
 */
import { appendFileSync, copyFileSync, existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/service.ts';
import { freePort, spawnCli, waitForServer } from '../helpers/cli.ts';

async function modelNames(base: string): Promise<string[]> {
  const meta = (await (await fetch(`${base}/meta/schema`)).json()) as any;
  return meta.models.map((m: { name: string }) => m.name);
}

async function until(check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check().catch(() => false)) return;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error('condition not met in time');
}

it('runs the CRM demo on embedded Postgres and follows schema edits', { timeout: 120_000 }, async () => {
  const work = mkdtempSync(join(tmpdir(), 'svc-dev-'));
  const schema = join(work, 'schema.ts');
  copyFileSync(join(REPO_ROOT, 'fixtures', 'crm', 'schema.ts'), schema);
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const dev = spawnCli(['dev', '--schema', schema], { cwd: work, env: { PORT: String(port) } });
  try {
    await waitForServer(dev, `${base}/ready`, 60_000);
    expect(existsSync(join(work, '.svc', 'pgdata'))).toBe(true);
    expect(await modelNames(base)).not.toContain('Tag');

    appendFileSync(schema, '\nexport interface Tag {\n  id: string;\n  label: string;\n}\n');
    await until(async () => (await modelNames(base)).includes('Tag'), 60_000);
    expect((await fetch(`${base}/ready`)).status).toBe(200);

    appendFileSync(schema, '\nexport interface Broken {\n  id: string;\n  thing: NoSuchType;\n}\n');
    await until(async () => dev.output().includes('NoSuchType'), 30_000);
    expect(dev.output()).toMatch(/schema\.ts:\d+: /);
    expect(dev.output()).toContain('the running server is kept');
    expect((await fetch(`${base}/health`)).status).toBe(200);
    expect(await modelNames(base)).toContain('Tag');
  } finally {
    dev.child.kill('SIGTERM');
    await dev.exited();
  }
  expect(existsSync(join(work, '.svc', 'pgdata.lock'))).toBe(false);
});
