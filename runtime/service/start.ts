/**
 * Starts a service: config, database, migrations, capabilities, HTTP server;
 * and stops it gracefully (stop accepting, drain in-flight requests, stop
 * capabilities in reverse, close the pool).
 */
import { createServer, type Server } from 'node:http';
import type { Socket } from 'node:net';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig, type Config, type Env } from '../config/index.ts';
import { createLogger, type Logger } from '../log/index.ts';
import { openDatabase, migrate, type Database, type MigrationSet } from '../db/index.ts';
import { createApp } from '../http/app.ts';
import { fromSnapshot } from '../ir/snapshot.ts';
import { createEventStore } from '../events/index.ts';
import { TokenSigner } from '../auth/index.ts';
import { CAPABILITIES, EDGE } from './capabilities.ts';
import type { CapabilityHandle, ServiceContext, ServiceDefinition, Services, UpgradeHandler } from './types.ts';

export interface StartOptions {
  readonly env?: Env;
  /** Overrides PORT (0 = any free port). */
  readonly port?: number;
  readonly host?: string;
  readonly log?: Logger;
  /** Folder of the embedded database when DATABASE_URL is unset. */
  readonly embeddedDir?: string;
}

export interface RunningService {
  readonly url: string;
  readonly port: number;
  readonly ctx: ServiceContext;
  stop(): Promise<void>;
}

export function defineService(definition: Omit<ServiceDefinition, 'kind'>): ServiceDefinition {
  return { kind: 'service', ...definition };
}

/** The migration sets of a service: the runtime's own first, then the schema's. */
export function migrationSets(root: string): MigrationSet[] {
  const runtime = CAPABILITIES.flatMap((c) => (c.migrations ? [{ scope: `runtime:${c.name}`, dir: c.migrations }] : []));
  return [...runtime, { scope: 'schema', dir: join(root, 'migrations') }];
}

export async function startService(definition: ServiceDefinition, options: StartOptions = {}): Promise<RunningService> {
  const config = loadConfig(options.env ?? process.env);
  const log = options.log ?? createLogger(config.logLevel);
  if (config.auth.insecureSecret) log.warn('JWT_SECRET is not set: using an insecure development secret');
  const root = resolve(fileURLToPath(definition.root));
  const database = await openDatabase({
    url: config.databaseUrl,
    poolSize: config.dbPoolSize,
    embeddedDir: options.embeddedDir ?? join('.svc', 'pgdata'),
  });
  const handles: CapabilityHandle[] = [];
  try {
    const applied = await migrate(database.db, migrationSets(root));
    if (applied.length > 0) log.info({ applied }, 'migrations applied');
    const { ctx, server, sockets } = assemble(definition, config, log, root, database);
    for (const capability of CAPABILITIES) {
      const handle = await capability.init(ctx);
      if (handle) handles.push(handle);
    }
    const port = await listen(server, options.port ?? config.port, options.host ?? config.host);
    const url = `http://127.0.0.1:${port}`;
    log.info({ port, database: database.kind }, 'svc-gen server listening');
    return { url, port, ctx, stop: () => shutdown(server, sockets, handles, database, log) };
  } catch (error) {
    for (const handle of handles.reverse()) await handle.stop?.().catch(() => undefined);
    await database.close();
    throw error;
  }
}

function assemble(definition: ServiceDefinition, config: Config, log: Logger, root: string, database: Database) {
  const ir = fromSnapshot(definition.snapshot);
  const { app, router } = createApp({ log, maxBodyBytes: config.maxBodyBytes, edge: EDGE.map((m) => m(config, log)) });
  const server = createServer({ keepAliveTimeout: 65_000 }, app.callback());
  const sockets = new Set<Socket>();
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  const upgrades = new Map<string, UpgradeHandler>();
  server.on('upgrade', (request, socket, head) => {
    const path = new URL(request.url ?? '/', 'http://localhost').pathname;
    const handler = upgrades.get(path);
    if (handler) handler(request, socket, head);
    else socket.end('HTTP/1.1 404 Not Found\r\nConnection: close\r\n\r\n');
  });
  const tokens = new TokenSigner(config.auth.jwtSecret, config.auth.accessTokenTtlSecs);
  // Later capabilities add their services during init (see CAPABILITIES order).
  const services = {
    events: createEventStore(database.db, database.notifier, {
      ...config.history, models: new Set(ir.models.map((model) => model.name)),
    }),
    tokens,
    auth: { authenticate: (token: string) => tokens.verify(token) },
  } as Services;
  const ctx: ServiceContext = {
    config, ir, access: definition.access, resolvers: definition.resolvers, projections: definition.projections ?? [], root, migrations: migrationSets(root),
    db: database.db, pgp: database.pgp, dbKind: database.kind, notifier: database.notifier,
    log, router, server, services,
    onUpgrade: (path, handler) => void upgrades.set(path, handler),
  };
  return { ctx, server, sockets };
}

function listen(server: Server, port: number, host: string): Promise<number> {
  return new Promise((resolvePort, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      const address = server.address();
      resolvePort(typeof address === 'object' && address ? address.port : port);
    });
  });
}

const DRAIN_TIMEOUT_MS = 10_000;

async function shutdown(server: Server, sockets: Set<Socket>, handles: CapabilityHandle[], database: Database, log: Logger) {
  log.info('shutting down: draining requests');
  const closed = new Promise<void>((done) => server.close(() => done()));
  // A keep-alive connection turns idle when its in-flight response is sent: close it then.
  const idle = setInterval(() => server.closeIdleConnections(), 50);
  server.closeIdleConnections();
  const timer = setTimeout(() => {
    for (const socket of sockets) socket.destroy();
  }, DRAIN_TIMEOUT_MS);
  for (const handle of [...handles].reverse()) await handle.stop?.().catch((err) => log.error({ err }, 'stop failed'));
  await closed;
  clearInterval(idle);
  clearTimeout(timer);
  await database.close();
  log.info('stopped');
}

/** Runs a service as the process: starts it and stops gracefully on SIGTERM/SIGINT. */
export async function runService(definition: ServiceDefinition, options: StartOptions = {}): Promise<RunningService> {
  const running = await startService(definition, options);
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    running.ctx.log.info({ signal }, 'signal received');
    running.stop().then(() => process.exit(0), () => process.exit(1));
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
  return running;
}
