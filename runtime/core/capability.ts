/**
 * What a capability (one folder of runtime/) declares, sees and provides.
 *
 * A capability names the services it provides and the ones it requires; the
 * service orders capabilities from those declarations (runtime/service/order.ts)
 * and hands each one only what it declared. A capability that provides a
 * service declares its type by merging into `Services`:
 *
 *   declare module '../core/capability.ts' { interface Services { jobs: JobQueue } }
 *
 * This module sits below every capability (docs/adr/017-capability-wiring.md):
 * it imports foundations only (config, db, log, http, ir), never a capability.
 */
import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import type Router from '@koa/router';
import type { IMain } from 'pg-promise';
import type { Config } from '../config/index.ts';
import type { Db, MigrationSet, Notifier } from '../db/index.ts';
import type { Logger } from '../log/index.ts';
import type { ErrorObserver, RequestObserver } from '../http/app.ts';
import type { AccessTable, SchemaIR } from '../ir/types.ts';
import type { ProjectionDefinition, ResolverTable } from './definition.ts';

/** Cross-capability services; each capability merges the ones it provides into this interface. */
export interface Services {}

export type ServiceName = keyof Services;

export type UpgradeHandler = (request: IncomingMessage, socket: Duplex, head: Buffer) => void;

/** What every capability sees, whatever it requires. */
export interface ServiceBase {
  readonly config: Config;
  readonly ir: SchemaIR;
  readonly access: AccessTable;
  readonly resolvers: ResolverTable;
  /** Custom projections of the ServiceDefinition (empty when none). */
  readonly projections: readonly ProjectionDefinition[];
  /** Absolute path of the generated project's folder. */
  readonly root: string;
  /** Every migration set of this service (runtime's, then the schema's). */
  readonly migrations: readonly MigrationSet[];
  readonly db: Db;
  /**
   * Postgres without the pooler (SVC_DIRECT_DATABASE_URL; `db` when unset): for
   * work that needs a session of its own, such as long-lived reads.
   */
  readonly directDb: Db;
  /**
   * A read replica (SVC_READ_DATABASE_URL; `db` when unset) for record reads and
   * public read. It lags: a caller that must see its own write reads `db`.
   */
  readonly readDb: Db;
  readonly pgp: IMain;
  readonly dbKind: 'server' | 'embedded';
  readonly notifier: Notifier;
  readonly log: Logger;
  readonly router: Router;
  readonly server: Server;
  /** Routes a WebSocket upgrade on `path` to `handler`. */
  onUpgrade(path: string, handler: UpgradeHandler): void;
  /** Calls `observer` for every HTTP request once its status is final (metrics). */
  observeRequests(observer: RequestObserver): void;
  /** Calls `observer` with every error a request throws, before it is answered (the audit of denied attempts). */
  observeErrors(observer: ErrorObserver): void;
}

/**
 * The context with the services `R`. A helper states the services it reads
 * (`ServiceContext<'events' | 'audit'>`); the default, every service, is what a
 * running service exposes once all capabilities have started.
 */
export interface ServiceContext<R extends ServiceName = ServiceName> extends ServiceBase {
  readonly services: Pick<Services, R>;
}

/**
 * What `init` sees: the services it requires, a slot for each one it provides
 * (to assign), and its optional services when some capability provides them.
 */
export interface CapabilityContext<R extends ServiceName, P extends ServiceName, O extends ServiceName = never> extends ServiceBase {
  readonly services: Pick<Services, R | P> & Partial<Pick<Services, O>>;
}

export interface CapabilityHandle {
  /** Stops background work; called in reverse start order at shutdown. */
  stop?(): Promise<void>;
}

export interface Capability<R extends ServiceName = ServiceName, P extends ServiceName = ServiceName, O extends ServiceName = ServiceName> {
  readonly name: string;
  /** Services `init` assigns to `ctx.services`; start refuses a capability that leaves one unassigned. */
  readonly provides: readonly P[];
  /** Services that must exist before `init` runs: their providers start first. */
  readonly requires: readonly R[];
  /** Services read when present: their providers, if any, start first; none is not an error. */
  readonly optional?: readonly O[];
  /** Folder of the capability's own `NNNN_*.sql` migrations. */
  readonly migrations?: string;
  init(ctx: CapabilityContext<R, P, O>): Promise<CapabilityHandle | void>;
}

/**
 * Declares a capability; `requires` and `provides` type `init`'s `ctx.services`
 * (a service neither required nor provided is not there to read).
 */
export function defineCapability<
  const R extends ServiceName = never, const P extends ServiceName = never, const O extends ServiceName = never,
>(capability: Capability<R, P, O>): Capability<R, P, O> {
  return capability;
}
