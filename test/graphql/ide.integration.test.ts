/**
 * The GraphQL IDE in headless Chromium: it loads with no network access
 * beyond this server (assets served locally), takes an Authorization header
 * in its Headers editor, runs a query and shows the result.
 */
import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestService } from '../helpers/service.ts';
import { clientFor, create, startRecordsService } from '../records/helpers.ts';

const CHROMIUM = '/usr/bin/chromium';
let service: TestService;
let browser: Browser;

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium`);
  service = await startRecordsService();
  await create(await clientFor(service, { role: 'Manager' }), 'Company', { name: 'Shown In IDE' });
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
});
afterAll(async () => {
  await browser?.close();
  await service?.close();
});

describe('GraphQL IDE', () => {
  it('serves its assets itself', async () => {
    for (const path of ['/graphql/assets/graphiql.min.js', '/graphql/assets/graphiql.min.css', '/graphql/assets/react.production.min.js', '/graphql/assets/react-dom.production.min.js']) {
      const response = await fetch(service.url + path);
      expect(response.status, path).toBe(200);
    }
    expect((await fetch(`${service.url}/graphql/assets/package.json`)).status).toBe(404);
    const html = await (await fetch(`${service.url}/playground`)).text();
    expect(html).toContain('/graphql/assets/graphiql.min.js');
    expect(html).not.toMatch(/https?:\/\//);
  });

  it('runs a query with an Authorization header set in the Headers editor', async () => {
    const token = await service.token({ role: 'Manager' });
    const page = await browser.newPage();
    const outside: string[] = [];
    // Offline: any request that leaves this server fails the test.
    await page.route('**/*', (route) => {
      if (route.request().url().startsWith(service.url)) return route.continue();
      outside.push(route.request().url());
      return route.abort();
    });
    const query = '{ records(model: "Company") }';
    await page.goto(`${service.url}/graphql?query=${encodeURIComponent(query)}`);
    await page.waitForSelector('.graphiql-execute-button', { timeout: 15_000 });
    // The Headers tab is open by default: put the token into its editor, as a user would.
    const headers = JSON.stringify({ Authorization: `Bearer ${token}` });
    await page.evaluate((text) => {
      // Runs in the browser (the test's tsconfig has no DOM types).
      type Editor = { CodeMirror: { getValue(): string; setValue(v: string): void } };
      const editors = [...(globalThis as any).document.querySelectorAll('.graphiql-editor-tool .CodeMirror')] as Editor[];
      // The IDE pre-fills the headers editor with an Authorization template to complete.
      const headersEditor = editors.find((e) => e.CodeMirror.getValue().includes('Authorization'));
      headersEditor!.CodeMirror.setValue(text);
    }, headers);
    await page.click('.graphiql-execute-button');
    await page.waitForFunction(() => (globalThis as any).document.querySelector('.result-window')?.textContent?.includes('Shown In IDE'), undefined, { timeout: 15_000 });
    const result = await page.textContent('.result-window');
    expect(result).toContain('"records"');
    expect(outside).toEqual([]);
    await page.close();
  });
});
