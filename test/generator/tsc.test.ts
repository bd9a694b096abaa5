/** The generated project type-checks against the real runtime (`svc-gen` symlinked to the repo). */
import { execFile } from 'node:child_process';
import { mkdirSync, symlinkSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { FIXTURES, REPO_ROOT, buildOk, tempDir } from './helpers.ts';

const run = promisify(execFile);

describe.each(['crm', 'small'])('generated project %s', (fixture) => {
  it('passes tsc --noEmit', async () => {
    const outDir = tempDir(`tsc-${fixture}`);
    await buildOk({ schemaPath: join(FIXTURES, fixture, 'schema.ts'), outDir });
    mkdirSync(join(outDir, 'node_modules'));
    const link = join(outDir, 'node_modules', 'svc-gen');
    symlinkSync(REPO_ROOT, link, 'dir');
    try {
      const tsc = join(REPO_ROOT, 'node_modules', '.bin', 'tsc');
      const result = await run(tsc, ['--noEmit', '-p', outDir]).catch((error: { stdout: string; stderr: string }) => error);
      expect(`${result.stdout}${result.stderr}`).toBe('');
    } finally {
      unlinkSync(link);
    }
  });
});
