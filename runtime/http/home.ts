/**
 * `GET /` outside production: where a newcomer's browser lands first. It
 * points at the GraphQL IDE and the REST reference (a small page for a
 * browser, JSON for any other client). In production it is the usual JSON 404,
 * thrown so that the one REST error renderer answers it.
 */
import type Koa from 'koa';
import { notFound } from './errors.ts';

export interface HomeOptions {
  readonly env: 'production' | 'development';
}

const LINKS = { graphql: '/graphql', ide: '/graphql', docs: '/docs', openapi: '/openapi.json', health: '/health', ready: '/ready' } as const;

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>svc-gen</title>
<style>body { font: 16px/1.5 system-ui, sans-serif; max-width: 40rem; margin: 3rem auto; padding: 0 1rem; } code { font-size: 0.9em; }</style>
</head>
<body>
<h1>svc-gen service</h1>
<ul>
<li><a href="${LINKS.ide}">GraphQL IDE</a>: log in with email and password, run queries and subscriptions (<code>POST ${LINKS.graphql}</code> for clients).</li>
<li><a href="${LINKS.docs}">REST API reference</a>: every REST route (<code>${LINKS.openapi}</code> for tools).</li>
<li><a href="/console">Operator console</a> at <code>/console</code>: records, jobs, workflows, audit log, media, schema.</li>
</ul>
<p>This page is served outside production only.</p>
</body>
</html>
`;

export function home(options: HomeOptions): Koa.Middleware {
  return async function home(koa) {
    if (options.env === 'production') throw notFound();
    if (koa.accepts()[0] === 'text/html') {
      koa.type = 'text/html; charset=utf-8';
      koa.body = PAGE;
      return;
    }
    koa.body = { service: 'svc-gen', ...LINKS, console: '/console' };
  };
}
