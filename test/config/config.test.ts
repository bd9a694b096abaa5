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
    expect(config.auth.passwordMinLength).toBe(8);
    expect(config.auth.passwordRequireComplexity).toBe(true);
    expect(config.auth.selfRegistration).toBe(false);
    expect(config.auth.selfRegistrationRole).toBe('Viewer');
    expect(config.auth.selfRegistrationTenant).toEqual({ mode: 'none' });
    expect(config.history).toEqual({ policy: 'full', retainDays: 30 });
    expect(config.maxBodyBytes).toBe(1024 * 1024);
    expect(config.mediaDir).toBe('.svc/media');
    expect(config.logLevel).toBe('info');
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
    ['SVC_LOG_LEVEL', 'loud'],
    ['PASSWORD_REQUIRE_COMPLEXITY', 'maybe'],
    ['SVC_MAX_BODY_BYTES', '-1'],
    ['SVC_SELF_REGISTRATION_ROLE', 'Emperor'],
    ['SVC_PUBLIC_READ_FILTER_Product', 'novalue'],
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
});
