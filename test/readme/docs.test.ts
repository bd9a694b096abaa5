/**
 * Documents that describe code, checked against that code: ADR 002 names every
 * place that writes a tenant predicate by hand, ADR 013 names every limit the
 * configuration has for a request's cost (and the statement timeout that
 * bounds what a GraphQL timeout leaves running), and docs/jobs.md states the
 * tenant rule of CONTRACT section 8 for jobs.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/service.ts';

const read = (path: string) => readFileSync(join(REPO_ROOT, path), 'utf8');

function sources(dir: string): string[] {
  return readdirSync(join(REPO_ROOT, dir), { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts'))
    .map((entry) => relative(REPO_ROOT, join(entry.parentPath, entry.name)));
}

describe('docs against the code they describe', () => {
  it('ADR 002 names every file that writes a tenant predicate by hand', () => {
    const adr = read('docs/adr/002-tenant-scope.md');
    const byHand = sources('runtime')
      .filter((path) => path !== 'runtime/tenancy/index.ts' && !path.includes('/auth/'))
      // a bound value, or the worker plane's token row (compared inline, or handed to svc_jobs_pick)
      .filter((path) => /\btenant_id"? = (\$\d|a\.tenant_id\b)|svc_jobs_pick\([^)]*a\.tenant_id/.test(read(path)));
    expect(byHand.length).toBeGreaterThan(0);
    expect(byHand.filter((path) => !adr.includes(path))).toEqual([]);
    for (const name of ['resolveScope', 'requestScope', 'bindTo', 'TenantScope.GLOBAL']) expect(adr).toContain(name);
  });

  it('ADR 013 names every request limit of the configuration', () => {
    const adr = read('docs/adr/013-request-cost-limits.md');
    const config = read('runtime/config/index.ts');
    const limits = [...config.matchAll(/'((?:SVC_GRAPHQL|SVC_HTTP)_[A-Z_]+|SVC_DB_STATEMENT_TIMEOUT_MS|SVC_DB_MAX_PREPARED_STATEMENTS)'/g)].map(([, name]) => name);
    expect(limits.length).toBeGreaterThan(8);
    expect(limits.filter((name) => !adr.includes(name))).toEqual([]);
    expect(adr).toContain(`${read('runtime/graphql/cost.ts').match(/MAX_TOKENS = ([\d_]+)/)![1].replace('_', ',')} tokens`);
  });

  it('docs/jobs.md gives tenant-less users the global scope (CONTRACT section 8)', () => {
    const jobs = read('docs/jobs.md');
    const tenants = jobs.slice(jobs.indexOf('- **Tenants**'), jobs.indexOf('- **Realtime**'));
    expect(tenants).toContain('global scope');
    expect(tenants).not.toMatch(/reads any job|sees every tenant/);
    expect(tenants).toMatch(/from any other tenant-less user `X-Tenant-ID` is 403/);
  });
});
