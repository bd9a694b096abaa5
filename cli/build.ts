import { build, formatDiagnostic } from '../generator/index.ts';
import { UserError } from './errors.ts';

export interface BuildFlags {
  readonly schemaPath: string;
  readonly outDir: string;
  readonly check: boolean;
  readonly allowDestructive: boolean;
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
    return 0;
  }
  const out = flags.outDir.replace(/\/+$/, '');
  for (const file of result.written) process.stdout.write(`wrote ${out}/${file}\n`);
  if (result.written.length === 0) process.stdout.write(`${out} is up to date\n`);
  return 0;
}

export { UserError };
