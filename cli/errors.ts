import { ConfigError } from '../runtime/config/index.ts';
import { MigrationError } from '../runtime/db/migrate/index.ts';
import { EmbeddedLockedError } from '../runtime/db/embedded.ts';

/** Bad command-line usage: exit 2. */
export class UsageError extends Error {}
/** A problem in the operator's input (schema, output folder, migrations, env): exit 1, one line. */
export class UserError extends Error {}

/** Maps an operator's mistake (env, migrations, database) to one line; rethrows bugs. */
export async function asUserError<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof ConfigError || error instanceof MigrationError || error instanceof EmbeddedLockedError) {
      throw new UserError(error.message);
    }
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ECONNREFUSED' || code === 'ENOTFOUND' || code === '3D000' || code === '28P01') {
      throw new UserError(`cannot connect to DATABASE_URL: ${(error as Error).message}`);
    }
    if (code === 'EADDRINUSE') throw new UserError(`port already in use: ${(error as Error).message}`);
    throw error;
  }
}

