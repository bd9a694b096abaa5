/**
 * The README's path from zero to a created record, run as written: the
 * fenced blocks marked `readme-start` (the command that starts the demo),
 * `sh readme-test` (shell lines run with bash) and `ts readme-test FILE`
 * (saved as FILE and run with `npx tsx FILE`) are extracted from README.md,
 * so that this test breaks when the README drifts from what works.
 *
 * What the test changes, and why: it runs in a scratch folder laid out like the
 * repository root (package.json, fixtures/crm/schema.ts, node_modules linked to
 * this checkout's, as after `npm ci`), so that the demo's `.svc/` is not this
 * checkout's; `npm ci` itself is not rerun; `npx svc-gen` runs this checkout's
 * bin (npx finds it the same way at the real root); and port 3000 becomes a free
 * port. Nothing else of the README's text is touched.
 */
import { execFile } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/service.ts';
import { BIN, childEnv, freePort, spawnCli, waitForServer, type Spawned } from '../helpers/cli.ts';

const run = promisify(execFile);
const README = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');

interface Block {
  readonly lang: string;
  readonly marks: readonly string[];
  readonly body: string;
}

/** Fenced blocks whose info string carries a `readme-*` mark. */
function blocks(): Block[] {
  const out: Block[] = [];
  for (const match of README.matchAll(/^```(\S+)([^\n]*)\n([\s\S]*?)^```$/gm)) {
    const marks = match[2].trim().split(/\s+/).filter(Boolean);
    if (marks.some((m) => m.startsWith('readme-'))) out.push({ lang: match[1], marks, body: match[3] });
  }
  return out;
}

const marked = (mark: string) => blocks().filter((b) => b.marks[0] === mark);

let work: string;
let port: number;
let dev: Spawned;
const local = (text: string) => text.replaceAll('localhost:3000', `127.0.0.1:${port}`);

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
    const { stdout } = await run('bash', ['-euo', 'pipefail', '-c', local(shell.body)], { cwd: work, env: childEnv() });
    const answer = JSON.parse(stdout) as { data: { create: { id: string; name: string; employees: number } } };
    expect(answer.data.create).toMatchObject({ id: expect.stringMatching(/^[0-9A-Z]{26}$/), name: 'Acme', employees: 12 });
    // The README's `# ->` line shows the same shape.
    expect(shell.body).toContain('# -> {"data":{"create":{"id":"01J...","name":"Acme","employees":12');
  });

  it('creates and reads records with the typed client example, as written', async () => {
    const [example] = marked('readme-test').filter((b) => b.lang === 'ts');
    const file = example.marks[1];
    expect(README).toContain(`\`npx tsx ${file}\``);
    writeFileSync(join(work, file), local(example.body));
    const { stdout } = await run('npx', ['tsx', file], { cwd: work, env: childEnv() });
    expect(stdout).toMatch(/^[0-9A-Z]{26} \[ 'Globex: 0 contacts' \]\n$/);
  });
});
