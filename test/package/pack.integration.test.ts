/**
 * The published package, as an operator gets it: `npm pack` the repository,
 * and in a project outside it that depends on the tarball, run the steps of
 * deploy/Dockerfile (deploy/build.sh: a build stage that generates the CRM
 * fixture, a runtime stage with production dependencies only), start the
 * service as the image does on a fresh database, check it with the image's
 * HEALTHCHECK script, and run a worker written as a plain `.mjs` file (no
 * TypeScript loader) that completes a job enqueued over HTTP. The project is
 * bundled for start (`svc-gen compile`, as the image does); one that cannot
 * be starts through tsx.
 * Slow (two npm installs): one test.
 */
import { execFile } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { childEnv, freePort, waitForServer, type Spawned } from '../helpers/cli.ts';
import { REPO_ROOT, TEST_JWT_SECRET } from '../helpers/service.ts';
import { spawn } from 'node:child_process';

const run = promisify(execFile);
const ADMIN = { email: 'ops@example.test', password: 'Operat0r-passw0rd!' };

/** Runs a command in `cwd`; on failure the error carries its output. */
async function sh(cwd: string, command: string, args: string[], env: NodeJS.ProcessEnv = childEnv()): Promise<string> {
  try {
    const { stdout } = await run(command, args, { cwd, env, maxBuffer: 64 * 1024 * 1024 });
    return stdout;
  } catch (error) {
    const e = error as { stdout?: string; stderr?: string; message: string };
    throw new Error(`${command} ${args.join(' ')} failed: ${e.message}\n${e.stdout ?? ''}\n${e.stderr ?? ''}`);
  }
}

function spawnIn(cwd: string, command: string, args: string[], env: NodeJS.ProcessEnv): Spawned {
  const child = spawn(command, args, { cwd, env });
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  const exit = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, output: () => output, exited: () => exit };
}

describe('the packed package', { timeout: 600_000 }, () => {
  let work: string;
  let database: TestDatabase;
  const children: Spawned[] = [];

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), 'svc-pack-'));
    database = await createTestDatabase();
  });
  afterAll(async () => {
    for (const spawned of children) {
      if (spawned.child.exitCode === null) {
        spawned.child.kill('SIGTERM');
        await spawned.exited();
      }
    }
    await database?.drop();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it('installs from its tarball and builds, serves and works a job on plain node', async () => {
    // 1. npm pack (its `prepare` compiles dist/).
    const packed = JSON.parse(await sh(REPO_ROOT, 'npm', ['pack', '--json', '--pack-destination', work])) as Array<{
      filename: string; files: Array<{ path: string }>;
    }>;
    const files = packed[0].files.map((file) => file.path);
    expect(files).toContain('dist/worker/index.js');
    expect(files).toContain('dist/worker/index.d.ts');
    expect(files).toContain('dist/runtime/jobs/migrations/0001_jobs.sql');
    expect(files.filter((path) => path.endsWith('.ts') && !path.endsWith('.d.ts'))).toEqual([]);
    expect(files).toContain('deploy/build.sh');

    // 2. A project outside the repository depends on the tarball (with a lock file, as `npm ci` needs).
    const source = join(work, 'project');
    mkdirSync(source);
    cpSync(join(REPO_ROOT, 'fixtures', 'crm', 'schema.ts'), join(source, 'schema.ts'));
    cpSync(join(REPO_ROOT, 'deploy'), join(source, 'deploy'), { recursive: true });
    writeFileSync(join(source, 'package.json'), JSON.stringify({
      name: 'pack-test', private: true, type: 'module',
      dependencies: { 'svc-gen': `file:${join(work, packed[0].filename)}` },
    }, null, 2));
    // At npm's default log level: no dependency of the package refuses this Node (EBADENGINE is a warning).
    const installed = await sh(source, 'sh', ['-c', 'npm install --package-lock-only --no-audit --no-fund 2>&1']);
    expect(installed).not.toContain('EBADENGINE');

    // 3. and 4. The Dockerfile's two stages, installed side by side as a multi-stage
    // build does: the build stage (`sh deploy/build.sh build`: npm ci, svc-gen build)
    // and the runtime stage (production dependencies only), then the generated service.
    const build = join(work, 'build');
    cpSync(source, build, { recursive: true });
    const project = join(work, 'runtime');
    mkdirSync(project);
    for (const name of ['package.json', 'package-lock.json', 'deploy']) cpSync(join(source, name), join(project, name), { recursive: true });
    await Promise.all([
      sh(build, 'sh', ['deploy/build.sh', 'build', 'schema.ts', 'service']),
      sh(project, 'sh', ['deploy/build.sh', 'runtime']),
    ]);
    const generated = JSON.parse(readFileSync(join(build, 'service', 'package.json'), 'utf8'));
    expect(generated.dependencies['svc-gen']).toMatch(/^\^\d+\.\d+\.\d+$/);
    // It type-checks against the shipped declarations (no sources in the tarball).
    await sh(build, join(REPO_ROOT, 'node_modules', '.bin', 'tsc'), ['--noEmit', '-p', 'service']);
    cpSync(join(build, 'service'), join(project, 'service'), { recursive: true });
    const bin = join(project, 'node_modules', '.bin', 'svc-gen');
    // The image bundles the project for start while its folder is still writable (cli/bundle.ts).
    expect(await sh(project, bin, ['compile', 'service'])).toBe('wrote service/.svc/start/server.mjs\n');
    expect(await sh(project, bin, ['compile', 'service'])).toBe('up to date: service/.svc/start/server.mjs\n');

    // 5. The three entry points import under plain node, and the CLI is the compiled one.
    const probe = await sh(project, process.execPath, ['--input-type=module', '-e', `
      const runtime = await import('svc-gen/runtime');
      const worker = await import('svc-gen/worker');
      const schema = await import('svc-gen/schema');
      console.log(JSON.stringify([typeof runtime.defineService, typeof worker.createWorker, typeof schema.defineSchema]));
    `]);
    expect(JSON.parse(probe)).toEqual(['function', 'function', 'function']);
    expect((await sh(project, bin, ['--version'])).trim()).toBe(JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')).version);

    // 6. Start it as the image's CMD does, on a fresh database; the HEALTHCHECK script agrees it is ready.
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const server = spawnIn(project, 'node_modules/.bin/svc-gen', ['start', 'service'], childEnv({
      NODE_ENV: 'production', SVC_ENV: 'production', HOST: '0.0.0.0', PORT: String(port),
      DATABASE_URL: database.url, JWT_SECRET: TEST_JWT_SECRET,
      ADMIN_EMAIL: ADMIN.email, ADMIN_PASSWORD: ADMIN.password, RATE_LIMIT_RPS: '100000',
    }));
    children.push(server);
    await waitForServer(server, `${url}/ready`, 60_000);
    await sh(project, process.execPath, ['deploy/healthcheck.mjs'], childEnv({ PORT: String(port) }));
    expect(server.output()).not.toContain('through tsx');

    const post = async (path: string, token: string | null, body: unknown) => {
      const response = await fetch(url + path, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
        body: JSON.stringify(body),
      });
      return { status: response.status, body: (await response.json()) as Record<string, any> };
    };
    const login = await post('/auth/login', null, ADMIN);
    expect(login.status).toBe(200);
    const admin = login.body.token as string;
    const minted = await post('/jobs/workers', admin, { name: 'pack-worker', queues: ['mail'] });
    expect(minted.status).toBe(201);
    const enqueued = await post('/jobs', admin, { queue: 'mail', kind: 'welcome', payload: { to: 'a@b.test' } });
    expect(enqueued.status).toBe(201);

    // 7. A plain .mjs worker completes it, then stops.
    writeFileSync(join(project, 'worker.mjs'), `
      import { createWorker } from 'svc-gen/worker';
      const worker = createWorker({
        baseUrl: process.env.BASE_URL, token: process.env.WORKER_TOKEN, queues: ['mail'],
        pollIntervalMs: 50, handleSignals: false,
        handler: async (job) => {
          await job.progress(50, 'half way');
          setImmediate(() => void worker.stop());
          return { delivered: job.payload.to };
        },
      });
      await worker.start();
      console.log(JSON.stringify(worker.stats));
    `);
    const stats = await sh(project, process.execPath, ['worker.mjs'], childEnv({ BASE_URL: url, WORKER_TOKEN: minted.body.token }));
    expect(JSON.parse(stats.trim())).toMatchObject({ completed: 1, failed: 0 });

    const job = await fetch(`${url}/jobs/${enqueued.body.id}`, { headers: { authorization: `Bearer ${admin}` } });
    expect(await job.json()).toMatchObject({ status: 'succeeded', result: { delivered: 'a@b.test' } });

    // 8. A project that cannot be bundled (here: its .svc cannot be a folder) starts through tsx, and says why.
    const other = join(project, 'service-unbundled');
    cpSync(join(build, 'service'), other, { recursive: true });
    writeFileSync(join(other, '.svc'), '');
    const otherPort = await freePort();
    const fallback = spawnIn(project, 'node_modules/.bin/svc-gen', ['start', 'service-unbundled'], childEnv({
      NODE_ENV: 'production', SVC_ENV: 'production', HOST: '127.0.0.1', PORT: String(otherPort),
      DATABASE_URL: database.url, JWT_SECRET: TEST_JWT_SECRET,
    }));
    children.push(fallback);
    await waitForServer(fallback, `http://127.0.0.1:${otherPort}/ready`, 60_000);
    expect(fallback.output()).toMatch(/"reason":"cannot write service-unbundled\/\.svc\/start: E(EXIST|NOTDIR)".*project loaded through tsx/);
  });
});
