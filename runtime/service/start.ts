/**
 * Starts a service: config, database, migrations, capabilities, HTTP server;
 * and stops it gracefully (stop accepting, drain in-flight requests, stop
 * capabilities in reverse, close the pool).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig, type Config, type Env } from '../config/index.ts';
import { createLogger, type Logger } from '../log/index.ts';
import { openServiceDatabase, runMigrations, type Database, type MigrationSet } from '../db/index.ts';
import { retryHeldContracts } from './contracts.ts';
import { createApp, type ErrorObserver, type RequestObserver } from '../http/app.ts';
import { drainServer } from '../http/drain.ts';
import { fromSnapshot } from '../ir/snapshot.ts';
import type {
  Capability, CapabilityHandle, ServiceBase, ServiceContext, ServiceDefinition, ServiceName, Services, UpgradeHandler,
} from '../core/index.ts';
import { CAPABILITIES, EDGE } from './capabilities.ts';
import { orderCapabilities } from './order.ts';

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
  const log = options.log ?? createLogger(config.logLevel, 'svc-gen', undefined, config.logFormat);
  warnAboutConfig(config, log);
  const database = await openServiceDatabase(config, options.embeddedDir ?? join('.svc', 'pgdata'));
  const { server, sockets } = createHttpServer(config);
  let mounted: MountedService | null = null;
  try {
    mounted = await mountService(definition, { config, log, database, server });
    await sayHowToCreateTheFirstUser(mounted.ctx);
    server.on('request', mounted.request);
    server.on('upgrade', mounted.upgrade);
    const port = await listen(server, options.port ?? config.port, options.host ?? config.host);
    const url = `http://127.0.0.1:${port}`;
    // bootMs: since the process started (module loading included).
    log.info({ port, database: database.kind, bootMs: Math.round(performance.now()) }, 'svc-gen server listening');
    const service = mounted;
    return { url, port, ctx: service.ctx, stop: () => shutdown(server, sockets, service, database, log) };
  } catch (error) {
    await mounted?.stop();
    await database.close();
    throw error;
  }
}

/** Settings that are allowed but risky: said once per process at start. */
export function warnAboutConfig(config: Config, log: Logger): void {
  if (config.env === 'development' && !LOOPBACK.has(config.host)) log.warn(developmentWarning(config));
  else if (config.auth.insecureSecret) log.warn('JWT_SECRET is not set: using an insecure development secret');
  if (config.rateLimit.trustForwardedFor) {
    log.warn('SVC_TRUST_X_FORWARDED_FOR is on: the client address (rate limits, login throttle) is read from X-Forwarded-For, '
      + 'so this server must sit behind a proxy that overwrites that header; set it to false when clients reach the server directly');
  }
}

const LOOPBACK = new Set(['127.0.0.1', '::1', 'localhost']);

/**
 * The specification's default is development (SVC_ENV unset), which serves the
 * schema and the IDE to anyone: said at start, with how to close it.
 */
function developmentWarning(config: Config): string {
  const secret = config.auth.insecureSecret
    ? '; JWT_SECRET is not set, so tokens are signed with an insecure development secret that anyone can read in svc-gen\'s source'
    : '';
  return 'SVC_ENV is not production: running in development, so anyone who reaches this server can read '
    + 'GET /meta/schema (models, access rules, workflow URLs) and GET /schema.ts and open the GraphQL IDE (GET /graphql, GET /playground)'
    + `${secret}. Set SVC_ENV=production (with JWT_SECRET and DATABASE_URL) to close them`;
}

/** On a database without a user, `start` says once how to create the first one (dev creates its own). */
async function sayHowToCreateTheFirstUser(ctx: ServiceContext): Promise<void> {
  const { any } = await ctx.db.one<{ any: boolean }>('select exists (select 1 from svc_users) as any');
  if (any) return;
  const register = ctx.config.auth.selfRegistration ? '; with self-registration on, POST /auth/register creates non-admin users' : '';
  ctx.log.warn('no user exists yet: set ADMIN_EMAIL and ADMIN_PASSWORD and restart to create the first Admin '
    + `(created once; the password is not changed by later restarts), then log in with POST /auth/login and add users with POST /auth/users${register}`);
}

export interface MountOptions {
  readonly config: Config;
  readonly log: Logger;
  /** Owned by the caller: stopping the service leaves it open. */
  readonly database: Database;
  /** The HTTP server the caller routes requests from (ctx.server). */
  readonly server: Server;
}

/**
 * A service without a listener of its own: migrations applied, capabilities
 * initialised, and its request and upgrade handlers for the caller to route
 * to. `svc-gen dev` mounts each rebuilt schema beside the running one on one
 * database and one port, then switches (docs/adr/007-dev-server.md).
 */
export interface MountedService {
  readonly ctx: ServiceContext;
  readonly request: (request: IncomingMessage, response: ServerResponse) => void;
  readonly upgrade: UpgradeHandler;
  /** Stops the capabilities in reverse order; the database and server stay. */
  stop(): Promise<void>;
}

export async function mountService(definition: ServiceDefinition, options: MountOptions): Promise<MountedService> {
  const { config, log, database, server } = options;
  const root = resolve(fileURLToPath(definition.root));
  const handles: CapabilityHandle[] = [];
  const stop = async () => {
    for (const handle of handles.reverse()) await handle.stop?.().catch((err) => log.error({ err }, 'stop failed'));
    handles.length = 0;
  };
  try {
    const ordered = orderCapabilities(CAPABILITIES);
    const { applied, heldBack } = await runMigrations(database.direct, migrationSets(root), { log, settings: config.migrate });
    if (applied.length > 0) log.info({ applied }, 'migrations applied');
    const { base, app, upgrades } = assemble(definition, config, log, root, database, server);
    const services: Partial<Services> = {};
    for (const capability of ordered) {
      const handle = await initCapability(capability, base, services);
      if (handle) handles.push(handle);
    }
    assertProvided(services, CAPABILITIES.flatMap((c) => c.provides), 'the service');
    if (heldBack) {
      handles.push(retryHeldContracts(database.db, database.direct, migrationSets(root), log,
        { settings: config.migrate, heldBack: heldBack.file }));
    }
    const ctx: ServiceContext = { ...base, services };
    const upgrade: UpgradeHandler = (request, socket, head) => {
      const path = new URL(request.url ?? '/', 'http://localhost').pathname;
      const handler = upgrades.get(path);
      if (handler) handler(request, socket, head);
      else socket.end('HTTP/1.1 404 Not Found\r\nConnection: close\r\n\r\n');
    };
    return { ctx, request: app.callback(), upgrade, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

function createHttpServer(config: Config): { server: Server; sockets: Set<Socket> } {
  const server = createServer({
    keepAliveTimeout: 65_000,
    // A client that dribbles its headers or body is cut off, not kept open for minutes.
    headersTimeout: config.http.headersTimeoutMs,
    requestTimeout: config.http.requestTimeoutMs,
    // How often those timeouts are checked (Node's default, 30 s, would let a dribbling client overstay them).
    connectionsCheckingInterval: Math.min(1_000, config.http.headersTimeoutMs),
  });
  server.maxConnections = config.http.maxConnections;
  const sockets = new Set<Socket>();
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  return { server, sockets };
}

function assemble(definition: ServiceDefinition, config: Config, log: Logger, root: string, database: Database, server: Server) {
  const ir = fromSnapshot(definition.snapshot);
  const observers: RequestObserver[] = [];
  const errorObservers: ErrorObserver[] = [];
  const { app, router } = createApp({
    log, maxBodyBytes: config.maxBodyBytes, edge: EDGE.map((m) => m(config, log)), observers, errorObservers,
  });
  const upgrades = new Map<string, UpgradeHandler>();
  const base: ServiceBase = {
    config, ir, access: definition.access, resolvers: definition.resolvers, projections: definition.projections ?? [], root, migrations: migrationSets(root),
    db: database.db, directDb: database.direct, readDb: database.read, pgp: database.pgp, dbKind: database.kind, notifier: database.notifier,
    log, router, server,
    onUpgrade: (path, handler) => void upgrades.set(path, handler),
    observeRequests: (observer) => void observers.push(observer),
    observeErrors: (observer) => void errorObservers.push(observer),
  };
  return { base, app, upgrades };
}

/**
 * Runs one capability's init with the services it requires (started before it,
 * by the order), its optional ones that exist, and nothing else; then takes
 * the services it declared it provides.
 */
async function initCapability(capability: Capability, base: ServiceBase, registry: Partial<Services>): Promise<CapabilityHandle | void> {
  const services: Partial<Services> = {};
  for (const name of [...capability.requires, ...(capability.optional ?? [])]) {
    if (registry[name] !== undefined) Object.assign(services, { [name]: registry[name] });
  }
  assertProvided(services, capability.requires, `capability ${capability.name} requires`);
  const handle = await capability.init({ ...base, services });
  assertProvided(services, capability.provides, `capability ${capability.name} declares it provides`);
  for (const name of capability.provides) Object.assign(registry, { [name]: services[name] });
  return handle;
}

/**
 * Checks that `services` holds each of `names`. `init` is typed to read only
 * what its capability declared, so from here the object stands for all of them.
 */
function assertProvided(services: Partial<Services>, names: readonly ServiceName[], what: string): asserts services is Services {
  const missing = names.filter((name) => services[name] === undefined);
  if (missing.length > 0) throw new Error(`${what} ${missing.join(', ')}, which is not there`);
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

async function shutdown(server: Server, sockets: Set<Socket>, service: MountedService, database: Database, log: Logger) {
  log.info('shutting down: draining requests');
  await drainServer(server, sockets, DRAIN_TIMEOUT_MS, () => service.stop());
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
