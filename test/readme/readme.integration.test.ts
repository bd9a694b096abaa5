/**
 * The README's path from zero to a created record, run as written: the
 * fenced blocks marked `readme-start` (the command that starts the demo),
 * `sh readme-test` (shell lines run with bash), `ts readme-test FILE` (saved
 * as FILE, type-checked with the README's `npx tsc --noEmit -p DIR` and run
 * with `npx tsx FILE`) and `readme-file FILE` (saved as FILE: the client's
 * tsconfig, the realtime script run with node, the worker examples, which are
 * type-checked strictly) are extracted from README.md and docs/workflows.md,
 * so that this test breaks when the docs drift from what works.
 *
 * What the test changes, and why: it runs in a scratch folder laid out like the
 * repository root (package.json, fixtures/crm/schema.ts, node_modules linked to
 * this checkout's, as after `npm ci`), so that the demo's `.svc/` is not this
 * checkout's; `npm ci` itself is not rerun; `npx svc-gen` runs this checkout's
 * bin (npx finds it the same way at the real root); and PORT is a free port,
 * which every example must follow (none may name port 3000 but as PORT's
 * default). Nothing of the README's text is touched.
 */
import { execFile } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/service.ts';
import { BIN, childEnv, freePort, spawnCli, waitForServer, type Spawned } from '../helpers/cli.ts';

const run = promisify(execFile);
const README = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');
const WORKFLOWS = readFileSync(join(REPO_ROOT, 'docs', 'workflows.md'), 'utf8');
const TSC = join(REPO_ROOT, 'node_modules', '.bin', 'tsc');

interface Block {
  readonly lang: string;
  readonly marks: readonly string[];
  readonly body: string;
}

/** Every fenced block with a language; `marks` are the words after it. */
function fenced(text: string): Block[] {
  const out: Block[] = [];
  for (const match of text.matchAll(/^```(\S+)([^\n]*)\n([\s\S]*?)^```$/gm)) {
    out.push({ lang: match[1], marks: match[2].trim().split(/\s+/).filter(Boolean), body: match[3] });
  }
  return out;
}

/** Fenced blocks whose info string carries a `readme-*` mark. */
const blocks = (text = README): Block[] => fenced(text).filter((b) => b.marks.some((m) => m.startsWith('readme-')));

const marked = (mark: string, text = README) => blocks(text).filter((b) => b.marks[0] === mark);
const fileBlock = (name: string, text = README) => {
  const found = marked('readme-file', text).filter((b) => b.marks[1] === name);
  expect(found, `a block marked readme-file ${name}`).toHaveLength(1);
  return found[0].body;
};

let work: string;
let port: number;
let dev: Spawned;
/** The environment of the README's commands: the demo's PORT, as in the terminal that started it. */
const env = (extra: Record<string, string> = {}) => childEnv({ PORT: String(port), ...extra });

function save(path: string, body: string): void {
  mkdirSync(dirname(join(work, path)), { recursive: true });
  writeFileSync(join(work, path), body);
}

/** `tsc --noEmit -p DIR` in the scratch folder; the compiler's output ('' when the files type-check). */
async function typeCheck(dir: string): Promise<string> {
  const result = await run(TSC, ['--noEmit', '-p', dir], { cwd: work, env: env() })
    .catch((error: { stdout: string; stderr: string }) => error);
  return `${result.stdout}${result.stderr}`;
}

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'svc-readme-'));
  copyFileSync(join(REPO_ROOT, 'package.json'), join(work, 'package.json'));
  mkdirSync(join(work, 'fixtures', 'crm'), { recursive: true });
  copyFileSync(join(REPO_ROOT, 'fixtures', 'crm', 'schema.ts'), join(work, 'fixtures', 'crm', 'schema.ts'));
  symlinkSync(join(REPO_ROOT, 'node_modules'), join(work, 'node_modules'), 'dir');
  port = await freePort();

  const [start] = marked('readme-start');
  const command = start.body.split('\n').filter((line) => line.trim() && !line.trim().startsWith('#')).join(' ');
  const steps = command.split('&&').map((s) => s.trim());
  expect(steps[0]).toBe('npm ci');
  const demo = steps[1].split(/\s+/);
  expect(demo.slice(0, 2)).toEqual(['npx', 'svc-gen']);
  dev = spawnCli(demo.slice(2), { cwd: work, env: { PORT: String(port) } });
  await waitForServer(dev, `http://127.0.0.1:${port}/ready`, 90_000);
  // The banner (and the development admin's file) come once the server is up.
  const deadline = Date.now() + 30_000;
  while (!dev.output().includes('Log in') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
}, 150_000);

afterAll(async () => {
  dev?.child.kill('SIGTERM');
  await dev?.exited();
});

describe('README', () => {
  it('marks the blocks this test runs', () => {
    expect(marked('readme-start')).toHaveLength(1);
    expect(marked('readme-test').map((b) => b.lang)).toEqual(['sh', 'ts']);
    expect(BIN).toContain('bin/svc-gen.mjs');
  });

  it('says what the test command needs', () => {
    const testBlock = README.slice(README.indexOf('# 2. Run the tests'), README.indexOf('npm test\n```'));
    for (const need of ['127.0.0.1:5432', '/usr/bin/chromium', 'apt-get install -y chromium', 'apt-get install -y pgbouncer']) {
      expect(testBlock).toContain(need);
    }
  });

  it('prints the login in the start banner', () => {
    expect(dev.output()).toMatch(/Log in\s+dev-admin@example\.com \/ \S+/);
    expect(dev.output()).toContain(`http://localhost:${port}/graphql`);
  });

  it('creates a record with the shell lines, as written', async () => {
    const [shell] = marked('readme-test').filter((b) => b.lang === 'sh');
    const { stdout } = await run('bash', ['-euo', 'pipefail', '-c', shell.body], { cwd: work, env: env() });
    const answer = JSON.parse(stdout) as { data: { create: { id: string; name: string; employees: number } } };
    expect(answer.data.create).toMatchObject({ id: expect.stringMatching(/^[0-9A-Z]{26}$/), name: 'Acme', employees: 12 });
    // The README's `# ->` line shows the same shape.
    expect(shell.body).toContain('# -> {"data":{"create":{"id":"01J...","name":"Acme","employees":12');
  });

  it('creates and reads records with the typed client example, as written', async () => {
    const [example] = marked('readme-test').filter((b) => b.lang === 'ts');
    const file = example.marks[1];
    expect(README).toContain(`\`npx tsx ${file}\``);
    save(file, example.body);
    // The README's type check, with the tsconfig it shows, passes on the example as written.
    const dir = dirname(file);
    expect(README).toContain(`\`npx tsc --noEmit -p ${dir}\``);
    save(join(dir, 'tsconfig.json'), fileBlock(`${dir}/tsconfig.json`));
    expect(await typeCheck(dir)).toBe('');
    const { stdout } = await run('npx', ['tsx', file], { cwd: work, env: env() });
    expect(stdout).toMatch(/^[0-9A-Z]{26} \[ 'Globex: 0 contacts' \]\n$/);
  });

  it('has the type check catch a misspelt field of the typed client example', async () => {
    const [example] = marked('readme-test').filter((b) => b.lang === 'ts');
    expect(example.body).toContain('employees: 300');
    save('misspelt/client.ts', example.body.replace('employees: 300', 'employes: 300'));
    save('misspelt/tsconfig.json', fileBlock('try/tsconfig.json'));
    expect(await typeCheck('misspelt')).toMatch(/client\.ts\(\d+,\d+\): error TS\d+: .*'employes'/);
  });

  it('follows PORT in every example: port 3000 appears only as its default', () => {
    const examples = [...fenced(README), ...fenced(WORKFLOWS)].filter((b) => b.lang !== 'graphql');
    const hardCoded = examples
      .map((b) => b.body.replaceAll('${PORT:-3000}', '').replaceAll('${process.env.PORT ?? 3000}', ''))
      .filter((body) => /\b3000\b/.test(body));
    expect(hardCoded).toEqual([]);
  });

  it('runs the realtime example: a second socket receives the publish', async () => {
    const script = fileBlock('realtime.mjs');
    expect(README).toContain('`TOKEN=$TOKEN node realtime.mjs`');
    save('realtime.mjs', script);
    const { email, password } = JSON.parse(readFileSync(join(work, '.svc', 'dev-admin.json'), 'utf8')) as { email: string; password: string };
    const login = await fetch(`http://127.0.0.1:${port}/auth/login`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email, password }),
    });
    const { token } = (await login.json()) as { token: string };
    const { stdout } = await run('node', ['realtime.mjs'], { cwd: work, env: env({ TOKEN: token }), timeout: 30_000 });
    expect(stdout).toContain("{ op: 'subscribed', channel: 'room:1' }");
    expect(stdout).toMatch(/op: 'message',\s+channel: 'room:1',\s+data: \{ text: 'hi' \},\s+from: '[0-9A-Z]{26}'/);
  });

  it('type-checks the worker examples strictly (README and docs/workflows.md)', async () => {
    const readmeWorker = fileBlock('worker.ts');
    const workflowsWorker = fileBlock('billing-worker.ts', WORKFLOWS);
    save('workers/worker.ts', readmeWorker);
    save('workers/billing-worker.ts', workflowsWorker);
    save('workers/package.json', JSON.stringify({ type: 'module', dependencies: { 'svc-gen': '*' } }));
    save('workers/tsconfig.json', JSON.stringify({
      compilerOptions: {
        strict: true, noEmit: true, target: 'ES2023', lib: ['ES2023'], module: 'NodeNext', types: ['node'], skipLibCheck: true,
        noUnusedLocals: true, noImplicitReturns: true,
        // This checkout's TypeScript source stands for the published package's declarations.
        customConditions: ['svc-gen-source'], allowImportingTsExtensions: true,
      },
      include: ['*.ts'],
    }));
    // svc-gen where a project that installed it has it.
    mkdirSync(join(work, 'workers', 'node_modules'));
    symlinkSync(REPO_ROOT, join(work, 'workers', 'node_modules', 'svc-gen'), 'dir');
    expect(await typeCheck('workers')).toBe('');
  });
});
