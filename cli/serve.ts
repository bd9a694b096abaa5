import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { loadConfig } from '../runtime/config/index.ts';
import { migrate, openDatabase } from '../runtime/db/index.ts';
import { migrationSets, runService } from '../runtime/service/index.ts';
import type { ServiceDefinition } from '../runtime/service/index.ts';
import { UserError, asUserError } from './errors.ts';

export { asUserError };

export async function loadProject(dir: string): Promise<ServiceDefinition> {
  const entry = join(resolve(dir), 'server.ts');
  if (!existsSync(entry)) throw new UserError(`${entry}: not found; run svc-gen build --out ${dir} first`);
  const module = (await import(pathToFileURL(entry).href)) as { default?: ServiceDefinition };
  if (module.default?.kind !== 'service') throw new UserError(`${entry}: does not export a service definition`);
  return module.default;
}

export async function migrateCommand(dir: string): Promise<number> {
  if (!existsSync(join(dir, 'migrations'))) throw new UserError(`${dir}/migrations: not found; run svc-gen build first`);
  return asUserError(async () => {
    const config = loadConfig();
    const database = await openDatabase({ url: config.databaseUrl, poolSize: 2, directUrl: config.db.directUrl });
    try {
      const applied = await migrate(database.direct, migrationSets(resolve(dir)));
      for (const name of applied) process.stdout.write(`applied ${name}\n`);
      if (applied.length === 0) process.stdout.write('no pending migrations\n');
      return 0;
    } finally {
      await database.close();
    }
  });
}

export async function startCommand(dir: string): Promise<number> {
  const definition = await loadProject(dir);
  await asUserError(() => runService(definition));
  // The server keeps the process alive; runService exits on SIGTERM/SIGINT.
  return new Promise<number>(() => undefined);
}
