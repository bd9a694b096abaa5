/**
 * The GraphQL IDE in headless Chromium (Debian's chromium, driven by
 * playwright-core): it loads with no network access beyond this server, logs
 * in with email and password (the schema is then fetched with the token), runs
 * a query, and receives a subscription event over /graphql/ws when the test
 * creates a record over HTTP. Screenshots are compared with stored references
 * (test/graphql/ide-screenshots; `UPDATE_GOLDEN=1` rewrites them, refused
 * under CI) with a generous tolerance; the latest ones are kept in
 * tmp/ide-screenshots for inspection.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { launchChromium } from '../helpers/browser.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestService } from '../helpers/service.ts';
import { clientFor, create, startRecordsService, type Gql } from '../records/helpers.ts';

const ADMIN_EMAIL = 'ide-admin@example.com';
const ADMIN_PASSWORD = 'ide-password-123';
const REFERENCES = resolve(import.meta.dirname, 'ide-screenshots');
const ARTIFACTS = resolve(import.meta.dirname, '..', '..', 'tmp', 'ide-screenshots');
/**
 * Share of pixels allowed to differ. Ids and timestamps in the result change
 * every run (about 0.2% of the pixels); the query's result in place of the
 * subscription's differs by about 1.4%.
 */
const MAX_DIFF = 0.006;

let service: TestService;
let browser: Browser;
let manager: Gql;

beforeAll(async () => {
  service = await startRecordsService({ env: { ADMIN_EMAIL, ADMIN_PASSWORD } });
  manager = await clientFor(service, { role: 'Manager' });
  await create(manager, 'Company', { name: 'Shown In IDE' });
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await service?.close();
});

/** A page that may reach this server only: any other request fails the test. */
async function offlinePage(): Promise<{ page: Page; outside: string[]; sent: Array<{ url: string; auth: string | null; body: string | null }> }> {
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 }, deviceScaleFactor: 1 });
  const outside: string[] = [];
  const sent: Array<{ url: string; auth: string | null; body: string | null }> = [];
  await page.route('**/*', (route) => {
    const request = route.request();
    if (!request.url().startsWith(service.url)) {
      outside.push(request.url());
      return route.abort();
    }
    sent.push({ url: request.url(), auth: request.headers().authorization ?? null, body: request.postData() });
    return route.continue();
  });
  return { page, outside, sent };
}

/** Runs in the browser (the test's tsconfig has no DOM types): the text of an editor. */
function setEditor(page: Page, selector: string, text: string) {
  return page.evaluate(([css, value]) => {
    const element = (globalThis as any).document.querySelector(css);
    element.CodeMirror.setValue(value);
  }, [selector, text] as const);
}

/** The result pane's text, read from its CodeMirror (its DOM text holds gutter and hidden characters). */
const resultText = (page: Page) => page.evaluate(() => (globalThis as any).document.querySelector('.result-window .CodeMirror')?.CodeMirror.getValue() ?? '');

async function waitForResult(page: Page, text: string) {
  await page.waitForFunction((t) => ((globalThis as any).document.querySelector('.result-window')?.textContent ?? '').includes(t), text, { timeout: 15_000 });
}

/**
 * Compares a screenshot with its reference: the share of pixels whose colour
 * differs noticeably must stay under MAX_DIFF. Decoded and compared in the
 * browser's canvas, so no image library is needed.
 */
async function compareScreenshot(page: Page, name: string): Promise<void> {
  const actual = await page.screenshot({ animations: 'disabled', caret: 'hide' });
  mkdirSync(ARTIFACTS, { recursive: true });
  writeFileSync(join(ARTIFACTS, `${name}.png`), actual);
  const referencePath = join(REFERENCES, `${name}.png`);
  if (process.env.UPDATE_GOLDEN === '1') {
    if (process.env.CI) throw new Error('UPDATE_GOLDEN is refused under CI');
    mkdirSync(REFERENCES, { recursive: true });
    writeFileSync(referencePath, actual);
  }
  if (!existsSync(referencePath)) throw new Error(`no reference screenshot ${referencePath}: run this test once with UPDATE_GOLDEN=1`);
  const reference = readFileSync(referencePath);
  const compare = await browser.newPage();
  const diff = await compare.evaluate(async ([a, b]) => {
    const g = globalThis as any;
    const load = async (base64: string) => g.createImageBitmap(await (await g.fetch(`data:image/png;base64,${base64}`)).blob());
    const [left, right] = await Promise.all([load(a), load(b)]);
    if (left.width !== right.width || left.height !== right.height) return 1;
    const pixels = (image: any) => {
      const canvas = new g.OffscreenCanvas(image.width, image.height);
      const context = canvas.getContext('2d');
      context.drawImage(image, 0, 0);
      return context.getImageData(0, 0, image.width, image.height).data as Uint8ClampedArray;
    };
    const [p, q] = [pixels(left), pixels(right)];
    let differing = 0;
    for (let i = 0; i < p.length; i += 4) {
      if (Math.abs(p[i] - q[i]) + Math.abs(p[i + 1] - q[i + 1]) + Math.abs(p[i + 2] - q[i + 2]) > 48) differing++;
    }
    return differing / (p.length / 4);
  }, [actual.toString('base64'), reference.toString('base64')] as const);
  await compare.close();
  expect(diff, `${name}: ${(diff * 100).toFixed(2)}% of pixels differ from ${referencePath} (see ${ARTIFACTS})`).toBeLessThan(MAX_DIFF);
}

describe('GraphQL IDE', () => {
  it('serves its assets itself', async () => {
    for (const path of ['graphiql.min.js', 'graphiql.min.css', 'react.production.min.js', 'react-dom.production.min.js', 'graphql-ws.min.js']) {
      const response = await fetch(`${service.url}/graphql/assets/${path}`);
      expect(response.status, path).toBe(200);
    }
    expect((await fetch(`${service.url}/graphql/assets/package.json`)).status).toBe(404);
    const html = await (await fetch(`${service.url}/playground`)).text();
    expect(html).toContain('/graphql/assets/graphiql.min.js');
    expect(html).not.toMatch(/https?:\/\//);
  });

  it('logs in, fetches the schema with the token, runs a query and receives a subscription event', async () => {
    const { page, outside, sent } = await offlinePage();
    await page.goto(`${service.url}/graphql`);
    await page.waitForSelector('.graphiql-execute-button', { timeout: 15_000 });
    expect(await page.textContent('#ide-status')).toContain('not logged in');
    const introspection = (s: { body: string | null }) => s.body?.includes('IntrospectionQuery') ?? false;
    expect(sent.filter(introspection)).toEqual([]); // no token: no "Error fetching schema"

    await page.fill('#ide-login input[name=email]', ADMIN_EMAIL);
    await page.fill('#ide-login input[name=password]', ADMIN_PASSWORD);
    await page.click('#ide-login button[type=submit]');
    await page.waitForFunction(() => (globalThis as any).document.querySelector('#ide-status')?.textContent?.startsWith('logged in as'));
    expect(await page.textContent('#ide-status')).toBe(`logged in as ${ADMIN_EMAIL} (admin)`);
    await page.waitForFunction(() => !(globalThis as any).document.querySelector('.graphiql-spinner'));
    const fetched = sent.filter(introspection);
    expect(fetched.length).toBeGreaterThan(0);
    expect(fetched.every((s) => /^Bearer \S+$/.test(s.auth ?? ''))).toBe(true);

    await setEditor(page, '.graphiql-query-editor .CodeMirror', '{ records(model: "Company", limit: 1) }');
    await page.click('.graphiql-execute-button');
    await waitForResult(page, 'Shown In IDE');
    expect(await resultText(page)).toContain('"records"');
    await compareScreenshot(page, 'query');

    // Resume after the first record's event: a change made before the socket subscribed is replayed, not lost.
    const [first] = (await manager('{ records(model: "Company", limit: 1) }')).data.records;
    const [{ eventId }] = (await manager(`{ recordHistory(model: "Company", id: "${first.id}") { eventId } }`)).data.recordHistory;
    await setEditor(page, '.graphiql-query-editor .CodeMirror',
      `subscription { modelChanges(model: "Company", after: "${eventId}") { eventType modelName recordId } }`);
    await page.click('.graphiql-execute-button');
    const created = await create(manager, 'Company', { name: 'Made During Subscription' });
    await waitForResult(page, created.id);
    expect(JSON.parse(await resultText(page))).toEqual({ data: { modelChanges: { eventType: 'Created', modelName: 'Company', recordId: created.id } } });
    await compareScreenshot(page, 'subscription');
    expect(outside).toEqual([]);
    await page.close();
  });

  it('takes a pasted token, and forgets it on log out', async () => {
    const token = await service.token({ role: 'Manager' });
    const { page, outside } = await offlinePage();
    await page.goto(`${service.url}/playground?query=${encodeURIComponent('{ records(model: "Company", where: {name: "Shown In IDE"}) }')}`);
    await page.waitForSelector('.graphiql-execute-button', { timeout: 15_000 });
    await page.fill('#ide-token', `Bearer ${token}`);
    await page.click('#ide-use-token');
    expect(await page.inputValue('#ide-token')).toBe(token);
    await page.click('.graphiql-execute-button');
    await waitForResult(page, 'Shown In IDE');
    await page.click('#ide-logout');
    expect(await page.inputValue('#ide-token')).toBe('');
    expect(await page.evaluate(() => (globalThis as any).localStorage.getItem('svc-gen:token'))).toBeNull();
    await page.click('.graphiql-execute-button');
    await waitForResult(page, 'UNAUTHORIZED');
    expect(outside).toEqual([]);
    await page.close();
  });
});
