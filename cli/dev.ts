/**
 * `svc-gen dev`: build, serve, and follow the schema file. One process owns
 * the port and the database; each build is mounted beside the running
 * service and the port switches to it once it is ready, so a save never
 * refuses a request (docs/adr/007-dev-server.md). A schema error is printed
 * and the running service is kept.
 */
import { existsSync, readFileSync, watch, type FSWatcher } from 'node:fs';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ConfigError, loadConfig, type Config } from '../runtime/config/index.ts';
import { createLogger, type Logger } from '../runtime/log/index.ts';
import { openServiceDatabase, type Database } from '../runtime/db/index.ts';
import type { MountedService, ServiceDefinition } from '../runtime/service/index.ts';
import type { BuildResult, Diagnostic } from '../generator/index.ts';
import { banner } from './banner.ts';
import { createDevHost, type DevHost } from './dev-host.ts';
import { UserError } from './errors.ts';
import { asUserError } from './errors.ts';

export const DEV_DEBOUNCE_MS = 2000;
/** Folder of everything `svc-gen dev` keeps between runs (never used by build, start or migrate). */
const DEV_STATE = '.svc';
/** Where dev listens unless --host or HOST says otherwise: its IDE, schema and signing secret are open to whoever reaches it. */
const DEV_HOST = '127.0.0.1';

export interface DevFlags {
  readonly schemaPath: string;
  readonly outDir?: string;
  /** Listening address (--host); defaults to HOST, else loopback. */
  readonly host?: string;
  /** Emit destructive migrations even where dev would refuse them (see allowsDestructive). */
  readonly allowDestructive?: boolean;
}

export async function devCommand(flags: DevFlags): Promise<number> {
  const started = performance.now();
  const schemaPath = resolve(flags.schemaPath);
  if (!existsSync(schemaPath)) throw new UserError(`${flags.schemaPath}: not found`);
  const outDir = resolve(flags.outDir ?? join(DEV_STATE, 'build', basename(schemaPath, '.ts')));
  const embeddedDir = resolve(DEV_STATE, 'pgdata');
  const config = readConfig(flags.host);
  const log = createLogger(config.logLevel, 'svc-gen', undefined, config.logFormat);
  const host = createDevHost();
  const port = await asUserError(() => host.listen(config.port, config.host));
  log.info({ host: config.host, port }, config.host === DEV_HOST
    ? `listening on ${DEV_HOST}:${port} only (--host 0.0.0.0 or HOST=0.0.0.0 opens it to other machines)`
    : `listening on ${config.host}:${port}`);
  // The database opens while the first build (or the runtime import) runs.
  const opening = asUserError(() => openServiceDatabase(config, embeddedDir));
  const dev = new DevLoop({ schemaPath, outDir, config, log, host, allowDestructive: flags.allowDestructive === true, embeddedDir }, opening);
  const stopped = dev.stopOnSignals();
  try {
    await dev.run(() => dev.start(port, started));
  } catch (error) {
    if (dev.stopping) return stopped;
    await dev.stop();
    throw error;
  }
  return stopped;
}

function readConfig(host: string | undefined): Config {
  try {
    return loadConfig({ SVC_LOG_FORMAT: 'pretty', ...process.env, HOST: host ?? (process.env.HOST?.trim() || DEV_HOST) });
  } catch (error) {
    if (error instanceof ConfigError) throw new UserError(error.message);
    throw error;
  }
}

/** `schema.ts:12: dropping Tag.color deletes the column` from the build's refusal of that change. */
function allowedChange(d: Diagnostic): string {
  const reason = d.message.replace(/^destructive change refused: /, '').replace(/; rerun with --allow-destructive to emit it$/, '');
  return `${d.file}:${d.line}: ${reason}`;
}

interface DevOptions {
  readonly schemaPath: string;
  readonly outDir: string;
  readonly config: Config;
  readonly log: Logger;
  readonly host: DevHost;
  readonly allowDestructive: boolean;
  readonly embeddedDir: string;
}

class DevLoop {
  private database: Database | null = null;
  private generation = 0;
  /** The mounted service predates the folder's current build (its mount failed). */
  private stale = false;
  /** How long the last rebuild took (logged with the switch). */
  private buildMs = 0;
  built = false;
  mounted: MountedService | null = null;

  stopping = false;
  private watcher: FSWatcher | null = null;
  private timer: NodeJS.Timeout | null = null;
  private queue: Promise<void> = Promise.resolve();

  constructor(private readonly options: DevOptions, private readonly opening: Promise<Database>) {
    opening.then((database) => (this.database = database), () => undefined);
  }

  /** Runs `work` after whatever runs now (the start, a rebuild); stop() waits for it. */
  run(work: () => Promise<void>): Promise<void> {
    const next = this.queue.then(work);
    this.queue = next.catch((err) => this.options.log.error({ err }, 'svc-gen dev failed'));
    return next;
  }

  /** The first build (unless warm) and mount, the banner, then the watch. */
  async start(port: number, started: number): Promise<void> {
    const { host, schemaPath, outDir, config, log } = this.options;
    const warm = this.isWarm();
    // The runtime's modules load while the database opens.
    const runtime = import('../runtime/service/index.ts');
    if (!warm && !(await this.rebuild())) host.unavailable(`${relative(process.cwd(), schemaPath)} has errors; see the svc-gen dev output`);
    await this.opening;
    const { warnAboutConfig } = await runtime;
    warnAboutConfig(config, log);
    if (this.stopping) return;
    if (existsSync(join(outDir, 'server.ts')) && (warm || this.built)) await this.mount();
    if (this.stopping) return;
    if (this.mounted) process.stdout.write(await this.banner(port, performance.now() - started));
    this.watch();
    // A warm start served the previous build: build now, off the critical path, and switch if anything changed.
    if (warm) await this.reload('check');
    if (!this.stopping) log.info(`watching ${relative(process.cwd(), schemaPath)}`);
  }

  /** The folder holds a build of exactly this schema text: serve it before building. */
  isWarm(): boolean {
    const copy = join(this.options.outDir, 'schema.ts');
    if (!existsSync(copy) || !existsSync(join(this.options.outDir, 'server.ts'))) return false;
    return readFileSync(copy, 'utf8') === readFileSync(this.options.schemaPath, 'utf8');
  }

  /** Builds; prints diagnostics; null when the folder could not be brought up to date. */
  async rebuild(): Promise<BuildResult | null> {
    const { build, formatDiagnostic } = await import('../generator/index.ts');
    const { schemaPath, outDir, log } = this.options;
    let result = await build({ schemaPath, outDir });
    let printed = false;
    if ('diagnostics' in result && result.diagnostics.every((d) => d.code === 'DESTRUCTIVE_CHANGE')) {
      const refusal = this.destructiveRefusal();
      if (refusal === null) {
        // The build's diagnostic says "refused": here the change goes ahead, so the log says what is lost, not that.
        for (const d of result.diagnostics) log.warn(`destructive change allowed: ${allowedChange(d)}`);
        log.warn('allowed because these migrations were only ever applied to the embedded development database, '
          + 'which loses that data now; `svc-gen build` refuses the same change without --allow-destructive');
        result = await build({ schemaPath, outDir, allowDestructive: true });
      } else {
        for (const d of result.diagnostics) process.stderr.write(`${formatDiagnostic(d)}\n`);
        process.stderr.write(`svc-gen dev: ${refusal}\n`);
        printed = true;
      }
    }
    if ('diagnostics' in result) {
      if (!printed) for (const d of result.diagnostics) process.stderr.write(`${formatDiagnostic(d)}\n`);
      process.stderr.write(this.mounted ? 'svc-gen dev: schema error; the running server is kept\n' : 'svc-gen dev: fix the schema to start\n');
      return null;
    }
    if ('stale' in result) return null;
    if (result.migration) log.info({ migration: result.migration.path, changes: result.migration.summary }, 'new migration');
    if (result.written.length > 0) log.debug({ files: result.written }, 'build wrote files');
    this.built = true;
    return result;
  }

  /**
   * Null when dev may emit a destructive migration: asked for, or the
   * migrations live in dev's own folder and were only applied to the
   * embedded database. Otherwise why not.
   */
  private destructiveRefusal(): string | null {
    if (this.options.allowDestructive) return null;
    if (this.options.config.databaseUrl !== null) {
      return 'destructive changes are refused on DATABASE_URL (its migrations may be shared); restart with --allow-destructive to emit them';
    }
    // Folders under .svc/ are dev's own (gitignored, never deployed): `npm run dev` builds into .svc/crm.
    if (!this.options.outDir.startsWith(`${resolve(DEV_STATE)}/`)) {
      return `destructive changes are refused in --out ${relative(process.cwd(), this.options.outDir)} (its migrations may be applied elsewhere); `
        + 'restart with --allow-destructive to emit them';
    }
    return null;
  }

  /** Imports the folder's build afresh and mounts it; the port switches to it. */
  async mount(): Promise<boolean> {
    const { host, log, config, outDir } = this.options;
    const begun = performance.now();
    this.generation += 1;
    try {
      const { mountService } = await import('../runtime/service/index.ts');
      const definition = await this.load();
      const next = await mountService(definition, { config, log, database: this.database!, server: host.server });
      const previous = host.route(next);
      this.mounted = next;
      this.stale = false;
      if (previous) {
        log.info({ buildMs: this.buildMs, mountMs: Math.round(performance.now() - begun), generation: this.generation }, 'serving the rebuilt schema');
        await host.retire(previous);
      }
      return true;
    } catch (error) {
      this.stale = true;
      const message = error instanceof Error ? error.message : String(error);
      log.error({ err: error }, `cannot start ${relative(process.cwd(), outDir)}: ${message}`);
      if (this.mounted) process.stderr.write('svc-gen dev: the running server is kept\n');
      else host.unavailable(`the service did not start: ${message}`);
      return false;
    }
  }

  private async load(): Promise<ServiceDefinition> {
    const entry = pathToFileURL(join(this.options.outDir, 'server.ts'));
    entry.searchParams.set('svc-dev', String(this.generation));
    const module = (await import(entry.href)) as { default?: ServiceDefinition };
    if (module.default?.kind !== 'service') throw new UserError(`${entry.pathname}: does not export a service definition`);
    return module.default;
  }

  /** Rebuilds; mounts when the build changed anything (or the last mount failed). */
  async reload(reason: 'check' | 'save'): Promise<void> {
    if (this.stopping) return;
    if (reason === 'save') this.options.log.info('schema saved: rebuilding');
    const begun = performance.now();
    const result = await this.rebuild();
    this.buildMs = Math.round(performance.now() - begun);
    if (!result || !result.ok || this.stopping) return;
    if (result.written.length === 0 && result.removed.length === 0 && !this.stale && this.mounted) {
      if (reason === 'save') this.options.log.info('schema unchanged: nothing to do');
      return;
    }
    await this.mount();
  }

  async banner(port: number, readyMs: number): Promise<string> {
    const { ensureDevAdmin } = await import('../runtime/auth/index.ts');
    const stateFile = resolve(DEV_STATE, 'dev-admin.json');
    const ctx = this.mounted!.ctx;
    const admin = await ensureDevAdmin({ db: ctx.db, config: ctx.config, log: ctx.log, audit: ctx.services.audit, stateFile });
    const { schemaPath, outDir, config, embeddedDir } = this.options;
    return banner({ config, port, schemaPath, outDir, embeddedDir, admin, adminStateFile: stateFile, readyMs });
  }

  /** Rebuilds DEV_DEBOUNCE_MS after the last change of the schema file. */
  watch(): void {
    const { schemaPath } = this.options;
    if (this.stopping) return;
    this.watcher = watch(dirname(schemaPath), (_event, file) => {
      if (file !== basename(schemaPath) || this.stopping) return;
      if (this.timer) clearTimeout(this.timer);
      this.timer = setTimeout(() => {
        void this.run(() => this.reload('save')).catch(() => undefined);
      }, DEV_DEBOUNCE_MS);
    });
  }

  /** Resolves with the exit code once a signal (or the wrapper's exit) has stopped everything. */
  stopOnSignals(): Promise<number> {
    return new Promise<number>((done) => {
      const quit = (signal: string) => {
        if (this.stopping) process.exit(130); // asked twice: stop now
        this.options.log.info({ signal }, 'stopping');
        clearInterval(orphan);
        this.stop().then(() => done(0), (err) => {
          this.options.log.error({ err }, 'stop failed');
          done(1);
        });
      };
      for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => quit(signal));
      // Started through a wrapper (npx, npm run) that died without passing the signal on: stop too.
      const parent = process.ppid;
      const orphan = setInterval(() => {
        if (process.ppid !== parent) quit('parent exited');
      }, 1000);
      orphan.unref();
    });
  }

  /** Stops accepting, lets in-flight requests finish, stops the service, closes the database. */
  async stop(): Promise<void> {
    this.stopping = true;
    this.watcher?.close();
    if (this.timer) clearTimeout(this.timer);
    await this.queue.catch(() => undefined);
    const closing = this.options.host.close();
    if (this.mounted) await this.options.host.retire(this.mounted);
    await closing;
    await (await this.opening.catch(() => null))?.close();
  }
}
