/**
 * The GraphQL IDE (GraphiQL 3): served to a browser's `GET /graphql` and at
 * `GET /playground` (which also prefills `?query=` and `?headers=`). Its
 * scripts and styles come from this server's node_modules, never from a CDN,
 * so it works offline.
 *
 * Above the editor, a login form (email and password: `POST /auth/login`) or a
 * pasted token sets the token. It is sent as `Authorization: Bearer` on every
 * request (it wins over the Headers tab, which stays for other headers such
 * as X-Tenant-ID), kept in localStorage, and the schema is fetched again with
 * it. Without a token no introspection is sent. Subscriptions run over
 * `/graphql/ws` (graphql-ws, the token in `connectionParams`).
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type Router from '@koa/router';
import type Koa from 'koa';
import { notFound } from '../http/errors.ts';

const require = createRequire(import.meta.url);
const packageDir = (name: string) => dirname(require.resolve(`${name}/package.json`));

const JS = 'application/javascript; charset=utf-8';
const ASSETS: Record<string, { pkg: string; path: string; type: string }> = {
  'graphiql.min.js': { pkg: 'graphiql', path: 'graphiql.min.js', type: JS },
  'graphiql.min.css': { pkg: 'graphiql', path: 'graphiql.min.css', type: 'text/css; charset=utf-8' },
  'react.production.min.js': { pkg: 'react', path: 'umd/react.production.min.js', type: JS },
  'react-dom.production.min.js': { pkg: 'react-dom', path: 'umd/react-dom.production.min.js', type: JS },
  'graphql-ws.min.js': { pkg: 'graphql-ws', path: 'umd/graphql-ws.min.js', type: JS },
};

export const ASSET_PREFIX = '/graphql/assets';

const DEFAULT_QUERY = `# Log in above (or paste a token), then run:
query Companies {
  records(model: "Company", limit: 10)
}

# Subscriptions run over /graphql/ws, for example:
# subscription { modelChanges { eventType modelName eventId recordId } }
`;

/** Runs in the browser: the token bar, the fetcher (HTTP and WebSocket) and GraphiQL. */
const SCRIPT = `
  const TOKEN_KEY = 'svc-gen:token';
  const params = new URLSearchParams(location.search);
  const httpUrl = new URL('/graphql', location.href).href;
  const wsUrl = httpUrl.replace(/^http/, 'ws') + '/ws';
  const status = document.getElementById('ide-status');
  const tokenInput = document.getElementById('ide-token');
  const root = ReactDOM.createRoot(document.getElementById('graphiql'));
  let token = localStorage.getItem(TOKEN_KEY) || '';
  let wsClient = null;

  function fetcherFor(current) {
    if (wsClient) wsClient.dispose();
    wsClient = graphqlWs.createClient({
      url: wsUrl, lazy: true, retryAttempts: 0,
      connectionParams: () => (current ? { authorization: 'Bearer ' + current } : {}),
    });
    const base = GraphiQL.createFetcher({ url: httpUrl, wsClient });
    return (request, options) => {
      const headers = { ...(options && options.headers) };
      if (current) {
        for (const name of Object.keys(headers)) if (name.toLowerCase() === 'authorization') delete headers[name];
        headers.Authorization = 'Bearer ' + current;
      }
      // GraphiQL's own parse of the editor lags behind by a debounce: run right after an edit, the
      // operation name and kind may still be those of the previous text. Take them from the text sent.
      const document = parsed(request.query);
      if (!document) return base(request, { ...options, headers });
      const names = document.definitions.filter((d) => d.kind === 'OperationDefinition').map((d) => (d.name ? d.name.value : null));
      const operationName = names.includes(request.operationName) ? request.operationName
        : names.length === 1 ? names[0] : request.operationName;
      return base({ ...request, operationName }, { ...options, headers, documentAST: document });
    };
  }

  function parsed(query) {
    try {
      return GraphiQL.GraphQL.parse(query);
    } catch {
      return undefined;
    }
  }

  function render() {
    tokenInput.value = token;
    status.textContent = token ? 'token set: the schema is loaded with it' : 'not logged in: log in or paste a token to load the schema';
    root.render(React.createElement(GraphiQL, {
      fetcher: fetcherFor(token),
      schema: token ? undefined : null,
      defaultQuery: ${JSON.stringify(DEFAULT_QUERY)},
      query: params.get('query') ?? undefined,
      headers: params.get('headers') ?? undefined,
      shouldPersistHeaders: true,
      isHeadersEditorEnabled: true,
    }));
  }

  function useToken(next) {
    token = next.trim().replace(/^Bearer\\s+/i, '');
    if (token) localStorage.setItem(TOKEN_KEY, token); else localStorage.removeItem(TOKEN_KEY);
    render();
  }

  document.getElementById('ide-login').addEventListener('submit', async (event) => {
    event.preventDefault();
    const form = new FormData(event.target);
    status.textContent = 'logging in…';
    try {
      const response = await fetch(new URL('/auth/login', location.href), {
        method: 'POST', headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: form.get('email'), password: form.get('password') }),
      });
      const body = await response.json();
      if (!response.ok) { status.textContent = 'login failed: ' + (body.error || response.status); return; }
      useToken(body.token);
      status.textContent = 'logged in as ' + body.user.email + ' (' + body.user.role + ')';
    } catch (error) {
      status.textContent = 'login failed: ' + error.message;
    }
  });
  document.getElementById('ide-use-token').addEventListener('click', () => useToken(tokenInput.value));
  document.getElementById('ide-logout').addEventListener('click', () => useToken(''));
  render();
`;

function page(): string {
  return `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>svc-gen GraphQL</title>
  <style>
    body { margin: 0; height: 100vh; display: flex; flex-direction: column; font: 13px system-ui, sans-serif; }
    #ide-bar { display: flex; flex-wrap: wrap; gap: 8px; align-items: center; padding: 6px 10px; border-bottom: 1px solid #ddd; }
    #ide-bar form { display: flex; gap: 6px; align-items: center; margin: 0; }
    #ide-bar input { font: inherit; padding: 2px 4px; }
    #ide-token { width: 22em; }
    #ide-status { color: #555; }
    #graphiql { flex: 1; min-height: 0; }
  </style>
  <link rel="stylesheet" href="${ASSET_PREFIX}/graphiql.min.css">
  <script src="${ASSET_PREFIX}/react.production.min.js"></script>
  <script src="${ASSET_PREFIX}/react-dom.production.min.js"></script>
  <script src="${ASSET_PREFIX}/graphiql.min.js"></script>
  <script src="${ASSET_PREFIX}/graphql-ws.min.js"></script>
</head>
<body>
  <div id="ide-bar">
    <form id="ide-login">
      <input name="email" type="email" placeholder="email" autocomplete="username" required>
      <input name="password" type="password" placeholder="password" autocomplete="current-password" required>
      <button type="submit">Log in</button>
    </form>
    <span>or token</span>
    <input id="ide-token" type="password" placeholder="paste an access token" autocomplete="off">
    <button id="ide-use-token" type="button">Use token</button>
    <button id="ide-logout" type="button">Log out</button>
    <span id="ide-status"></span>
  </div>
  <div id="graphiql">Loading…</div>
  <script>${SCRIPT}</script>
</body>
</html>`;
}

/** Mounts `/playground` and the IDE's assets; returns the page's handler for a browser's `GET /graphql`. */
export function mountIde(router: Router): Koa.Middleware {
  const html = page();
  const files = new Map<string, Buffer>();
  const serveIde: Koa.Middleware = async function serveIde(koa) {
    koa.type = 'text/html; charset=utf-8';
    koa.vary('Accept');
    koa.body = html;
  };
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
  return serveIde;
}
