/**
 * Configuration from the environment, validated once at start.
 *
 * Every variable of the specification and of CONTRACT section 7 is read here;
 * a bad value throws ConfigError with a one-line message naming the variable.
 */
import { ROLES, type Role } from '../ir/types.ts';
import { ConfigError, readers, type Env } from './read.ts';

export { ConfigError } from './read.ts';
export type { Env } from './read.ts';

export type HistoryPolicy = 'full' | 'retained' | 'off';
export type LogLevel = 'debug' | 'info' | 'warn' | 'error';
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
  readonly databaseUrl: string | null;
  readonly port: number;
  readonly host: string;
  readonly corsOrigins: readonly string[] | null;
  readonly schemaPath: string | null;
  readonly logLevel: LogLevel;
  readonly maxBodyBytes: number;
  readonly dbPoolSize: number;
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
  readonly jobs: { readonly reclaimIntervalSecs: number };
  readonly publicRead: PublicReadConfig;
  readonly history: { readonly policy: HistoryPolicy; readonly retainDays: number };
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
  };
  readonly mediaDir: string;
}

/** Used only outside production when JWT_SECRET is unset; a warning is logged. */
export const INSECURE_DEV_SECRET = 'svc-gen-insecure-development-secret-change-me';

export function loadConfig(env: Env = process.env): Config {
  const r = readers(env);
  const production = r.oneOf('SVC_ENV', ['production', 'development', 'test'], 'development') === 'production';
  const jwtSecret = r.string('JWT_SECRET');
  if (production && !jwtSecret) {
    throw new ConfigError('JWT_SECRET', 'is required when SVC_ENV=production');
  }
  if (jwtSecret && jwtSecret.length < 16) throw new ConfigError('JWT_SECRET', 'must be at least 16 characters');
  const databaseUrl = r.string('DATABASE_URL');
  if (production && !databaseUrl) {
    throw new ConfigError('DATABASE_URL', 'is required when SVC_ENV=production (no embedded database in production)');
  }
  return {
    env: production ? 'production' : 'development',
    databaseUrl,
    port: r.int('PORT', 3000, 0, 65535),
    host: r.string('HOST') ?? '0.0.0.0',
    corsOrigins: r.list('CORS_ORIGINS'),
    schemaPath: r.string('SVC_SCHEMA_PATH'),
    logLevel: r.oneOf('SVC_LOG_LEVEL', ['debug', 'info', 'warn', 'error'], 'info'),
    maxBodyBytes: r.int('SVC_MAX_BODY_BYTES', 1024 * 1024, 1, 1024 * 1024 * 1024),
    dbPoolSize: r.int('SVC_DB_POOL_SIZE', 20, 1, 1000),
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
      selfRegistrationRole: readRole(r.string('SVC_SELF_REGISTRATION_ROLE')),
      selfRegistrationTenant: readRegistrationTenant(r.string('SVC_SELF_REGISTRATION_TENANT')),
      oauth: OAUTH_PROVIDERS.flatMap((name) => readOAuthProvider(r, name)),
    },
    rateLimit: {
      requests: r.int('RATE_LIMIT_RPS', 100, 1, 10_000_000),
      windowSecs: r.int('RATE_LIMIT_WINDOW_SECS', 60, 1, 86_400),
      trustForwardedFor: r.bool('SVC_TRUST_X_FORWARDED_FOR', true),
    },
    jobs: { reclaimIntervalSecs: r.number('SVC_JOB_RECLAIM_INTERVAL', 30, 0.05, 86_400) },
    publicRead: readPublicRead(env, r),
    history: {
      policy: r.oneOf('SVC_HISTORY_POLICY', ['full', 'retained', 'off'], 'full'),
      retainDays: r.number('SVC_HISTORY_RETAIN_DAYS', 30, 0, 36_500),
    },
    mediaDir: r.string('SVC_MEDIA_DIR') ?? '.svc/media',
    realtime: {
      maxFrameBytes: r.int('SVC_REALTIME_MAX_FRAME_BYTES', 64 * 1024, 256, 16 * 1024 * 1024),
      maxBufferedBytes: r.int('SVC_REALTIME_MAX_BUFFERED_BYTES', 1024 * 1024, 1024, 1024 * 1024 * 1024),
      pingMs: r.int('SVC_REALTIME_PING_MS', 30_000, 50, 3_600_000),
      heartbeatMs: r.int('SVC_REALTIME_HEARTBEAT_MS', 5_000, 50, 600_000),
      maxChannelsPerConnection: r.int('SVC_REALTIME_MAX_CHANNELS', 100, 1, 100_000),
    },
  };
}

function readRole(value: string | null): Role {
  if (value === null) return 'Viewer';
  const role = ROLES.find((known) => known.toLowerCase() === value.toLowerCase());
  if (!role) throw new ConfigError('SVC_SELF_REGISTRATION_ROLE', `must be one of ${ROLES.join(', ')}`);
  return role;
}

function readRegistrationTenant(value: string | null): RegistrationTenant {
  if (value === null || value === 'none') return { mode: 'none' };
  if (value === 'per-user' || value === 'self') return { mode: 'per-user' };
  return { mode: 'fixed', tenantId: value };
}

function readOAuthProvider(r: ReturnType<typeof readers>, name: OAuthProviderName): OAuthProviderConfig[] {
  const prefix = `OAUTH_${name.toUpperCase()}_`;
  const clientId = r.string(`${prefix}CLIENT_ID`);
  if (!clientId) return [];
  const need = (suffix: string): string => {
    const value = r.string(prefix + suffix);
    if (!value) throw new ConfigError(prefix + suffix, `is required when ${prefix}CLIENT_ID is set`);
    return value;
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

function readPublicRead(env: Env, r: ReturnType<typeof readers>): PublicReadConfig {
  const models = new Set(r.list('SVC_PUBLIC_READ_MODELS') ?? []);
  const filterFields = new Map<string, string[]>();
  const fixedFilters = new Map<string, Array<[string, string]>>();
  for (const key of Object.keys(env).sort()) {
    const fields = /^SVC_PUBLIC_READ_FIELDS_(.+)$/.exec(key);
    if (fields) filterFields.set(fields[1], r.list(key) ?? []);
    const filter = /^SVC_PUBLIC_READ_FILTER_(.+)$/.exec(key);
    if (filter) fixedFilters.set(filter[1], (r.list(key) ?? []).map((pair) => splitPair(key, pair)));
  }
  return { models, filterFields, fixedFilters };
}

function splitPair(variable: string, pair: string): [string, string] {
  const at = pair.indexOf(':');
  if (at <= 0) throw new ConfigError(variable, `entry "${pair}" must be field:value`);
  return [pair.slice(0, at).trim(), pair.slice(at + 1).trim()];
}
