/** The GraphQL IDE is a development tool: production serves the API only. */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestService, type TestService } from '../helpers/service.ts';

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService({ env: { SVC_ENV: 'production' } });
});
afterAll(() => svc?.close());

it('serves no IDE in production, and the API still answers', async () => {
  for (const path of ['/graphql', '/playground']) {
    const response = await fetch(`${svc.url}${path}`);
    expect([404, 405]).toContain(response.status);
    expect(response.headers.get('content-type')).toContain('application/json');
  }
  const token = await svc.token({ role: 'Admin' });
  const response = await fetch(`${svc.url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ query: '{ records(model: "Project") }' }),
  });
  expect(await response.json()).toEqual({ data: { records: [] } });
});
