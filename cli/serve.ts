import { existsSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { loadConfig } from '../runtime/config/index.ts';
import { createLogger } from '../runtime/log/index.ts';
import { formatPlan, openDatabase, planMigrations, runMigrations, type MigrateLog } from '../runtime/db/index.ts';
import { migrationSets, runService } from '../runtime/service/index.ts';
import type { ServiceDefinition } from '../runtime/service/index.ts';
import { UserError, asUserError } from './errors.ts';
import { bundleProject, type PackageResolver } from './bundle.ts';

export { asUserError };

/**
 * How the installed CLI may load a project without a TypeScript loader (the
 * bin registers tsx's hooks only when `registerTypeScript` is called).
 */
export interface ProjectLoading {
  readonly registerTypeScript: () => void;
  /** The file URL of this package's entry point for `svc-gen/...`. */
  readonly resolvePackage: PackageResolver;
}

export interface LoadedProject {
  readonly definition: ServiceDefinition;
  /** Why the project was loaded through tsx although it could have been bundled. */
  readonly reason?: string;
}

function projectEntry(dir: string): string {
  const entry = join(resolve(dir), 'server.ts');
  if (!existsSync(entry)) throw new UserError(`${entry}: not found; run svc-gen build --out ${dir} first`);
  return entry;
}

async function importDefinition(entry: string, url: string): Promise<ServiceDefinition> {
  const module = (await import(url)) as { default?: ServiceDefinition };
  if (module.default?.kind !== 'service') throw new UserError(`${entry}: does not export a service definition`);
  return module.default;
}

export async function loadProject(dir: string, loading?: ProjectLoading): Promise<LoadedProject> {
  const entry = projectEntry(dir);
  if (!loading) return { definition: await importDefinition(entry, pathToFileURL(entry).href) };
  const bundled = await bundleProject(dir, loading.resolvePackage);
  if ('url' in bundled) return { definition: await importDefinition(entry, bundled.url) };
  loading.registerTypeScript();
  return { definition: await importDefinition(entry, pathToFileURL(entry).href), reason: bundled.reason };
}

/** `svc-gen compile DIR`: writes the bundle `start` loads (an image's build step, where the running server may not write). */
export async function compileCommand(dir: string, loading: ProjectLoading | undefined): Promise<number> {
  projectEntry(dir);
  if (!loading) throw new UserError('compile applies to an installed svc-gen; from a checkout, start loads the project through tsx');
  const bundled = await bundleProject(dir, loading.resolvePackage);
  if ('reason' in bundled) throw new UserError(`${dir}: ${bundled.reason}; start will load it through tsx`);
  process.stdout.write(`${bundled.built ? 'wrote' : 'up to date:'} ${relative(process.cwd(), fileURLToPath(bundled.url))}\n`);
  return 0;
}

/** The runner's progress and waits, a line each on stderr; stdout keeps the result. */
const stderrLog: MigrateLog = {
  info: (_details, message) => void process.stderr.write(`${message}\n`),
  warn: (_details, message) => void process.stderr.write(`warning: ${message}\n`),
};

/**
 * `svc-gen migrate DIR`: applies pending migrations on the direct connection
 * (a held-back contract file is said and is no failure); `--plan` prints the
 * lock report of the pending steps and applies nothing.
 */
export async function migrateCommand(dir: string, options: { plan?: boolean } = {}): Promise<number> {
  if (!existsSync(join(dir, 'migrations'))) throw new UserError(`${dir}/migrations: not found; run svc-gen build first`);
  return asUserError(async () => {
    const config = loadConfig();
    const database = await openDatabase({ url: config.databaseUrl, poolSize: 2, directUrl: config.db.directUrl });
    try {
      const sets = migrationSets(resolve(dir));
      if (options.plan) {
        process.stdout.write(formatPlan(await planMigrations(database.direct, sets)));
        return 0;
      }
      const { applied, heldBack } = await runMigrations(database.direct, sets, { log: stderrLog });
      for (const name of applied) process.stdout.write(`applied ${name}\n`);
      if (heldBack) process.stdout.write(`${heldBack.message}\n`);
      else if (applied.length === 0) process.stdout.write('no pending migrations\n');
      return 0;
    } finally {
      await database.close();
    }
  });
}

export async function startCommand(dir: string, loading?: ProjectLoading): Promise<number> {
  const project = await loadProject(dir, loading);
  await asUserError(async () => {
    if (project.reason) {
      const config = loadConfig();
      createLogger(config.logLevel, 'svc-gen', undefined, config.logFormat)
        .info({ reason: project.reason }, 'project loaded through tsx (not bundled)');
    }
    await runService(project.definition);
  });
  // The server keeps the process alive; runService exits on SIGTERM/SIGINT.
  return new Promise<number>(() => undefined);
}
