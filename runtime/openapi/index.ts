/**
 * `GET /openapi.json` (OpenAPI 3.1 of every REST route) and `GET /docs` (the
 * document rendered by Swagger UI, whose files are served from node_modules:
 * no external request). Provides `ctx.services.openapi`: a capability adds the
 * paths it serves with `ctx.services.openapi.add({...})` during its init. Also
 * `GET /` (http/home.ts): outside production, links to the IDE and these docs.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { notFound } from '../http/errors.ts';
import { home } from '../http/home.ts';
import { PACKAGE_VERSION } from '../package.ts';
import { defineCapability } from '../core/index.ts';
import { createOpenApiDocument, type OpenApiDocument } from './document.ts';
import { AUTH_PATHS, CORE_PATHS, DATA_PATHS, JOB_PATHS } from './paths.ts';

export type { OpenApiDocument, PathsContribution, Operation, Schema } from './document.ts';

declare module '../core/capability.ts' {
  interface Services {
    openapi: OpenApiDocument;
  }
}

const require = createRequire(import.meta.url);
const ASSETS: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'application/javascript; charset=utf-8',
};
const ASSET_PREFIX = '/docs/assets';

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>API reference</title>
<link rel="stylesheet" href="${ASSET_PREFIX}/swagger-ui.css">
</head>
<body>
<div id="reference"></div>
<script src="${ASSET_PREFIX}/swagger-ui-bundle.js"></script>
<script>
  window.ui = SwaggerUIBundle({ url: '/openapi.json', dom_id: '#reference', deepLinking: true });
</script>
</body>
</html>
`;

export const openapi = defineCapability({
  name: 'openapi',
  provides: ['openapi'],
  requires: [],
  async init(ctx) {
    const document = createOpenApiDocument();
    document.add(CORE_PATHS);
    document.add(AUTH_PATHS);
    document.add(JOB_PATHS);
    document.add(DATA_PATHS);
    ctx.services.openapi = document;
    const title = 'svc-gen service REST API';
    ctx.router.get('/openapi.json', (koa) => {
      koa.body = document.render({ title, version: PACKAGE_VERSION });
    });
    ctx.router.get('/', home({ env: ctx.config.env }));
    ctx.router.get('/docs', (koa) => {
      koa.type = 'text/html; charset=utf-8';
      koa.body = PAGE;
    });
    const uiDir = dirname(require.resolve('swagger-ui-dist/package.json'));
    const files = new Map<string, Buffer>();
    ctx.router.get(`${ASSET_PREFIX}/:file`, (koa) => {
      const type = ASSETS[koa.params.file];
      if (!type) throw notFound();
      let body = files.get(koa.params.file);
      if (!body) files.set(koa.params.file, (body = readFileSync(join(uiDir, koa.params.file))));
      koa.type = type;
      koa.set('Cache-Control', 'public, max-age=86400');
      koa.body = body;
    });
  },
});
