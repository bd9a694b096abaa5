import { describe, expect, it } from 'vitest';
import { ConfigError, INSECURE_DEV_SECRET, loadConfig } from '../../runtime/config/index.ts';

const base = { DATABASE_URL: 'postgres://x@127.0.0.1/db' };

describe('loadConfig', () => {
  it('applies the specification defaults', () => {
    const config = loadConfig(base);
    expect(config.port).toBe(3000);
    expect(config.corsOrigins).toBeNull();
    expect(config.rateLimit).toEqual({ requests: 100, windowSecs: 60, trustForwardedFor: true });
    expect(config.jobs.reclaimIntervalSecs).toBe(30);
    expect(config.actions.maxDepth).toBe(3);
    expect(config.auth.passwordMinLength).toBe(8);
    expect(config.auth.passwordRequireComplexity).toBe(true);
    expect(config.auth.selfRegistration).toBe(false);
    expect(config.auth.selfRegistrationRole).toBe('Viewer');
    expect(config.auth.selfRegistrationTenant).toEqual({ mode: 'none' });
    expect(config.history).toEqual({ policy: 'full', retainDays: 30 });
    expect(config.maxBodyBytes).toBe(1024 * 1024);
    expect(config.media.dir).toBe('.svc/media');
    expect(config.logLevel).toBe('info');
  });

  it('reads the exact-count bound and the job retention, refusing what is out of range', () => {
    expect(loadConfig(base).graphql.exactCountLimit).toBe(10_000);
    expect(loadConfig(base).jobs).toMatchObject({ retainSucceededHours: 24, retainDeadDays: 30 });
    expect(loadConfig({ ...base, SVC_GRAPHQL_EXACT_COUNT_LIMIT: '500' }).graphql.exactCountLimit).toBe(500);
    expect(() => loadConfig({ ...base, SVC_GRAPHQL_EXACT_COUNT_LIMIT: '0' })).toThrow(/^SVC_GRAPHQL_EXACT_COUNT_LIMIT /);
    expect(loadConfig(base).graphql.executor).toBe('js');
    expect(loadConfig({ ...base, SVC_GRAPHQL_EXECUTOR: 'jit' }).graphql.executor).toBe('jit');
    expect(() => loadConfig({ ...base, SVC_GRAPHQL_EXECUTOR: 'fast' })).toThrow(/^SVC_GRAPHQL_EXECUTOR /);
    expect(loadConfig({ ...base, SVC_JOB_RETAIN_SUCCEEDED_HOURS: '0.5' }).jobs.retainSucceededHours).toBe(0.5);
    expect(() => loadConfig({ ...base, SVC_JOB_RETAIN_SUCCEEDED_HOURS: '0' })).toThrow(/^SVC_JOB_RETAIN_SUCCEEDED_HOURS /);
    expect(() => loadConfig({ ...base, SVC_JOB_RETAIN_DEAD_DAYS: 'never' })).toThrow(/^SVC_JOB_RETAIN_DEAD_DAYS /);
  });

  it('reads SVC_ACTION_MAX_DEPTH as a small non-negative integer', () => {
    expect(loadConfig({ ...base, SVC_ACTION_MAX_DEPTH: '0' }).actions.maxDepth).toBe(0);
    expect(() => loadConfig({ ...base, SVC_ACTION_MAX_DEPTH: '-1' })).toThrow(/^SVC_ACTION_MAX_DEPTH /);
    expect(() => loadConfig({ ...base, SVC_ACTION_MAX_DEPTH: '1.5' })).toThrow(/^SVC_ACTION_MAX_DEPTH /);
  });

  it('uses an insecure secret only outside production', () => {
    expect(loadConfig(base).auth).toMatchObject({ jwtSecret: INSECURE_DEV_SECRET, insecureSecret: true });
    expect(() => loadConfig({ ...base, SVC_ENV: 'production' })).toThrow(/^JWT_SECRET /);
  });

  it('requires DATABASE_URL in production', () => {
    expect(() => loadConfig({ SVC_ENV: 'production', JWT_SECRET: 'x'.repeat(32) })).toThrow(/^DATABASE_URL /);
    expect(loadConfig({}).databaseUrl).toBeNull();
  });

  it.each([
    ['PORT', 'abc'],
    ['PORT', '70000'],
    ['RATE_LIMIT_RPS', '0'],
    ['SVC_HISTORY_POLICY', 'sometimes'],
    ['SVC_PROJECTION_SYNC', 'never'],
    ['SVC_PROJECTION_BUILD_BATCH', '0'],
    ['SVC_PROJECTION_BUILD_BATCH', 'lots'],
    ['SVC_LOG_LEVEL', 'loud'],
    ['SVC_LOG_FORMAT', 'fancy'],
    ['PASSWORD_REQUIRE_COMPLEXITY', 'maybe'],
    ['SVC_MAX_BODY_BYTES', '-1'],
    ['SVC_SELF_REGISTRATION_ROLE', 'Emperor'],
    ['SVC_PUBLIC_READ_FILTER_Product', 'novalue'],
    ['SVC_MEDIA_DRIVER', 'ftp'],
    ['SVC_MEDIA_MAX_BYTES', '0'],
    ['SVC_MEDIA_MAX_BYTES', '10MB'],
    ['SVC_MEDIA_ALLOWED_TYPES', 'text/html,not a type'],
    ['SVC_MEDIA_UPLOAD_TTL_SECS', '0'],
    ['SVC_MEDIA_SWEEP_INTERVAL_SECS', 'often'],
    ['SVC_MEDIA_PUBLIC_URL', 'not a url'],
    ['SVC_MEDIA_S3_ENDPOINT', 'nowhere'],
    ['SVC_MEDIA_S3_FORCE_PATH_STYLE', 'perhaps'],
    ['SVC_BUS_URL', 'not a url'],
    ['SVC_BUS_URL', 'nats://127.0.0.1:4222'],
    ['SVC_WORKFLOW_HTTP_ALLOW', 'hooks.example.com'],
    ['SVC_WORKFLOW_HTTP_ALLOW', 'https://hooks.example.com/path'],
    ['SVC_WORKFLOW_HTTP_ALLOW', 'ftp://files.example.com'],
    ['SVC_WORKFLOW_LEASE_SECS', '0'],
    ['SVC_WORKFLOW_CONCURRENCY', 'many'],
  ])('names %s when its value %s is bad, in one line', (variable, value) => {
    let error: unknown;
    try {
      loadConfig({ ...base, [variable]: value });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).variable).toBe(variable);
    expect((error as Error).message.startsWith(variable)).toBe(true);
    expect((error as Error).message).not.toContain('\n');
  });

  it('reports every bad or missing variable of one environment at once, a line each naming its variable', () => {
    let error: unknown;
    try {
      loadConfig({ SVC_ENV: 'production', PORT: 'eighty', SVC_METRICS_TOKEN: 'short', SVC_WORKFLOW_HTTP_ALLOW: 'hooks.example.com' });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const lines = (error as Error).message.split('\n');
    expect(lines.map((line) => line.split(' ')[0])).toEqual(['JWT_SECRET', 'DATABASE_URL', 'PORT', 'SVC_WORKFLOW_HTTP_ALLOW', 'SVC_METRICS_TOKEN']);
    expect((error as ConfigError).problems.map((p) => p.variable)).toEqual(lines.map((line) => line.split(' ')[0]));
    expect((error as ConfigError).variable).toBe('JWT_SECRET');
  });

  it('reads the migration runner\'s SVC_MIGRATE_* settings, a bad one reported with the others', () => {
    expect(loadConfig({ ...base, SVC_MIGRATE_CONTRACT_RETRY_SECS: '2', SVC_MIGRATE_WAL_PACE_SECS: '30' }).migrate)
      .toMatchObject({ contractRetrySecs: 2, walPaceSecs: 30, lockTimeoutMs: 100, batchRows: 10_000 });
    expect(() => loadConfig({ ...base, SVC_MIGRATE_BATCH_ROWS: 'many', PORT: 'eighty' }))
      .toThrow(expect.objectContaining({ problems: [expect.objectContaining({ variable: 'PORT' }), expect.objectContaining({ variable: 'SVC_MIGRATE_BATCH_ROWS' })] }));
  });

  it('reads the media settings, and requires a bucket for the s3 driver', () => {
    expect(loadConfig(base).media).toMatchObject({
      driver: 'local', maxBytes: 10 * 1024 * 1024, allowedTypes: [], uploadTtlSecs: 3600, publicUrl: null,
      s3: { bucket: null, endpoint: null, region: 'us-east-1', forcePathStyle: false, credentials: null },
    });
    const s3 = loadConfig({
      ...base, SVC_MEDIA_DRIVER: 's3', SVC_MEDIA_S3_BUCKET: 'b', SVC_MEDIA_S3_ENDPOINT: 'http://127.0.0.1:9000',
      SVC_MEDIA_S3_FORCE_PATH_STYLE: 'true', AWS_ACCESS_KEY_ID: 'k', AWS_SECRET_ACCESS_KEY: 's', SVC_MEDIA_ALLOWED_TYPES: 'Text/HTML',
    }).media;
    expect(s3).toMatchObject({
      driver: 's3', allowedTypes: ['text/html'],
      s3: { bucket: 'b', endpoint: 'http://127.0.0.1:9000/', forcePathStyle: true, credentials: { accessKeyId: 'k', secretAccessKey: 's' } },
    });
    expect(() => loadConfig({ ...base, SVC_MEDIA_DRIVER: 's3' })).toThrow(/^SVC_MEDIA_S3_BUCKET /);
    const s3Base = { ...base, SVC_MEDIA_DRIVER: 's3', SVC_MEDIA_S3_BUCKET: 'b' };
    expect(() => loadConfig({ ...s3Base, AWS_ACCESS_KEY_ID: 'only-the-id' })).toThrow(/^AWS_SECRET_ACCESS_KEY /);
    expect(() => loadConfig({ ...s3Base, AWS_SECRET_ACCESS_KEY: 'only-the-secret' })).toThrow(/^AWS_ACCESS_KEY_ID /);
    expect(loadConfig({ ...base, AWS_ACCESS_KEY_ID: 'for another tool' }).media.s3.credentials).toBeNull();
  });

  it('reads the workflow settings: SVC_WORKFLOW_HTTP_ALLOW as origins', () => {
    expect(loadConfig(base).workflows).toEqual({ httpAllow: [], leaseSecs: 30, concurrency: 4, pollMs: 1000, httpPerOrigin: 4 });
    expect(loadConfig({ ...base, SVC_WORKFLOW_HTTP_PER_ORIGIN: '16' }).workflows.httpPerOrigin).toBe(16);
    expect(() => loadConfig({ ...base, SVC_WORKFLOW_HTTP_PER_ORIGIN: '0' })).toThrow(/SVC_WORKFLOW_HTTP_PER_ORIGIN/);
    const config = loadConfig({ ...base, SVC_WORKFLOW_HTTP_ALLOW: 'https://hooks.example.com, http://127.0.0.1:8080/', SVC_WORKFLOW_LEASE_SECS: '5' });
    expect(config.workflows).toMatchObject({ httpAllow: ['https://hooks.example.com', 'http://127.0.0.1:8080'], leaseSecs: 5 });
  });

  it('reads SVC_BUS_URL (Redis) for the realtime fan-out; unset rides Postgres', () => {
    expect(loadConfig(base).realtime.busUrl).toBeNull();
    expect(loadConfig({ ...base, SVC_BUS_URL: 'redis://127.0.0.1:6379' }).realtime.busUrl).toBe('redis://127.0.0.1:6379');
  });

  it('reads self-registration tenant modes', () => {
    const mode = (value: string) => loadConfig({ ...base, SVC_SELF_REGISTRATION_TENANT: value }).auth.selfRegistrationTenant;
    expect(mode('none')).toEqual({ mode: 'none' });
    expect(mode('per-user')).toEqual({ mode: 'per-user' });
    expect(mode('self')).toEqual({ mode: 'per-user' });
    expect(mode('acme')).toEqual({ mode: 'fixed', tenantId: 'acme' });
  });

  it('discovers OAuth providers and requires their URLs', () => {
    const google = {
      OAUTH_GOOGLE_CLIENT_ID: 'id', OAUTH_GOOGLE_CLIENT_SECRET: 's',
      OAUTH_GOOGLE_AUTH_URL: 'https://a.example/auth', OAUTH_GOOGLE_TOKEN_URL: 'https://a.example/token',
      OAUTH_GOOGLE_USERINFO_URL: 'https://a.example/me',
    };
    expect(loadConfig({ ...base, ...google }).auth.oauth.map((p) => p.name)).toEqual(['google']);
    expect(() => loadConfig({ ...base, ...google, OAUTH_GOOGLE_TOKEN_URL: '' })).toThrow(/^OAUTH_GOOGLE_TOKEN_URL /);
  });

  it('reads the public-read allowlist, fields and fixed filters', () => {
    const config = loadConfig({
      ...base,
      SVC_PUBLIC_READ_MODELS: 'Product, Company',
      SVC_PUBLIC_READ_FIELDS_Product: 'name,category',
      SVC_PUBLIC_READ_FILTER_Product: 'status:active, region:eu',
    });
    expect([...config.publicRead.models]).toEqual(['Product', 'Company']);
    expect(config.publicRead.filterFields.get('Product')).toEqual(['name', 'category']);
    expect(config.publicRead.fixedFilters.get('Product')).toEqual([['status', 'active'], ['region', 'eu']]);
  });

  it('reads the database topology: pooler, direct URL, prepared statements, idle timeout', () => {
    expect(loadConfig(base).db).toEqual({ pooler: 'none', directUrl: null, prepared: true, readUrl: null, idleTimeoutMs: 30_000, statementTimeoutMs: 15_000 });
    expect(loadConfig({ ...base, SVC_DB_IDLE_TIMEOUT_MS: '0' }).db.idleTimeoutMs).toBe(0);
    expect(loadConfig({ ...base, SVC_DB_STATEMENT_TIMEOUT_MS: '0' }).db.statementTimeoutMs).toBe(0);
    for (const bad of ['-1', '1.5', 'soon', '86400001']) {
      expect(() => loadConfig({ ...base, SVC_DB_IDLE_TIMEOUT_MS: bad })).toThrow(/^SVC_DB_IDLE_TIMEOUT_MS /);
      expect(() => loadConfig({ ...base, SVC_DB_STATEMENT_TIMEOUT_MS: bad })).toThrow(/^SVC_DB_STATEMENT_TIMEOUT_MS /);
    }
    const pooled = { ...base, SVC_DB_POOLER: 'transaction', SVC_DIRECT_DATABASE_URL: 'postgres://x@10.0.0.1/db' };
    expect(loadConfig(pooled).db).toEqual({ pooler: 'transaction', directUrl: 'postgres://x@10.0.0.1/db', prepared: false, readUrl: null, idleTimeoutMs: 30_000, statementTimeoutMs: 15_000 });
    expect(loadConfig({ ...base, SVC_READ_DATABASE_URL: 'postgres://x@10.0.0.2/db' }).db.readUrl).toBe('postgres://x@10.0.0.2/db');
    expect(() => loadConfig({ ...base, SVC_READ_DATABASE_URL: 'replica' })).toThrow(/^SVC_READ_DATABASE_URL /);
    // pgbouncer >= 1.21 keeps protocol-level prepared statements: the operator may turn them back on.
    expect(loadConfig({ ...pooled, SVC_DB_PREPARED: 'true' }).db.prepared).toBe(true);
    expect(loadConfig({ ...base, SVC_DB_PREPARED: 'false' }).db.prepared).toBe(false);
    expect(() => loadConfig({ ...base, SVC_DB_POOLER: 'transaction' })).toThrow(/^SVC_DIRECT_DATABASE_URL is required when SVC_DB_POOLER=transaction/);
    expect(() => loadConfig({ ...base, SVC_DB_POOLER: 'session' })).toThrow(/^SVC_DB_POOLER /);
    expect(() => loadConfig({ ...base, SVC_DIRECT_DATABASE_URL: 'mysql://x' })).toThrow(/^SVC_DIRECT_DATABASE_URL /);
  });

  it('reads the metrics token and the unknown-migrations override', () => {
    expect(loadConfig(base).metrics).toEqual({ token: null });
    expect(loadConfig({ ...base, SVC_METRICS_TOKEN: 't'.repeat(16) }).metrics).toEqual({ token: 't'.repeat(16) });
    expect(() => loadConfig({ ...base, SVC_METRICS_TOKEN: 'short' })).toThrow(/^SVC_METRICS_TOKEN /);
    expect(loadConfig(base).allowUnknownMigrations).toBe(false);
    expect(loadConfig({ ...base, SVC_ALLOW_UNKNOWN_MIGRATIONS: 'true' }).allowUnknownMigrations).toBe(true);
  });
});
