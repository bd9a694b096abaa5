/**
 * The pages a newcomer opens first, in headless Chromium (Debian's chromium,
 * driven by playwright-core, as the IDE test does): `/docs` renders every
 * operation with no Swagger UI error or warning banner (it flagged the
 * document's `jsonSchemaDialect`), and `GET /` in development points at the
 * IDE and the API docs, as a page for a browser and as JSON for other clients.
 * In production `GET /` stays the JSON 404.
 */
import type { Browser } from 'playwright-core';
import { launchChromium } from '../helpers/browser.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../helpers/service.ts';


let service: TestService;
let browser: Browser;

beforeAll(async () => {
  service = await startTestService();
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await service?.close();
});

describe('GET /docs in a browser', () => {
  it('renders every operation with no error or warning banner', async () => {
    const page = await browser.newPage();
    const outside: string[] = [];
    await page.route('**/*', (route) => {
      if (route.request().url().startsWith(service.url)) return route.continue();
      outside.push(route.request().url());
      return route.abort();
    });
    const consoleProblems: string[] = [];
    page.on('console', (message) => {
      if (message.type() === 'error' || message.type() === 'warning') consoleProblems.push(message.text());
    });
    await page.goto(`${service.url}/docs`);
    await page.waitForSelector('.opblock', { timeout: 20_000 });
    // Swagger UI parses and validates the document after the first render: wait until the
    // operations of the whole document are shown, then read what the page says.
    const document = (await (await fetch(`${service.url}/openapi.json`)).json()) as { paths: Record<string, object> };
    const operations = Object.values(document.paths).reduce((n, methods) => n + Object.keys(methods).length, 0);
    await page.waitForFunction((n) => (globalThis as any).document.querySelectorAll('.opblock').length >= n, operations, { timeout: 30_000 });
    const banners = await page.$$eval('.errors-wrapper, .errors, .error-wrapper, .loading-container .error', (nodes) => nodes.map((node) => node.textContent ?? ''));
    const text = (await page.textContent('body')) ?? '';
    expect(banners).toEqual([]);
    expect(text).not.toMatch(/jsonSchemaDialect/i);
    expect(text).not.toMatch(/Errors\s*Hide/);
    expect(consoleProblems.filter((line) => /jsonSchemaDialect/i.test(line))).toEqual([]);
    expect(text).toContain('/auth/login');
    expect(outside).toEqual([]);
    await page.close();
  }, 90_000);
});

describe('GET /', () => {
  it('points a browser at the IDE and the API docs, with links that answer', async () => {
    const page = await browser.newPage();
    const response = await page.goto(`${service.url}/`);
    expect(response?.status()).toBe(200);
    const links = await page.$$eval('a', (nodes) => nodes.map((node) => node.getAttribute('href')));
    expect(links).toEqual(expect.arrayContaining(['/graphql', '/docs']));
    for (const link of links) {
      expect((await fetch(service.url + link!, { headers: { accept: 'text/html' } })).status, String(link)).toBe(200);
    }
    expect(await page.textContent('body')).toContain('/console');
    await page.close();
  });

  it('answers JSON to a client that does not ask for HTML', async () => {
    const response = await fetch(`${service.url}/`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('application/json');
    expect(await response.json()).toMatchObject({ graphql: '/graphql', ide: '/graphql', docs: '/docs', openapi: '/openapi.json' });
  });

  it('stays the JSON 404 in production', async () => {
    const production = await startTestService({ env: { SVC_ENV: 'production' } });
    try {
      for (const accept of ['text/html', 'application/json']) {
        const response = await fetch(`${production.url}/`, { headers: { accept } });
        expect(response.status).toBe(404);
        expect(await response.json()).toEqual({ error: 'not found', code: 'NOT_FOUND' });
      }
    } finally {
      await production.close();
    }
  });
});
