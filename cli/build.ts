import { join } from 'node:path';
import { build, formatDiagnostic } from '../generator/index.ts';
import { formatPlan, planFilesOffline, readSet } from '../runtime/db/migrate/index.ts';
import { UserError } from './errors.ts';

export interface BuildFlags {
  readonly schemaPath: string;
  readonly outDir: string;
  readonly check: boolean;
  readonly allowDestructive: boolean;
  readonly target?: 'postgres' | 'citus';
}

export async function buildCommand(flags: BuildFlags): Promise<number> {
  const result = await build(flags);
  if ('diagnostics' in result) {
    for (const diagnostic of result.diagnostics) process.stderr.write(`${formatDiagnostic(diagnostic)}\n`);
    return 1;
  }
  if ('stale' in result) {
    process.stderr.write(`svc-gen: ${flags.outDir} is stale (${result.stale.length} file(s) differ); run svc-gen build\n`);
    for (const file of result.stale) process.stderr.write(`  ${file}\n`);
    return 1;
  }
  if (flags.check) {
    process.stdout.write(`${flags.outDir} is up to date\n`);
    process.stdout.write(newestLockReport(flags.outDir));
    return 0;
  }
  const out = flags.outDir.replace(/\/+$/, '');
  for (const file of result.written) process.stdout.write(`wrote ${out}/${file}\n`);
  if (result.written.length === 0) process.stdout.write(`${out} is up to date\n`);
  return 0;
}

/**
 * What the newest schema migration (and the expand half, when the newest is a
 * contract) will lock, for the CI log of the change that adds it: no database
 * here, so no row counts (`svc-gen migrate --plan DIR` has them).
 */
function newestLockReport(outDir: string): string {
  const files = readSet({ scope: 'schema', dir: join(outDir, 'migrations') });
  const newest = files.at(-1);
  if (newest === undefined) return '';
  const contractOf = /^-- contract of (\d{4}):/m.exec(newest.sql)?.[1];
  const shown = files.filter((file) => file === newest || (contractOf !== undefined && file.name.startsWith(`${contractOf}_`)));
  return `lock report of ${shown.map((file) => file.name).join(' and ')} (no database: rows unknown):\n${formatPlan(planFilesOffline(shown))}`;
}

export { UserError };
