/**
 * The runtime's cross-instance primitives work through a transaction pooler
 * and through a Citus coordinator (ADR 025, issue 30 item 3): advisory locks
 * are transaction-scoped and no statement leaves state on a session. The
 * exceptions run DDL that cannot run in a transaction (`create index
 * concurrently`) on the direct connection, never through the pooler: the
 * migration runner's online steps (runtime/db/migrate/, ADR 019) and the
 * background build of the projections' tenant index (ADR 021); each resets
 * what it set before the connection goes back to its pool.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/fixtures.ts';

const EXEMPT = ['runtime/db/migrate/', 'runtime/projections/indexes.ts'];

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'migrations' ? [] : sources(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') ? [path] : [];
  });
}

/** `file:line: text` of every line of runtime code (comments aside) matching `pattern`. */
function findings(pattern: RegExp): string[] {
  const out: string[] = [];
  for (const path of sources(join(REPO_ROOT, 'runtime'))) {
    const file = relative(REPO_ROOT, path);
    if (EXEMPT.some((exempt) => file.startsWith(exempt))) continue;
    readFileSync(path, 'utf8').split('\n').forEach((line, i) => {
      const code = line.trim();
      if (code.startsWith('*') || code.startsWith('//') || code.startsWith('/*')) return;
      if (pattern.test(code)) out.push(`${file}:${i + 1}: ${code}`);
    });
  }
  return out;
}

describe('cross-instance primitives', () => {
  it('takes advisory locks for a transaction only, outside the migration runner', () => {
    expect(findings(/pg_(try_)?advisory_(un)?lock(_shared)?\s*\(/)).toEqual([]);
    // The transaction-scoped forms are what the runtime uses (the list is runtime/db/locks.ts).
    expect(findings(/pg_(try_)?advisory_xact_lock/).length).toBeGreaterThan(3);
  });

  it('leaves no setting on a session: every SET is SET LOCAL', () => {
    expect(findings(/[`'"]\s*set\s+(?!local\b)[a-z_]+\s*(=|to)\s/i)).toEqual([]);
  });
});
