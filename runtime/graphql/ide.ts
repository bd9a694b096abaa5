/**
 * The GraphQL IDE (GraphiQL 3) at `GET /graphql` and `GET /playground`. Its
 * scripts and styles are served by this server from node_modules, never from
 * a CDN, so it works offline. The Headers tab sets `Authorization`; headers
 * persist in the browser's localStorage.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type Router from '@koa/router';
import type Koa from 'koa';
import { notFound } from '../http/errors.ts';

const require = createRequire(import.meta.url);
const packageDir = (name: string) => dirname(require.resolve(`${name}/package.json`));

const ASSETS: Record<string, { pkg: string; path: string; type: string }> = {
  'graphiql.min.js': { pkg: 'graphiql', path: 'graphiql.min.js', type: 'application/javascript; charset=utf-8' },
  'graphiql.min.css': { pkg: 'graphiql', path: 'graphiql.min.css', type: 'text/css; charset=utf-8' },
  'react.production.min.js': { pkg: 'react', path: 'umd/react.production.min.js', type: 'application/javascript; charset=utf-8' },
  'react-dom.production.min.js': { pkg: 'react-dom', path: 'umd/react-dom.production.min.js', type: 'application/javascript; charset=utf-8' },
};

export const ASSET_PREFIX = '/graphql/assets';

const DEFAULT_QUERY = `# Set "Authorization": "Bearer <token>" in the Headers tab below, then run:
query Companies {
  records(model: "Company", limit: 10)
}
`;

function page(): string {
  const script = `
    const params = new URLSearchParams(location.search);
    const fetcher = GraphiQL.createFetcher({ url: new URL('/graphql', location.href).href });
    ReactDOM.createRoot(document.getElementById('graphiql')).render(React.createElement(GraphiQL, {
      fetcher,
      defaultQuery: ${JSON.stringify(DEFAULT_QUERY)},
      query: params.get('query') ?? undefined,
      defaultHeaders: JSON.stringify({ Authorization: 'Bearer <token>' }, null, 2),
      headers: params.get('headers') ?? undefined,
      shouldPersistHeaders: true,
      isHeadersEditorEnabled: true,
      defaultEditorToolsVisibility: 'headers',
    }));`;
  return `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>svc-gen GraphQL</title>
  <style>body { margin: 0; height: 100vh; } #graphiql { height: 100vh; }</style>
  <link rel="stylesheet" href="${ASSET_PREFIX}/graphiql.min.css">
  <script src="${ASSET_PREFIX}/react.production.min.js"></script>
  <script src="${ASSET_PREFIX}/react-dom.production.min.js"></script>
  <script src="${ASSET_PREFIX}/graphiql.min.js"></script>
</head>
<body>
  <div id="graphiql">Loading…</div>
  <script>${script}</script>
</body>
</html>`;
}

export function mountIde(router: Router): void {
  const html = page();
  const files = new Map<string, Buffer>();
  const serveIde = (koa: Koa.Context) => {
    koa.type = 'text/html; charset=utf-8';
    koa.body = html;
  };
  router.get('/graphql', serveIde);
  router.get('/playground', serveIde);
  router.get(`${ASSET_PREFIX}/:file`, (koa) => {
    const asset = Object.hasOwn(ASSETS, koa.params.file) ? ASSETS[koa.params.file] : undefined;
    if (!asset) throw notFound();
    let body = files.get(koa.params.file);
    if (!body) files.set(koa.params.file, (body = readFileSync(join(packageDir(asset.pkg), asset.path))));
    koa.type = asset.type;
    koa.set('Cache-Control', 'public, max-age=86400');
    koa.body = body;
  });
}
