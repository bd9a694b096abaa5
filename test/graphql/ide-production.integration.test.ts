/** The GraphQL IDE is a development tool: production serves the API only, over GET as over POST. */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestService, type TestService } from '../helpers/service.ts';

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService({ env: { SVC_ENV: 'production' } });
});
afterAll(() => svc?.close());

const BROWSER_ACCEPT = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';

it('serves no IDE in production, and the API still answers', async () => {
  const playground = await fetch(`${svc.url}/playground`, { headers: { accept: BROWSER_ACCEPT } });
  expect(playground.status).toBe(404);
  expect(playground.headers.get('content-type')).toContain('application/json');
  expect((await fetch(`${svc.url}/graphql/assets/graphiql.min.js`)).status).toBe(404);
  // A browser's GET /graphql is a GraphQL request like any other: no HTML, a GraphQL error.
  const page = await fetch(`${svc.url}/graphql`, { headers: { accept: BROWSER_ACCEPT } });
  expect(page.status).toBe(401);
  expect(page.headers.get('content-type')).toContain('application/json');
  expect(await page.json()).toEqual({ errors: [{ message: 'authentication required', extensions: { code: 'UNAUTHORIZED' } }] });
  const token = await svc.token({ role: 'Admin' });
  const response = await fetch(`${svc.url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ query: '{ records(model: "Project") }' }),
  });
  expect(await response.json()).toEqual({ data: { records: [] } });
  const get = await fetch(`${svc.url}/graphql?query=${encodeURIComponent('{ records(model: "Project") }')}`, {
    headers: { authorization: `Bearer ${token}` },
  });
  expect(get.status).toBe(200);
  expect(await get.json()).toEqual({ data: { records: [] } });
});
