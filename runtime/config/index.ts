/**
 * Configuration from the environment, validated once at start.
 *
 * Every variable of the specification and of CONTRACT section 7 is read here;
 * the bad or missing ones are thrown together as one ConfigError, a line each
 * naming its variable.
 */
import { ROLES, type Role } from '../ir/types.ts';
import { readers, type Env, type Readers } from './read.ts';
import { DEFAULT_SETTINGS, MIGRATE_VARIABLES, type MigrateSettings } from '../db/migrate/settings.ts';

export { ConfigError } from './read.ts';
export type { ConfigProblem, Env } from './read.ts';

export type HistoryPolicy = 'full' | 'retained' | 'off';
export type AuditPolicy = 'full' | 'metadata' | 'off';
export type LogLevel = 'debug' | 'info' | 'warn' | 'error';
/** `json`: one JSON object per line (for collectors); `pretty`: for a person at a terminal. */
export type LogFormat = 'json' | 'pretty';
export type RegistrationTenant =
  | { readonly mode: 'none' }
  | { readonly mode: 'per-user' }
  | { readonly mode: 'fixed'; readonly tenantId: string };

export const OAUTH_PROVIDERS = ['google', 'github', 'microsoft', 'okta'] as const;
export type OAuthProviderName = (typeof OAUTH_PROVIDERS)[number];

export interface OAuthProviderConfig {
  readonly name: OAuthProviderName;
  readonly clientId: string;
  readonly clientSecret: string;
  readonly authUrl: string;
  readonly tokenUrl: string;
  readonly userinfoUrl: string;
  readonly redirectUri: string | null;
}

export interface PublicReadConfig {
  /** Models named in SVC_PUBLIC_READ_MODELS. */
  readonly models: ReadonlySet<string>;
  /** SVC_PUBLIC_READ_FIELDS_<Model>: query fields a client may filter on. */
  readonly filterFields: ReadonlyMap<string, readonly string[]>;
  /** SVC_PUBLIC_READ_FILTER_<Model>: fixed equality filters. */
  readonly fixedFilters: ReadonlyMap<string, ReadonlyArray<readonly [string, string]>>;
}

export interface Config {
  readonly env: 'production' | 'development';
  /** The migration runner's SVC_MIGRATE_* settings (runtime/db/migrate/settings.ts; `svc-gen migrate` reads them itself). */
  readonly migrate: MigrateSettings;
  readonly databaseUrl: string | null;
  readonly port: number;
  readonly host: string;
  readonly corsOrigins: readonly string[] | null;
  readonly schemaPath: string | null;
  readonly logLevel: LogLevel;
  /** SVC_LOG_FORMAT; `svc-gen dev` defaults it to `pretty`. */
  readonly logFormat: LogFormat;
  readonly maxBodyBytes: number;
  /** SVC_CONSOLE: the operator console at /console (`on`, default) or `off` (404). */
  readonly console: boolean;
  readonly dbPoolSize: number;
  /**
   * The database topology (docs/deploy.md, "Topology"): a connection pooler in
   * front of Postgres (SVC_DB_POOLER), the direct URL that sessions need
   * (LISTEN, migrations' advisory lock), and named prepared statements.
   */
  readonly db: {
    readonly pooler: 'none' | 'transaction';
    /** SVC_DIRECT_DATABASE_URL: Postgres itself, bypassing the pooler; null = DATABASE_URL. */
    readonly directUrl: string | null;
    /** SVC_DB_PREPARED: named prepared statements for record queries (default: off behind a transaction pooler). */
    readonly prepared: boolean;
    /** SVC_READ_DATABASE_URL: a streaming replica for record reads and public read; null = the primary. */
    readonly readUrl: string | null;
    /** SVC_DB_IDLE_TIMEOUT_MS: a pooled connection no traffic needed for this long is closed, one a second; 0 keeps them. */
    readonly idleTimeoutMs: number;
    /**
     * SVC_DB_STATEMENT_TIMEOUT_MS: Postgres cancels a statement of the pools running longer (0: never); migrations,
     * rebuilds and start-up DDL lift it. Not applied behind a transaction pooler (set it on the role there).
     */
    readonly statementTimeoutMs: number;
  };
  /** SVC_ALLOW_UNKNOWN_MIGRATIONS: serve (ready) on a database migrated by a newer version. */
  readonly allowUnknownMigrations: boolean;
  readonly auth: {
    readonly jwtSecret: string;
    /** True when JWT_SECRET was not set (development only). */
    readonly insecureSecret: boolean;
    readonly accessTokenTtlSecs: number;
    readonly refreshTokenTtlSecs: number;
    /** argon2id cost (SVC_ARGON2_*): OWASP defaults m=19456 KiB, t=2, p=1. */
    readonly argon2: { readonly memoryCost: number; readonly timeCost: number; readonly parallelism: number };
    readonly passwordMinLength: number;
    readonly passwordRequireComplexity: boolean;
    readonly adminEmail: string | null;
    readonly adminPassword: string | null;
    readonly adminResetPassword: boolean;
    readonly selfRegistration: boolean;
    readonly selfRegistrationRole: Role;
    readonly selfRegistrationTenant: RegistrationTenant;
    readonly oauth: readonly OAuthProviderConfig[];
  };
  readonly rateLimit: {
    readonly requests: number;
    readonly windowSecs: number;
    readonly trustForwardedFor: boolean;
  };
  readonly jobs: {
    readonly reclaimIntervalSecs: number;
    /** SVC_JOB_RETAIN_SUCCEEDED_HOURS: succeeded jobs are deleted this long after they finished. */
    readonly retainSucceededHours: number;
    /** SVC_JOB_RETAIN_DEAD_DAYS: dead jobs are deleted this long after they died. */
    readonly retainDeadDays: number;
  };
  /** Actions (CONTRACT section 11): writes deeper than maxDepth automated hops enqueue no further action. */
  readonly actions: { readonly maxDepth: number };
  readonly workflows: WorkflowsConfig;
  readonly publicRead: PublicReadConfig;
  /**
   * Built-in projections at start (ADR 021): `changed` builds only a projection that
   * is new or whose definition changed, `always` also re-copies every other one
   * (in the background, as a build); `buildBatch` rows per build transaction.
   */
  readonly projections: { readonly sync: 'changed' | 'always'; readonly buildBatch: number };
  readonly history: { readonly policy: HistoryPolicy; readonly retainDays: number };
  /**
   * SVC_FEED_CURSOR: the change feed's position (ADR 025 decision 4). `global`: the (tx, seq)
   * reader (one node); `tenant`: per-tenant positions (Citus). `auto` (default): `tenant` where
   * the citus extension is installed, else `global`.
   */
  readonly feed: { readonly cursor: 'auto' | 'tenant' | 'global' };
  /** Audit log (CONTRACT section 9); retainDays null keeps every entry. */
  readonly audit: { readonly policy: AuditPolicy; readonly retainDays: number | null };
  readonly realtime: {
    /** Largest client frame handled; above it an `frame_too_large` error frame. */
    readonly maxFrameBytes: number;
    /** Send buffer of one connection; a consumer above it is closed with 4008. */
    readonly maxBufferedBytes: number;
    /** Interval of server pings; a connection that missed the previous pong is dropped. */
    readonly pingMs: number;
    /** Interval of the instance heartbeat; an instance silent for 3 of them is dead. */
    readonly heartbeatMs: number;
    readonly maxChannelsPerConnection: number;
    /** SVC_BUS_URL: a Redis URL for the cross-instance fan-out; null rides Postgres NOTIFY. */
    readonly busUrl: string | null;
  };
  readonly media: MediaConfig;
  /** SVC_METRICS_TOKEN: bearer token for GET /metrics; null = loopback clients only. */
  readonly metrics: { readonly token: string | null };
  /** Bounded work per GraphQL request (docs/adr/013-request-cost-limits.md). */
  readonly graphql: GraphQLLimits;
  /** Named prepared statements kept per pooled connection (least recently used are deallocated). */
  readonly maxPreparedStatements: number;
  readonly http: {
    /** server.headersTimeout: a client must send its headers within this. */
    readonly headersTimeoutMs: number;
    /** server.requestTimeout: the whole request, body included, must arrive within this. */
    readonly requestTimeoutMs: number;
    /** server.maxConnections: sockets above it are refused at accept. */
    readonly maxConnections: number;
  };
}

export interface WorkflowsConfig {
  /** SVC_WORKFLOW_HTTP_ALLOW: origins (`https://hooks.example.com`) an `http` step may reach; empty: none. */
  readonly httpAllow: readonly string[];
  /** SVC_WORKFLOW_LEASE_SECS: how long a runner holds a step; a crashed runner's step is resumed after it. */
  readonly leaseSecs: number;
  /** SVC_WORKFLOW_CONCURRENCY: steps one instance runs at once. */
  readonly concurrency: number;
  /** SVC_WORKFLOW_POLL_MS: how often an idle runner looks for steps other instances made due. */
  readonly pollMs: number;
  /** SVC_WORKFLOW_HTTP_PER_ORIGIN: `http` requests one instance has in flight to one origin; others wait queued. */
  readonly httpPerOrigin: number;
}

export interface MediaConfig {
  readonly driver: 'local' | 's3';
  /** Folder of the local driver (SVC_MEDIA_DIR). */
  readonly dir: string;
  readonly maxBytes: number;
  /** Lowercased content types allowed beside the default ones (SVC_MEDIA_ALLOWED_TYPES). */
  readonly allowedTypes: readonly string[];
  /** Life of a presigned upload and grace of unreferenced bytes before the sweep removes them. */
  readonly uploadTtlSecs: number;
  readonly sweepIntervalSecs: number;
  /** Base URL clients reach this server at (local upload URLs); null: from the request's Host. */
  readonly publicUrl: string | null;
  readonly s3: {
    readonly bucket: string | null;
    readonly endpoint: string | null;
    readonly region: string;
    readonly forcePathStyle: boolean;
    /** AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY / AWS_SESSION_TOKEN; null: the SDK's default chain (profiles, roles). */
    readonly credentials: { readonly accessKeyId: string; readonly secretAccessKey: string; readonly sessionToken?: string } | null;
  };
}

export interface GraphQLLimits {
  /** Root fields (aliases included) of one operation. */
  readonly maxRootFields: number;
  /** Sum of `limit`/`first` (their defaults when absent) over the document. */
  readonly maxRows: number;
  /** Nesting of AND/OR/NOT and operator objects in one `where`. */
  readonly maxWhereDepth: number;
  /** Conditions and values in one `where`. */
  readonly maxWhereNodes: number;
  /** Execution time of one request; above it the request is answered with an error. */
  readonly timeoutMs: number;
  /** Size of one serialized response. */
  readonly maxResponseBytes: number;
  /** Live subscriptions on one graphql-ws socket. */
  readonly maxSubscriptionsPerSocket: number;
  /**
   * SVC_GRAPHQL_EXACT_COUNT_LIMIT: `paginatedRecords.totalCount` is counted exactly up to this many rows;
   * beyond it the planner's estimate is returned with `totalCountIsEstimate: true`.
   */
  readonly exactCountLimit: number;
  /**
   * SVC_GRAPHQL_EXECUTOR: `js` runs operations on graphql-js (one root field returning a leaf
   * without its executor); `jit` compiles each cached operation with graphql-jit (graphql/jit.ts).
   */
  readonly executor: 'js' | 'jit';
}

/** The runner's SVC_MIGRATE_* variables (runtime/db/migrate/settings.ts), each problem reported with the others. */
function readMigrate(r: Readers): MigrateSettings {
  const settings: Record<string, number> = { ...DEFAULT_SETTINGS };
  for (const [key, [name, min, max]] of Object.entries(MIGRATE_VARIABLES)) settings[key] = r.int(name, settings[key], min, max);
  return settings as unknown as MigrateSettings;
}

/** Used only outside production when JWT_SECRET is unset; a warning is logged. */
export const INSECURE_DEV_SECRET = 'svc-gen-insecure-development-secret-change-me';

export function loadConfig(env: Env = process.env): Config {
  const r = readers(env);
  const production = r.oneOf('SVC_ENV', ['production', 'development', 'test'], 'development') === 'production';
  const jwtSecret = r.string('JWT_SECRET');
  if (production && !jwtSecret) r.fail('JWT_SECRET', 'is required when SVC_ENV=production');
  if (jwtSecret && jwtSecret.length < 16) r.fail('JWT_SECRET', 'must be at least 16 characters');
  const databaseUrl = r.string('DATABASE_URL');
  if (production && !databaseUrl) r.fail('DATABASE_URL', 'is required when SVC_ENV=production (no embedded database in production)');
  const http = {
    headersTimeoutMs: r.int('SVC_HTTP_HEADERS_TIMEOUT_MS', 20_000, 100, 3_600_000),
    requestTimeoutMs: r.int('SVC_HTTP_REQUEST_TIMEOUT_MS', 30_000, 100, 3_600_000),
    maxConnections: r.int('SVC_HTTP_MAX_CONNECTIONS', 10_000, 1, 1_000_000),
  };
  if (http.headersTimeoutMs > http.requestTimeoutMs) {
    r.fail('SVC_HTTP_HEADERS_TIMEOUT_MS', `must not exceed SVC_HTTP_REQUEST_TIMEOUT_MS (${http.requestTimeoutMs})`);
  }
  const config: Config = {
    env: production ? 'production' : 'development',
    databaseUrl,
    port: r.int('PORT', 3000, 0, 65535),
    host: r.string('HOST') ?? '0.0.0.0',
    corsOrigins: r.list('CORS_ORIGINS'),
    schemaPath: r.string('SVC_SCHEMA_PATH'),
    logLevel: r.oneOf('SVC_LOG_LEVEL', ['debug', 'info', 'warn', 'error'], 'info'),
    logFormat: r.oneOf('SVC_LOG_FORMAT', ['json', 'pretty'], 'json'),
    maxBodyBytes: r.int('SVC_MAX_BODY_BYTES', 1024 * 1024, 1, 1024 * 1024 * 1024),
    console: r.oneOf('SVC_CONSOLE', ['on', 'off'], 'on') === 'on',
    dbPoolSize: r.int('SVC_DB_POOL_SIZE', 20, 1, 1000),
    allowUnknownMigrations: r.bool('SVC_ALLOW_UNKNOWN_MIGRATIONS', false),
    migrate: readMigrate(r),
    db: readDbTopology(r, databaseUrl),
    auth: {
      jwtSecret: jwtSecret ?? INSECURE_DEV_SECRET,
      insecureSecret: !jwtSecret,
      accessTokenTtlSecs: r.int('SVC_ACCESS_TOKEN_TTL_SECS', 24 * 3600, 1, 365 * 24 * 3600),
      refreshTokenTtlSecs: r.int('SVC_REFRESH_TOKEN_TTL_SECS', 30 * 24 * 3600, 1, 3650 * 24 * 3600),
      argon2: {
        memoryCost: r.int('SVC_ARGON2_MEMORY_KIB', 19_456, 1024, 4 * 1024 * 1024),
        timeCost: r.int('SVC_ARGON2_TIME_COST', 2, 1, 100),
        parallelism: r.int('SVC_ARGON2_PARALLELISM', 1, 1, 64),
      },
      passwordMinLength: r.int('PASSWORD_MIN_LENGTH', 8, 1, 1024),
      passwordRequireComplexity: r.bool('PASSWORD_REQUIRE_COMPLEXITY', true),
      adminEmail: r.string('ADMIN_EMAIL'),
      adminPassword: r.string('ADMIN_PASSWORD'),
      adminResetPassword: r.bool('ADMIN_RESET_PASSWORD', false),
      selfRegistration: r.bool('SVC_ENABLE_SELF_REGISTRATION', false),
      selfRegistrationRole: readRole(r),
      selfRegistrationTenant: readRegistrationTenant(r.string('SVC_SELF_REGISTRATION_TENANT')),
      oauth: OAUTH_PROVIDERS.flatMap((name) => readOAuthProvider(r, name)),
    },
    rateLimit: {
      requests: r.int('RATE_LIMIT_RPS', 100, 1, 10_000_000),
      windowSecs: r.int('RATE_LIMIT_WINDOW_SECS', 60, 1, 86_400),
      trustForwardedFor: r.bool('SVC_TRUST_X_FORWARDED_FOR', true),
    },
    jobs: {
      reclaimIntervalSecs: r.number('SVC_JOB_RECLAIM_INTERVAL', 30, 0.05, 86_400),
      retainSucceededHours: r.number('SVC_JOB_RETAIN_SUCCEEDED_HOURS', 24, 0.01, 87_600),
      retainDeadDays: r.number('SVC_JOB_RETAIN_DEAD_DAYS', 30, 0.01, 36_500),
    },
    actions: { maxDepth: r.int('SVC_ACTION_MAX_DEPTH', 3, 0, 100) },
    workflows: readWorkflows(r),
    publicRead: readPublicRead(env, r),
    projections: {
      sync: r.oneOf('SVC_PROJECTION_SYNC', ['changed', 'always'], 'changed'),
      buildBatch: r.int('SVC_PROJECTION_BUILD_BATCH', 5_000, 1, 100_000),
    },
    history: {
      policy: r.oneOf('SVC_HISTORY_POLICY', ['full', 'retained', 'off'], 'full'),
      retainDays: r.number('SVC_HISTORY_RETAIN_DAYS', 30, 0, 36_500),
    },
    feed: { cursor: r.oneOf('SVC_FEED_CURSOR', ['auto', 'tenant', 'global'], 'auto') },
    media: readMedia(r),
    audit: {
      policy: r.oneOf('SVC_AUDIT_POLICY', ['full', 'metadata', 'off'], 'full'),
      retainDays: r.string('SVC_AUDIT_RETAIN_DAYS') === null ? null : r.int('SVC_AUDIT_RETAIN_DAYS', 0, 1, 36_500),
    },
    metrics: { token: readMetricsToken(r) },
    realtime: {
      maxFrameBytes: r.int('SVC_REALTIME_MAX_FRAME_BYTES', 64 * 1024, 256, 16 * 1024 * 1024),
      maxBufferedBytes: r.int('SVC_REALTIME_MAX_BUFFERED_BYTES', 1024 * 1024, 1024, 1024 * 1024 * 1024),
      pingMs: r.int('SVC_REALTIME_PING_MS', 30_000, 50, 3_600_000),
      heartbeatMs: r.int('SVC_REALTIME_HEARTBEAT_MS', 5_000, 50, 600_000),
      maxChannelsPerConnection: r.int('SVC_REALTIME_MAX_CHANNELS', 100, 1, 100_000),
      busUrl: readBusUrl(r),
    },
    graphql: {
      maxRootFields: r.int('SVC_GRAPHQL_MAX_ROOT_FIELDS', 20, 1, 10_000),
      maxRows: r.int('SVC_GRAPHQL_MAX_ROWS', 5_000, 1, 10_000_000),
      maxWhereDepth: r.int('SVC_GRAPHQL_MAX_WHERE_DEPTH', 10, 1, 1_000),
      maxWhereNodes: r.int('SVC_GRAPHQL_MAX_WHERE_NODES', 500, 1, 1_000_000),
      timeoutMs: r.int('SVC_GRAPHQL_TIMEOUT_MS', 15_000, 10, 3_600_000),
      maxResponseBytes: r.int('SVC_GRAPHQL_MAX_RESPONSE_BYTES', 16 * 1024 * 1024, 1024, 1024 * 1024 * 1024),
      maxSubscriptionsPerSocket: r.int('SVC_GRAPHQL_MAX_SUBSCRIPTIONS', 100, 1, 100_000),
      exactCountLimit: r.int('SVC_GRAPHQL_EXACT_COUNT_LIMIT', 10_000, 1, 10_000_000),
      executor: r.oneOf('SVC_GRAPHQL_EXECUTOR', ['js', 'jit'], 'js'),
    },
    maxPreparedStatements: r.int('SVC_DB_MAX_PREPARED_STATEMENTS', 200, 0, 100_000),
    http,
  };
  r.done();
  return config;
}

function readMedia(r: Readers): MediaConfig {
  const driver = r.oneOf('SVC_MEDIA_DRIVER', ['local', 's3'], 'local');
  const bucket = r.string('SVC_MEDIA_S3_BUCKET');
  if (driver === 's3' && !bucket) r.fail('SVC_MEDIA_S3_BUCKET', 'is required when SVC_MEDIA_DRIVER=s3');
  const allowedTypes = (r.list('SVC_MEDIA_ALLOWED_TYPES') ?? []).map((type) => type.toLowerCase());
  const malformed = allowedTypes.find((type) => !/^[\w.+-]+\/[\w.+-]+$/.test(type));
  if (malformed) r.fail('SVC_MEDIA_ALLOWED_TYPES', `entry "${malformed}" must be a content type such as text/html`);
  return {
    driver,
    dir: r.string('SVC_MEDIA_DIR') ?? '.svc/media',
    maxBytes: r.int('SVC_MEDIA_MAX_BYTES', 10 * 1024 * 1024, 1, 5 * 1024 * 1024 * 1024),
    allowedTypes,
    uploadTtlSecs: r.int('SVC_MEDIA_UPLOAD_TTL_SECS', 3600, 1, 30 * 86_400),
    sweepIntervalSecs: r.number('SVC_MEDIA_SWEEP_INTERVAL_SECS', 300, 0.05, 86_400),
    publicUrl: r.url('SVC_MEDIA_PUBLIC_URL')?.replace(/\/+$/, '') ?? null,
    s3: {
      bucket,
      endpoint: r.url('SVC_MEDIA_S3_ENDPOINT'),
      region: r.string('SVC_MEDIA_S3_REGION') ?? r.string('AWS_REGION') ?? 'us-east-1',
      forcePathStyle: r.bool('SVC_MEDIA_S3_FORCE_PATH_STYLE', false),
      // Read only for the s3 driver: AWS variables meant for other tools must not stop a local server.
      credentials: driver === 's3' ? readAwsCredentials(r) : null,
    },
  };
}

function readAwsCredentials(r: Readers): MediaConfig['s3']['credentials'] {
  const accessKeyId = r.string('AWS_ACCESS_KEY_ID');
  const secretAccessKey = r.string('AWS_SECRET_ACCESS_KEY');
  if (!accessKeyId && !secretAccessKey) return null;
  if (!accessKeyId || !secretAccessKey) {
    if (!accessKeyId) r.fail('AWS_ACCESS_KEY_ID', 'is required when AWS_SECRET_ACCESS_KEY is set');
    else r.fail('AWS_SECRET_ACCESS_KEY', 'is required when AWS_ACCESS_KEY_ID is set');
    return null;
  }
  const sessionToken = r.string('AWS_SESSION_TOKEN');
  return sessionToken ? { accessKeyId, secretAccessKey, sessionToken } : { accessKeyId, secretAccessKey };
}

function readWorkflows(r: Readers): WorkflowsConfig {
  const httpAllow = (r.list('SVC_WORKFLOW_HTTP_ALLOW') ?? []).flatMap((entry) => {
    let url: URL;
    try {
      url = new URL(entry);
    } catch {
      r.fail('SVC_WORKFLOW_HTTP_ALLOW', `entry "${entry}" must be an origin such as https://hooks.example.com`);
      return [];
    }
    if ((url.protocol !== 'https:' && url.protocol !== 'http:') || url.origin + '/' !== url.href.replace(/\/?$/, '/')) {
      r.fail('SVC_WORKFLOW_HTTP_ALLOW', `entry "${entry}" must be an http(s) origin without a path, such as https://hooks.example.com`);
      return [];
    }
    return [url.origin];
  });
  return {
    httpAllow,
    leaseSecs: r.int('SVC_WORKFLOW_LEASE_SECS', 30, 1, 3600),
    concurrency: r.int('SVC_WORKFLOW_CONCURRENCY', 4, 1, 100),
    pollMs: r.int('SVC_WORKFLOW_POLL_MS', 1000, 20, 60_000),
    httpPerOrigin: r.int('SVC_WORKFLOW_HTTP_PER_ORIGIN', 4, 1, 1000),
  };
}

function readBusUrl(r: Readers): string | null {
  const url = r.url('SVC_BUS_URL');
  if (url === null) return null;
  const protocol = new URL(url).protocol;
  if (protocol === 'redis:' || protocol === 'rediss:') return url;
  r.fail('SVC_BUS_URL', `must be a redis:// or rediss:// URL (got "${protocol}")`);
  return null;
}

function readDbTopology(r: Readers, databaseUrl: string | null): Config['db'] {
  const pooler = r.oneOf('SVC_DB_POOLER', ['none', 'transaction'], 'none');
  const directUrl = r.string('SVC_DIRECT_DATABASE_URL');
  if (directUrl !== null && !/^postgres(ql)?:\/\//.test(directUrl)) r.fail('SVC_DIRECT_DATABASE_URL', 'must be a postgres:// URL');
  if (pooler === 'transaction' && databaseUrl !== null && directUrl === null) {
    r.fail('SVC_DIRECT_DATABASE_URL', 'is required when SVC_DB_POOLER=transaction (LISTEN and migrations need a session of their own)');
  }
  const readUrl = r.string('SVC_READ_DATABASE_URL');
  if (readUrl !== null && !/^postgres(ql)?:\/\//.test(readUrl)) r.fail('SVC_READ_DATABASE_URL', 'must be a postgres:// URL');
  return {
    pooler, directUrl, prepared: r.bool('SVC_DB_PREPARED', pooler !== 'transaction'), readUrl,
    idleTimeoutMs: r.int('SVC_DB_IDLE_TIMEOUT_MS', 30_000, 0, 86_400_000),
    statementTimeoutMs: r.int('SVC_DB_STATEMENT_TIMEOUT_MS', 15_000, 0, 86_400_000),
  };
}

function readMetricsToken(r: Readers): string | null {
  const value = r.string('SVC_METRICS_TOKEN');
  if (value === null || value.length >= 16) return value;
  r.fail('SVC_METRICS_TOKEN', 'must be at least 16 characters');
  return null;
}

function readRole(r: Readers): Role {
  const value = r.string('SVC_SELF_REGISTRATION_ROLE');
  if (value === null) return 'Viewer';
  const role = ROLES.find((known) => known.toLowerCase() === value.toLowerCase());
  if (role) return role;
  r.fail('SVC_SELF_REGISTRATION_ROLE', `must be one of ${ROLES.join(', ')}`);
  return 'Viewer';
}

function readRegistrationTenant(value: string | null): RegistrationTenant {
  if (value === null || value === 'none') return { mode: 'none' };
  if (value === 'per-user' || value === 'self') return { mode: 'per-user' };
  return { mode: 'fixed', tenantId: value };
}

function readOAuthProvider(r: Readers, name: OAuthProviderName): OAuthProviderConfig[] {
  const prefix = `OAUTH_${name.toUpperCase()}_`;
  const clientId = r.string(`${prefix}CLIENT_ID`);
  if (!clientId) return [];
  const need = (suffix: string): string => {
    const value = r.string(prefix + suffix);
    if (!value) r.fail(prefix + suffix, `is required when ${prefix}CLIENT_ID is set`);
    return value ?? '';
  };
  return [{
    name,
    clientId,
    clientSecret: need('CLIENT_SECRET'),
    authUrl: r.url(`${prefix}AUTH_URL`) ?? need('AUTH_URL'),
    tokenUrl: r.url(`${prefix}TOKEN_URL`) ?? need('TOKEN_URL'),
    userinfoUrl: r.url(`${prefix}USERINFO_URL`) ?? need('USERINFO_URL'),
    redirectUri: r.url(`${prefix}REDIRECT_URI`),
  }];
}

function readPublicRead(env: Env, r: Readers): PublicReadConfig {
  const models = new Set(r.list('SVC_PUBLIC_READ_MODELS') ?? []);
  const filterFields = new Map<string, string[]>();
  const fixedFilters = new Map<string, Array<[string, string]>>();
  for (const key of Object.keys(env).sort()) {
    const fields = /^SVC_PUBLIC_READ_FIELDS_(.+)$/.exec(key);
    if (fields) filterFields.set(fields[1], r.list(key) ?? []);
    const filter = /^SVC_PUBLIC_READ_FILTER_(.+)$/.exec(key);
    if (filter) fixedFilters.set(filter[1], (r.list(key) ?? []).flatMap((pair) => splitPair(r, key, pair)));
  }
  return { models, filterFields, fixedFilters };
}

function splitPair(r: Readers, variable: string, pair: string): Array<[string, string]> {
  const at = pair.indexOf(':');
  if (at > 0) return [[pair.slice(0, at).trim(), pair.slice(at + 1).trim()]];
  r.fail(variable, `entry "${pair}" must be field:value`);
  return [];
}
