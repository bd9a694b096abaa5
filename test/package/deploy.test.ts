/**
 * Every way deploy/ runs a service sets SVC_ENV=production: without it the
 * server runs in development (the specification's default), where /meta/schema,
 * /schema.ts and the GraphQL IDE are open to anyone.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/service.ts';

const read = (path: string) => readFileSync(join(REPO_ROOT, path), 'utf8');

describe('deployment files', () => {
  it("the Dockerfile's runtime stage sets SVC_ENV=production", () => {
    const runtime = read('deploy/Dockerfile').split(/^FROM /m).find((stage) => / AS runtime\n/.test(stage));
    expect(runtime).toBeDefined();
    expect(runtime).toMatch(/^ENV .*\bSVC_ENV=production\b/m);
  });

  it('docker-compose.yml sets SVC_ENV: production for every svc-gen container', () => {
    const services = read('deploy/docker-compose.yml').split(/^ {2}(?=[a-z]+:\n)/m).slice(1);
    const svcGen = services.filter((service) => service.includes('deploy/Dockerfile'));
    expect(svcGen.map((service) => service.split(':')[0])).toEqual(['migrate', 'service']);
    for (const service of svcGen) expect(service).toMatch(/^ {6}SVC_ENV: production$/m);
  });

  it('the systemd unit sets SVC_ENV=production', () => {
    expect(read('deploy/svc-gen.service')).toMatch(/^Environment=.*\bSVC_ENV=production\b/m);
  });

  it('docs/deploy.md sets SVC_ENV=production wherever it runs a service', () => {
    const doc = read('docs/deploy.md');
    for (const section of ['## 2. Container image', '## 3. systemd']) {
      const body = doc.split(section)[1].split('\n## ')[0];
      expect(body, section).toContain('SVC_ENV=production');
    }
    expect(doc).toMatch(/^\| SVC_ENV \|.*set it in every deployment/m);
  });
});
