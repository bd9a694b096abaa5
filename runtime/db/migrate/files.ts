/**
 * Reading a build's migration files: the sets, their files with checksums,
 * which are pending, and each file's steps.
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseMigration, StepFormatError, type ParsedMigration } from './parse.ts';
import type { MigrationFile } from './store.ts';
import { MigrationError } from './errors.ts';

/** One folder of `NNNN_name.sql` files, applied in file-name order. */
export interface MigrationSet {
  /** `runtime:<capability>` for the runtime's own tables, `schema` for the operator's. */
  readonly scope: string;
  readonly dir: string;
}

export function readSet(set: MigrationSet): MigrationFile[] {
  if (!existsSync(set.dir)) return [];
  return readdirSync(set.dir)
    .filter((name) => name.endsWith('.sql'))
    .sort()
    .map((name) => {
      const path = join(set.dir, name);
      const sql = readFileSync(path, 'utf8');
      return { scope: set.scope, name, path, sql, checksum: createHash('sha256').update(sql).digest('hex') };
    });
}

export function pendingOf(files: MigrationFile[], applied: Map<string, string>): MigrationFile[] {
  const pending: MigrationFile[] = [];
  for (const file of files) {
    const checksum = applied.get(`${file.scope}/${file.name}`);
    if (checksum === undefined) pending.push(file);
    else if (checksum !== file.checksum) {
      throw new MigrationError(
        `${file.path}: migration was edited after it was applied (checksum mismatch); restore it and add a new migration instead`,
      );
    }
  }
  return pending;
}

export function parseFile(file: MigrationFile): ParsedMigration {
  try {
    return parseMigration(file.sql);
  } catch (error) {
    if (error instanceof StepFormatError) throw new MigrationError(`${file.path}: ${error.message}`);
    throw error;
  }
}

