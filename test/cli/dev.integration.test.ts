/**
 * The README's first command on a fresh machine: `svc-gen dev` on the CRM
 * fixture with no DATABASE_URL runs on embedded Postgres (PGlite), prints a
 * banner with a development admin that can log in, switches to each rebuilt
 * schema without refusing a request, allows a destructive edit of its own
 * embedded database, keeps the old server on a schema error, and stops when
 * the wrapper that started it (npx runs it under `sh -c`) is stopped.
 */
import { spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, readdirSync, writeFileSync, appendFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/service.ts';
import { BIN, childEnv, freePort, waitForServer, type Spawned } from '../helpers/cli.ts';

interface MetaModel {
  readonly name: string;
  readonly fields: readonly { readonly name: string }[];
}

async function meta(base: string): Promise<MetaModel[]> {
  return ((await (await fetch(`${base}/meta/schema`)).json()) as { models: MetaModel[] }).models;
}

/** Polls an external process's observable state until `check` passes or the deadline. */
async function until(check: () => Promise<boolean> | boolean, timeoutMs: number, what: string, dev: Spawned): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await Promise.resolve().then(check).catch(() => false)) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${what}: not within ${timeoutMs} ms\n--- output ---\n${dev.output()}`);
}

/** `sh -c 'node svc-gen dev ...; true'`: a wrapper that does not pass signals on, like npx's. */
function spawnWrapped(args: string[], cwd: string, env: Record<string, string>): Spawned {
  const quoted = [process.execPath, BIN, ...args].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
  const child = spawn('sh', ['-c', `${quoted}; true`], { cwd, env: childEnv(env) });
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  const exit = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, output: () => output, exited: () => exit };
}

/** The svc-gen process under the wrapper. */
function childOf(parent: number): number {
  for (const entry of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      if (Number(stat.split(') ')[1].split(' ')[1]) === parent) return Number(entry);
    } catch {
      // exited meanwhile
    }
  }
  throw new Error(`no child of ${parent}`);
}

const alive = (pid: number) => existsSync(`/proc/${pid}`) && !readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].startsWith('Z');

/** Clients in a tight loop until stopped; every answer that is not a 200 counts as refused. */
function hammer(url: string, clients = 4) {
  let running = true;
  let sent = 0;
  const refused: string[] = [];
  const loops = Array.from({ length: clients }, async () => {
    while (running) {
      sent += 1;
      try {
        const response = await fetch(url);
        await response.arrayBuffer();
        if (response.status !== 200) refused.push(`status ${response.status}`);
      } catch (error) {
        refused.push(String((error as Error).cause ?? error));
      }
    }
  });
  return async () => {
    running = false;
    await Promise.all(loops);
    return { sent, refused };
  };
}

it('runs the CRM demo on embedded Postgres and follows schema edits without refusing a request', { timeout: 180_000 }, async () => {
  const work = mkdtempSync(join(tmpdir(), 'svc-dev-'));
  const schema = join(work, 'schema.ts');
  copyFileSync(join(REPO_ROOT, 'fixtures', 'crm', 'schema.ts'), schema);
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const dev = spawnWrapped(['dev', '--schema', schema], work, { PORT: String(port) });
  const pid = await (async () => {
    await waitForServer(dev, `${base}/ready`, 90_000);
    return childOf(dev.child.pid!);
  })();
  try {
    expect(existsSync(join(work, '.svc', 'pgdata'))).toBe(true);
    await until(() => dev.output().includes('watching schema.ts'), 60_000, 'the banner and the watch', dev);

    // The banner: where things are, and a development admin that can log in.
    const out = dev.output();
    expect(out).toContain(`GraphQL    http://localhost:${port}/graphql`);
    expect(out).toContain(`REST docs  http://localhost:${port}/docs`);
    expect(out).toContain('embedded Postgres (PGlite) in .svc/pgdata');
    const login = /Log in\s+(\S+@\S+) \/ (\S+)/.exec(out);
    expect(login).not.toBeNull();
    const loggedIn = await fetch(`${base}/auth/login`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: login![1], password: login![2] }),
    });
    expect(loggedIn.status).toBe(200);
    expect(((await loggedIn.json()) as { user: { role: string } }).user.role.toLowerCase()).toBe('admin');
    // Logs are for a person: no JSON records.
    expect(out).toMatch(/\[\d\d:\d\d:\d\d\.\d{3}\] (INFO|WARN): /);
    expect(out).not.toContain('{"level"');

    // A public-read model that SVC_PUBLIC_READ_MODELS does not list: the specification's 404, and a hint in the log.
    const publicRead = await fetch(`${base}/public/records/Product`);
    expect(publicRead.status).toBe(404);
    await until(() => dev.output().includes('SVC_PUBLIC_READ_MODELS does not list it'), 10_000, 'the public read hint', dev);

    // A save: the new schema is served, and no request is refused meanwhile.
    expect((await meta(base)).map((m) => m.name)).not.toContain('Tag');
    const stop = hammer(`${base}/health`);
    appendFileSync(schema, '\nexport interface Tag {\n  id: string;\n  label: string;\n  color?: string;\n}\n');
    await until(async () => (await meta(base)).some((m) => m.name === 'Tag'), 60_000, 'the Tag model', dev);
    const { sent, refused } = await stop();
    expect(refused).toEqual([]);
    expect(sent).toBeGreaterThan(10);
    expect(dev.output()).toContain('serving the rebuilt schema');

    // Removing a field added a minute ago: destructive, allowed on the embedded development database, said clearly.
    writeFileSync(schema, readFileSync(schema, 'utf8').replace('  color?: string;\n', ''));
    await until(async () => !(await meta(base)).find((m) => m.name === 'Tag')!.fields.some((f) => f.name === 'color'), 60_000, 'Tag without color', dev);
    expect(dev.output()).toContain('destructive change allowed');
    expect(dev.output()).toMatch(/dropping Tag\.color deletes the column/);
    // It is allowed, and the log says so: not "refused" first.
    expect(dev.output()).not.toContain('destructive change refused');
    expect(dev.output()).toMatch(/destructive change allowed: schema\.ts:\d+: dropping Tag\.color deletes the column/);

    appendFileSync(schema, '\nexport interface Broken {\n  id: string;\n  thing: NoSuchType;\n}\n');
    await until(() => dev.output().includes('NoSuchType'), 30_000, 'the schema error', dev);
    expect(dev.output()).toMatch(/schema\.ts:\d+: /);
    await until(() => dev.output().includes('the running server is kept'), 10_000, 'the kept server', dev);
    expect((await fetch(`${base}/health`)).status).toBe(200);
    expect((await meta(base)).map((m) => m.name)).toContain('Tag');
  } finally {
    // The wrapper dies of SIGTERM without passing it on (as sh under npx does): svc-gen stops by itself.
    dev.child.kill('SIGTERM');
    await dev.exited();
  }
  await until(() => !alive(pid), 15_000, 'svc-gen to stop after its wrapper', dev);
  expect(existsSync(join(work, '.svc', 'pgdata.lock'))).toBe(false);
});
