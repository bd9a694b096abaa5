/**
 * What a capability (one folder of runtime/) sees and provides.
 *
 * Capabilities are initialised in a fixed order (see capabilities.ts). Each may
 * add a service for later ones through `ctx.services`; a capability that
 * provides one declares it by merging into `Services`:
 *
 *   declare module '../service/types.ts' { interface Services { jobs: JobQueue } }
 */
import type { Server } from 'node:http';
import type { Duplex } from 'node:stream';
import type Router from '@koa/router';
import type { Config } from '../config/index.ts';
import type { Db, MigrationSet, Notifier, Tx } from '../db/index.ts';
import type { IMain } from 'pg-promise';
import type { Logger } from '../log/index.ts';
import type { ErrorObserver, RequestObserver } from '../http/app.ts';
import type { AccessTable, SchemaIR } from '../ir/types.ts';
import type { EventStore } from '../events/index.ts';
import type { Authenticator, Principal, TokenSigner } from '../auth/index.ts';
import type { ProjectionDefinition } from '../projections/types.ts';

export interface HookContext {
  readonly model: string;
  readonly principal: Principal | null;
  readonly tenantId: string | null;
  /** The mutation's transaction: run any query of the hook on it. */
  readonly tx: Tx;
}

/** Typed hooks an operator may fill in `resolvers/<Model>.ts`. Run inside the mutation's transaction. */
export interface ModelHooks<T = Record<string, unknown>> {
  beforeCreate?(data: Partial<T>, ctx: HookContext): Partial<T> | void | Promise<Partial<T> | void>;
  afterCreate?(record: T, ctx: HookContext): void | Promise<void>;
  beforeUpdate?(id: string, patch: Partial<T>, ctx: HookContext): Partial<T> | void | Promise<Partial<T> | void>;
  afterUpdate?(record: T, ctx: HookContext): void | Promise<void>;
  beforeDelete?(id: string, ctx: HookContext): void | Promise<void>;
  afterDelete?(id: string, ctx: HookContext): void | Promise<void>;
}

export type ResolverTable = Readonly<Record<string, ModelHooks<any>>>;

/** What a generated project's server.ts hands to the runtime. */
export interface ServiceDefinition {
  readonly kind: 'service';
  readonly snapshot: unknown;
  readonly access: AccessTable;
  readonly resolvers: ResolverTable;
  /** The generated project's folder (migrations/, projections/, schema.ts). */
  readonly root: URL;
  /** Custom read-model projections (`defineProjection`), beside the built-in one per model. */
  readonly projections?: readonly ProjectionDefinition[];
}

export type UpgradeHandler = (request: import('node:http').IncomingMessage, socket: Duplex, head: Buffer) => void;

/** Cross-capability services; capabilities merge their own into this interface. */
export interface Services {
  events: EventStore;
  tokens: TokenSigner;
  auth: Authenticator;
}

export interface ServiceContext {
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
  readonly services: Services;
}

export interface CapabilityHandle {
  /** Stops background work; called in reverse order at shutdown. */
  stop?(): Promise<void>;
}

export interface Capability {
  readonly name: string;
  /** Folder of the capability's own `NNNN_*.sql` migrations. */
  readonly migrations?: string;
  init(ctx: ServiceContext): Promise<CapabilityHandle | void>;
}
