/**
 * The console in headless Chromium (Debian's, driven by playwright-core)
 * against a real server on the real Postgres (the crm fixture): log in, open
 * every view from its address, change records, operate jobs and follow a
 * workflow run live, filter the audit log, upload and delete media, a
 * Viewer's limits, the session across a reload and after logout, a 390 px
 * viewport, an axe-core scan per view. Every request the pages make is
 * logged: none may leave the service's origin. Screenshots of each view are
 * kept in test-artifacts/console/ (not compared: they are for people).
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { AxeBuilder } from '@axe-core/playwright';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '../helpers/browser.ts';
import { REPO_ROOT, startTestService, type TestService } from '../helpers/service.ts';
import { call, mintWorker, workerClient } from '../jobs/helpers.ts';
import { ensureConsoleBuilt } from './helpers.ts';

const ADMIN = { email: 'operator@example.com', password: 'operator-password-1' };
const VIEWER = { email: 'viewer@example.com', password: 'viewer-password-1' };
const ARTIFACTS = join(REPO_ROOT, 'test-artifacts', 'console');

let service: TestService;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let adminToken: string;
let worker: ReturnType<typeof workerClient>;
/** Every URL any page of the test asked for (HTTP and WebSocket). */
const requested: string[] = [];

const gql = async (query: string, variables: Record<string, unknown> = {}) => {
  const reply = await call(service.url, 'POST', '/graphql', { body: { query, variables }, headers: { authorization: `Bearer ${adminToken}` } });
  if (reply.body.errors) throw new Error(JSON.stringify(reply.body.errors));
  return reply.body.data;
};
const api = (method: string, path: string, body?: unknown) => call(service.url, method, path, { body, headers: { authorization: `Bearer ${adminToken}` } });

async function newContext(viewport = { width: 1280, height: 900 }): Promise<{ context: BrowserContext; page: Page }> {
  const ctx = await browser.newContext({ viewport, deviceScaleFactor: 1 });
  ctx.on('request', (request) => { requested.push(request.url()); });
  const p = await ctx.newPage();
  p.on('websocket', (socket) => { requested.push(socket.url()); });
  p.on('dialog', (dialog) => { void dialog.accept(); });
  if (process.env.CONSOLE_TEST_DEBUG) {
    p.on('response', (r) => { if (r.status() >= 400 || r.url().includes('/auth/')) process.stderr.write(`http ${r.status()} ${r.url()}\n`); });
    p.on('pageerror', (e) => process.stderr.write(`pageerror ${e.message}\n`));
  }
  return { context: ctx, page: p };
}

async function signIn(p: Page, who: { email: string; password: string }): Promise<void> {
  await p.goto(`${service.url}/console`);
  await p.getByLabel('Email').fill(who.email);
  await p.getByLabel('Password').fill(who.password);
  await p.getByRole('button', { name: 'Sign in' }).click();
  await p.getByRole('button', { name: 'Log out' }).waitFor();
}

const h1 = (p: Page) => p.locator('h1');

async function open(p: Page, address: string, heading: string | RegExp): Promise<void> {
  await p.goto(`${service.url}${address}`);
  await expectHeading(p, heading);
}

async function expectHeading(p: Page, heading: string | RegExp): Promise<void> {
  await p.waitForFunction(() => !(globalThis as any).document.body.textContent.includes('Loading…'), undefined, { timeout: 15_000 });
  await expect.poll(() => h1(p).textContent(), { timeout: 15_000 }).toMatch(heading);
  expect(await h1(p).count()).toBe(1);
}

async function shoot(p: Page, name: string): Promise<void> {
  await p.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true, animations: 'disabled', caret: 'hide' });
}

async function accessible(p: Page, name: string): Promise<void> {
  const result = await new AxeBuilder({ page: p }).withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']).options({ resultTypes: ['violations'] }).analyze();
  const bad = result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  expect(bad.map((v) => `${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(' ')).slice(0, 3).join(', ')})`), name).toEqual([]);
}

/** A job enqueued by the operator; with `dead`, leased and failed for good by the test's worker. */
async function job(queue: string, payload: unknown, dead: boolean): Promise<string> {
  const { body } = await api('POST', '/jobs', { queue, kind: 'console', payload, maxAttempts: 1 });
  if (!dead) return body.id;
  const leased = await worker('/jobs/lease', { queues: [queue], capacity: 1, visibilitySecs: 60 });
  await worker(`/jobs/${body.id}/fail`, { leaseId: leased.body.jobs[0].leaseId, error: 'mailbox full', retryable: false });
  return body.id;
}

let company: { id: string };

beforeAll(async () => {
  ensureConsoleBuilt();
  mkdirSync(ARTIFACTS, { recursive: true });
  service = await startTestService({ fixture: 'crm', env: { ADMIN_EMAIL: ADMIN.email, ADMIN_PASSWORD: ADMIN.password, RATE_LIMIT_RPS: '100000' } });
  const login = await call(service.url, 'POST', '/auth/login', { body: ADMIN });
  adminToken = login.body.token;
  expect((await api('POST', '/auth/users', { ...VIEWER, role: 'Viewer' })).status).toBe(201);
  worker = workerClient(service, (await mintWorker(service, ['*'])).token);
  company = (await gql('mutation { create(model: "Company", data: { name: "Acme Seed", employees: 12 }) }')).create;
  browser = await launchChromium();
  ({ context, page } = await newContext());
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await service?.close();
});

describe('the console in Chromium', { timeout: 120_000 }, () => {
  it('logs in through the API; the access token stays out of storage', async () => {
    await page.goto(`${service.url}/console`);
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    await shoot(page, 'login');
    await accessible(page, 'login');
    await signIn(page, ADMIN);
    await expectHeading(page, 'Overview');
    const stored = await page.evaluate(() => JSON.stringify({ ...(globalThis as any).localStorage }) + JSON.stringify({ ...(globalThis as any).sessionStorage }));
    expect(stored).not.toContain('eyJ');
    expect(await page.evaluate(() => (globalThis as any).document.cookie)).toBe(''); // HttpOnly, and scoped to /auth
    // The overview's rates come from two scrapes of /metrics (open to loopback).
    await page.locator('#rate-requests', { hasText: 'per s' }).waitFor({ timeout: 15_000 });
    expect(await page.locator('#feed-lag').textContent()).toMatch(/^\d+(\.\d+)? s$/);
  });

  it('lists the service\'s instances on the overview: two instances on one database, both shown', async () => {
    const second = await startTestService({ fixture: 'crm', database: service.database, env: { RATE_LIMIT_RPS: '100000' } });
    try {
      const listed = (await api('GET', '/meta/instances')).body as { self: string; instances: Array<{ id: string }> };
      expect(listed.instances).toHaveLength(2);
      await open(page, '/console', 'Overview');
      const rows = page.locator('#instances tbody tr');
      await expect.poll(() => rows.count(), { timeout: 15_000 }).toBe(2);
      const text = await page.locator('#instances tbody').textContent();
      for (const { id } of listed.instances) expect(text).toContain(id);
      expect(await rows.filter({ hasText: '(this one)' }).textContent()).toContain(listed.self);
      expect(await page.locator('#instances-summary').textContent()).toBe('2 live instances');
      expect(await rows.filter({ hasText: 'live' }).count()).toBe(2);
      await shoot(page, 'overview-instances');
      // The operator acting in a tenant still sees them (they belong to no tenant: asked in the global scope).
      await page.getByLabel('Tenant', { exact: true }).fill('tenant-i');
      await page.getByRole('button', { name: 'Switch tenant' }).click();
      await page.getByText('tenant tenant-i').waitFor();
      await expect.poll(() => page.locator('#instances tbody tr').count(), { timeout: 15_000 }).toBe(2);
      await page.getByLabel('Tenant', { exact: true }).fill('');
      await page.getByRole('button', { name: 'Switch tenant' }).click();
    } finally {
      await second.close();
    }
  });

  // Fourteen axe scans: on two cores shared with other work they alone can outlast the file's 2 minutes.
  it('opens every view from its address, each accessible (axe: no serious or critical violation), and keeps a screenshot', { timeout: 300_000 }, async () => {
    const run = await api('GET', '/workflows/runs');
    expect(run.status).toBe(200);
    const deadJob = await job('views-q', { view: true }, true);
    const views: Array<[string, string, string | RegExp]> = [
      ['overview', '/console', 'Overview'],
      ['records', '/console/records', 'Records'],
      ['records-list', '/console/records/Company?where=%7B%22name%22%3A%7B%22contains%22%3A%22Acme%22%7D%7D', 'Company'],
      ['record', `/console/records/Company/${company.id}`, `Company ${company.id}`],
      ['record-history', `/console/records/Company/${company.id}?tab=history`, `Company ${company.id}`],
      ['jobs', '/console/jobs?status=dead', 'Jobs'],
      ['job', `/console/jobs/${deadJob}`, `Job ${deadJob}`],
      ['workers', '/console/workers', 'Worker tokens'],
      ['workflows', '/console/workflows', 'Workflows'],
      ['audit', '/console/audit?action=auth.login', 'Audit log'],
      ['media', '/console/media', 'Media'],
      ['schema', '/console/schema', 'Schema'],
      ['migrations', '/console/migrations', 'Migrations'],
      ['projections', '/console/projections', 'Projections'],
    ];
    for (const [name, address, heading] of views) {
      await open(page, address, heading);
      await shoot(page, name);
      await accessible(page, name);
    }
    // The migrations view lists the applied files.
    await open(page, '/console/migrations', 'Migrations');
    expect(await page.locator('tbody').textContent()).toContain('0001_jobs.sql');
    // A filter in the address is applied: the list shows the seeded company.
    await open(page, views[2][1], 'Company');
    await page.getByRole('link', { name: 'Acme Seed' }).waitFor();
    expect(await page.getByLabel('name', { exact: true }).inputValue()).toBe('Acme');
  });

  it('creates a record (validation shown at the field), edits, deletes and restores it; the history is a timeline', async () => {
    await open(page, '/console/records/Company/new', 'New Company');
    await page.getByLabel('name *').fill('A');
    await page.getByLabel('employees').fill('-5');
    await page.getByRole('button', { name: 'Create' }).click();
    await page.locator('#field-name-error').waitFor();
    expect(await page.locator('#field-employees-error').textContent()).toMatch(/employees/i);
    await shoot(page, 'record-validation');
    await page.getByLabel('name *').fill('Console Made');
    await page.getByLabel('employees').fill('40');
    await page.getByLabel('city *').count(); // the embedded address is offered, not required
    await page.getByRole('button', { name: 'Create' }).click();
    await expectHeading(page, /^Company [0-9A-Z]{26}$/);
    const id = (await h1(page).textContent())!.split(' ')[1];
    await page.getByLabel('employees').fill('41');
    await page.getByRole('button', { name: 'Add tags item' }).click();
    await page.getByLabel('tags item').fill('vip');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByText('Saved.').waitFor();
    expect((await gql(`{ record(model: "Company", id: "${id}") }`)).record).toMatchObject({ employees: 41, tags: ['vip'] });
    await page.getByRole('button', { name: 'Delete' }).click();
    await page.getByText('This record is deleted.').waitFor();
    expect((await gql(`{ record(model: "Company", id: "${id}") }`)).record).toBeNull();
    await page.getByRole('button', { name: 'Restore' }).click();
    await page.getByRole('button', { name: 'Delete' }).waitFor();
    expect((await gql(`{ record(model: "Company", id: "${id}") }`)).record).toMatchObject({ name: 'Console Made' });
    await page.getByRole('link', { name: 'History' }).click();
    await expect.poll(() => page.locator('.timeline > li').count()).toBe(4);
    const timeline = await page.locator('.timeline').textContent();
    expect(timeline).toMatch(/Created[\s\S]*Updated[\s\S]*Deleted[\s\S]*Restored/);
    expect(page.url()).toContain('tab=history');
  });

  it('picks a relation by searching the target model', async () => {
    await open(page, '/console/records/Deal/new', 'New Deal');
    await page.getByLabel('Search Company').fill('Acme');
    await expect.poll(() => page.locator('#field-company option').allTextContents()).toContain(`Acme Seed (${company.id})`);
    await page.locator('#field-company').selectOption(company.id);
    await page.getByLabel('title *').fill('Console deal');
    await page.getByLabel('amount *').fill('100');
    await page.getByLabel('stage *').selectOption('qualified');
    await page.getByRole('button', { name: 'Create' }).click();
    await expectHeading(page, /^Deal [0-9A-Z]{26}$/);
    const id = (await h1(page).textContent())!.split(' ')[1];
    expect((await gql(`{ record(model: "Deal", id: "${id}") }`)).record).toMatchObject({ companyId: company.id, stage: 'qualified', amount: 100 });
    // The list filters by the relation, and keeps the filter in the address.
    await open(page, '/console/records/Deal', 'Deal');
    await page.getByLabel('company', { exact: true }).fill(company.id);
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await expect.poll(() => decodeURIComponent(page.url())).toContain(`"companyId":"${company.id}"`);
    await expect.poll(() => page.locator('tbody tr').count()).toBe(1);
    expect(await page.locator('tbody').textContent()).toContain('Console deal');
  });

  it('retries a dead job, and cancels every job of a filter after showing how many match', async () => {
    const dead = await job('retry-q', { order: 1 }, true);
    await open(page, '/console/jobs?queue=retry-q&status=dead', 'Jobs');
    await page.getByRole('button', { name: `Retry ${dead}` }).click();
    await expect.poll(async () => (await api('GET', `/jobs/${dead}/inspect`)).body.status).toBe('queued');
    for (let i = 0; i < 3; i++) await job('bulk-q', { batch: 'b7', i }, false);
    const other = await job('bulk-q', { batch: 'b8' }, false);
    await open(page, '/console/jobs?queue=bulk-q&payload=batch%3Db7', 'Jobs');
    expect(await page.locator('tbody tr').count()).toBe(3);
    await page.getByRole('button', { name: 'Cancel all matching' }).click();
    await page.getByText('3 jobs match this filter').waitFor();
    await shoot(page, 'jobs-bulk-confirm');
    await page.getByRole('button', { name: 'Confirm cancel of 3' }).click();
    await page.getByText('Cancelled 3 jobs.').waitFor();
    expect((await api('GET', '/jobs/search?queue=bulk-q&status=queued')).body.jobs.map((j: { id: string }) => j.id)).toEqual([other]);
  });

  it('shows a job\'s progress live', async () => {
    const id = await job('progress-q', { step: 'live' }, false);
    const leased = await worker('/jobs/lease', { queues: ['progress-q'], capacity: 1, visibilitySecs: 60 });
    await open(page, `/console/jobs/${id}`, `Job ${id}`);
    await page.getByText('No progress reported since this page opened.').waitFor();
    // The socket subscribes once the page is up: report until the page has shown it.
    await expect.poll(async () => {
      await worker(`/jobs/${id}/progress`, { leaseId: leased.body.jobs[0].leaseId, percent: 60, message: 'rendering' });
      return page.locator('#job-progress-text').textContent().catch(() => null);
    }, { timeout: 15_000 }).toContain('60% rendering');
    await worker(`/jobs/${id}/complete`, { leaseId: leased.body.jobs[0].leaseId, result: { pages: 3 } });
    await page.getByText('"pages": 3').waitFor({ timeout: 15_000 });
  });

  it('follows a workflow run live: waiting on its job, then done once the worker completes it', async () => {
    const deal = (await gql(`mutation { create(model: "Deal", data: { title: "Won in console", amount: 5, companyId: "${company.id}" }) }`)).create;
    await gql(`mutation { update(model: "Deal", id: "${deal.id}", data: { stage: "won" }) }`);
    const runs = await expect.poll(async () => (await api('GET', '/workflows/runs?workflow=wonDeal')).body.items.length).toBeGreaterThan(0)
      .then(async () => (await api('GET', '/workflows/runs?workflow=wonDeal')).body.items);
    const runId = runs[0].id as string;
    await open(page, `/console/workflows/runs/${runId}`, `Run ${runId}`);
    // The invoice step waits on its billing job, and the page says which.
    const jobId = await expect.poll(async () => {
      const invoice = (await api('GET', `/workflows/runs/${runId}`)).body.steps.find((s: { id: string }) => s.id === 'invoice');
      return invoice?.jobId ?? null;
    }, { timeout: 15_000 }).not.toBeNull().then(async () =>
      (await api('GET', `/workflows/runs/${runId}`)).body.steps.find((s: { id: string }) => s.id === 'invoice').jobId as string);
    await page.getByRole('link', { name: jobId }).waitFor({ timeout: 15_000 });
    await shoot(page, 'workflow-run-waiting');
    let leaseId = '';
    await expect.poll(async () => {
      const leased = await worker('/jobs/lease', { queues: ['billing'], capacity: 1, visibilitySecs: 60 });
      leaseId = leased.body.jobs.find((j: { id: string }) => j.id === jobId)?.leaseId ?? leaseId;
      return leaseId;
    }, { timeout: 15_000 }).not.toBe('');
    await worker(`/jobs/${jobId}/complete`, { leaseId, result: { ok: true, invoiceId: 'INV-7' } });
    // No reload: the page learns it from the run's events.
    await expect.poll(() => page.locator('#run-status').textContent(), { timeout: 20_000 }).toBe('succeeded');
    expect(await page.locator('.timeline').textContent()).toContain('INV-7');
    await shoot(page, 'workflow-run-done');
  });

  it('filters the audit log, the filters kept in the address', async () => {
    await open(page, '/console/audit', 'Audit log');
    await page.getByLabel('action').fill('job.retry');
    await page.getByRole('button', { name: 'Filter entries' }).click();
    await expect.poll(() => page.url()).toContain('action=job.retry');
    await expect.poll(() => page.locator('tbody tr').count()).toBeGreaterThan(0);
    const actions = await page.locator('tbody tr td:nth-child(3)').allTextContents();
    expect(new Set(actions)).toEqual(new Set(['job.retry']));
    await page.reload();
    await expectHeading(page, 'Audit log');
    expect(await page.getByLabel('action').inputValue()).toBe('job.retry');
  });

  it('uploads media with a preview and deletes it', async () => {
    await open(page, '/console/media', 'Media');
    const png = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64');
    await page.getByLabel('File to upload').setInputFiles({ name: 'dot.png', mimeType: 'image/png', buffer: png });
    await page.getByRole('button', { name: 'Upload', exact: true }).click();
    await page.getByText('Uploaded dot.png.').waitFor();
    await page.getByAltText('preview of dot.png').waitFor();
    expect(await page.getByAltText('preview of dot.png').getAttribute('src')).toMatch(/^blob:/);
    await shoot(page, 'media');
    await page.getByRole('button', { name: 'Delete dot.png' }).click();
    await page.getByText('Deleted dot.png.').waitFor();
    expect((await api('GET', '/media')).body.items).toEqual([]);
  });

  it('switches tenant as the platform operator', async () => {
    await api('POST', '/jobs', { queue: 'tenant-q', kind: 'console', payload: {} });
    await open(page, '/console/jobs?queue=tenant-q', 'Jobs');
    expect(await page.locator('tbody tr').count()).toBe(1);
    await page.getByLabel('Tenant', { exact: true }).fill('tenant-b');
    await page.getByRole('button', { name: 'Switch tenant' }).click();
    await page.getByText('tenant tenant-b').waitFor();
    await expectHeading(page, 'Jobs');
    expect(await page.locator('tbody tr').count()).toBe(0);
    await page.getByLabel('Tenant', { exact: true }).fill('');
    await page.getByRole('button', { name: 'Switch tenant' }).click();
    await expect.poll(() => page.locator('tbody tr').count()).toBe(1);
  });

  it('offers a Viewer no write control, and shows the 403 of a forced write', async () => {
    const viewer = await newContext();
    await signIn(viewer.page, VIEWER);
    await open(viewer.page, '/console/records/Company', 'Company');
    expect(await viewer.page.getByRole('link', { name: 'Create Company' }).count()).toBe(0);
    await open(viewer.page, `/console/records/Company/${company.id}`, `Company ${company.id}`);
    expect(await viewer.page.getByRole('button', { name: /Save|Delete|Restore/ }).count()).toBe(0);
    expect(await viewer.page.getByLabel('name *').isDisabled()).toBe(true);
    expect(await viewer.page.getByRole('link', { name: 'Jobs' }).count()).toBe(0);
    await viewer.page.locator('#record-form').evaluate((form: any) => form.requestSubmit());
    await viewer.page.getByText(/Forbidden \(403\)/).waitFor();
    await shoot(viewer.page, 'viewer-forbidden');
    await viewer.context.close();
  });

  it('fits a 390 px wide screen on three views', async () => {
    const phone = await newContext({ width: 390, height: 844 });
    await signIn(phone.page, ADMIN);
    for (const [name, address, heading] of [
      ['phone-overview', '/console', 'Overview'], ['phone-jobs', '/console/jobs', 'Jobs'], ['phone-record', `/console/records/Company/${company.id}`, `Company ${company.id}`],
    ] as const) {
      await open(phone.page, address, heading);
      const width = await phone.page.evaluate(() => (globalThis as any).document.documentElement.scrollWidth);
      expect(width, name).toBeLessThanOrEqual(390);
      await shoot(phone.page, name);
      await accessible(phone.page, name);
    }
    await phone.context.close();
  });

  it('keeps the session across a reload, and logging out ends it', async () => {
    await open(page, '/console/schema', 'Schema');
    await page.reload();
    await expectHeading(page, 'Schema');
    await page.getByRole('button', { name: 'Log out' }).click();
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    await page.reload();
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    expect(await h1(page).textContent()).toBe('Sign in to the console');
  });

  it('never contacted another origin (the request log)', () => {
    const origin = new URL(service.url);
    // blob: URLs of the service's own origin are the media previews, made in the page from bytes it fetched.
    const own = [service.url, `ws://${origin.host}`, `blob:${service.url}`];
    expect(requested.length).toBeGreaterThan(50);
    expect(requested.filter((url) => !own.some((prefix) => url.startsWith(prefix)))).toEqual([]);
  });
});
