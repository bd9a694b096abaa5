import { appendFileSync, copyFileSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/service.ts';
import { runCli } from '../helpers/cli.ts';

const badSchema = (name: string) => join(REPO_ROOT, 'fixtures', 'bad', `${name}.ts`);

function expectedLine(file: string): number {
  const lines = readFileSync(file, 'utf8').split('\n');
  return lines.findIndex((line) => line.includes('// expect:')) + 1;
}

describe('svc-gen build (command line)', { timeout: 60_000 }, () => {
  it.each(['unknown-tag', 'unsupported-type', 'relation-target-missing', 'unknown-role', 'duplicate-model', 'missing-inverse', 'binding-unknown-action', 'workflow-bad-cron'])(
    'exits 1 with one line naming file:line for %s',
    async (name) => {
      const out = mkdtempSync(join(tmpdir(), 'svc-bad-'));
      const result = await runCli(['build', '--schema', badSchema(name), '--out', out]);
      expect(result.code).toBe(1);
      const lines = result.stderr.trim().split('\n');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(new RegExp(`${name}\\.ts:${expectedLine(badSchema(name))}: `));
      expect(result.stderr).not.toMatch(/\n\s+at /);
    },
  );

  it('writes, reports up to date, and --check catches a stale output', async () => {
    const work = mkdtempSync(join(tmpdir(), 'svc-check-'));
    const schema = join(work, 'schema.ts');
    copyFileSync(join(REPO_ROOT, 'fixtures', 'small', 'schema.ts'), schema);
    const out = join(work, 'out');
    const first = await runCli(['build', '--schema', schema, '--out', out]);
    expect(first.code).toBe(0);
    expect(first.stdout).toContain('migrations/0001_');
    const check = await runCli(['build', '--schema', schema, '--out', out, '--check']);
    expect(check.code).toBe(0);
    expect(check.stdout).toContain('up to date');
    // The newest migration's lock report, for CI logs (no database: no row counts).
    expect(check.stdout).toMatch(/lock report of 0001_\S+\.sql \(no database: rows unknown\):\nschema\/0001_\S+ step 1 transactional: /);
    expect(check.stdout).toContain('lock: none that traffic waits on (new table or catalog only)');

    appendFileSync(schema, '\nexport interface Label {\n  id: string;\n  text: string;\n}\n');
    const stale = await runCli(['build', '--schema', schema, '--out', out, '--check']);
    expect(stale.code).toBe(1);
    expect(stale.stderr).toContain('stale');
    expect(stale.stderr).toContain('schema.snapshot.json');
  });

  it('exits 2 on bad usage', async () => {
    expect((await runCli(['build', '--schema', 'x.ts'])).code).toBe(2);
    expect((await runCli(['frobnicate'])).code).toBe(2);
    expect((await runCli([])).code).toBe(2);
    expect((await runCli(['start'])).code).toBe(2);
  });

  it('exits 1 naming a missing schema file', async () => {
    const result = await runCli(['build', '--schema', 'no/such/schema.ts', '--out', mkdtempSync(join(tmpdir(), 'svc-x-'))]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('no/such/schema.ts');
  });
});
