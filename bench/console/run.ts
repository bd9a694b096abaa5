/**
 * `npm run bench:console`: the console's first pages on a big database (issue
 * 32 item 6). Seeds BENCH_ROWS (default 1,000,000) Company records and as many
 * jobs (a tenth dead) with generate_series into a database of its own
 * (`console_bench_*`, dropped at the end), then times, over HTTP, the API
 * calls behind the first page of /console/records/Company and of
 * /console/jobs?status=dead, and in Chromium the time from navigation until
 * that page's table shows its rows, cold (a page load) and inside the app
 * (the operator switching views). Target: under 500 ms each.
 *
 * Where a cold load's time goes: for each, the page's Navigation and Resource
 * Timing (when the HTML, the script, the refresh by cookie, the IR and the
 * data call started and ended, from navigation start) and the server's own
 * time for each API call (its debug request log, `ms`), medians of the runs.
 * BENCH_DB_PREFIX names the database (default console_bench).
 * BENCH_BASELINE_DIST=DIR adds a second instance serving the console built in
 * DIR (`node console/build.mjs DIR` from another checkout): cold loads then
 * alternate between the two builds, a before/after of one run. "in the page"
 * is the page's own clock from navigation start to the rows, without the
 * driver's round trips.
 */
import { cpSync, renameSync, rmSync } from 'node:fs';
import pino from 'pino';
import { createTestDatabase } from '../../test/helpers/db.ts';
import { startTestService } from '../../test/helpers/service.ts';
import { launchChromium } from '../../test/helpers/browser.ts';
import { CONSOLE_DIST, ensureConsoleBuilt } from '../../test/console/helpers.ts';
import type { TestDatabase } from '../../test/helpers/db.ts';

const ROWS = Number(process.env.BENCH_ROWS ?? 1_000_000);
const RUNS = Number(process.env.BENCH_RUNS ?? 7);

const PAGE = `query($model: String!, $first: Int, $where: JSON) {
  paginatedRecords(model: $model, first: $first, where: $where) { items pageInfo { hasNextPage endCursor } } }`;

async function timed(run: () => Promise<unknown>): Promise<number[]> {
  const ms: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const started = performance.now();
    await run();
    ms.push(performance.now() - started);
  }
  return ms.sort((a, b) => a - b);
}

const line = (name: string, ms: number[]) =>
  `${name.padEnd(52)} median ${ms[Math.floor(ms.length / 2)].toFixed(1).padStart(7)} ms   max ${ms[ms.length - 1].toFixed(1).padStart(7)} ms`;

/** The server's request log (debug level): each API call's own duration by path, while `recording`. */
const served: Array<{ path: string; ms: number }> = [];
let recording = false;
const requestLog = pino({ level: 'debug' }, {
  write(line: string) {
    if (!recording) return;
    const entry = JSON.parse(line) as { msg?: string; path?: string; ms?: number };
    if (entry.msg === 'request' && entry.path && typeof entry.ms === 'number') served.push({ path: entry.path, ms: entry.ms });
  },
});

const med = (values: number[]) => (values.length === 0 ? NaN : [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]);

interface Timing { html: number; script: number; calls: Record<string, { start: number; end: number }>; shown: number }

/** The cold load's phases, from the page's timing entries (ms since navigation start). */
function breakdown(name: string, timings: Timing[], serverMs: Map<string, number[]>): string {
  const out = [`  where the time goes (${name}, medians of ${timings.length}; ms from navigation start):`,
    `    HTML received ${med(timings.map((t) => t.html)).toFixed(0)}, script received ${med(timings.map((t) => t.script)).toFixed(0)}`];
  const paths = [...new Set(timings.flatMap((t) => Object.keys(t.calls)))];
  for (const path of paths) {
    const of = timings.map((t) => t.calls[path]).filter(Boolean);
    out.push(`    ${path.padEnd(20)} start ${med(of.map((c) => c.start)).toFixed(0).padStart(4)}  end ${med(of.map((c) => c.end)).toFixed(0).padStart(4)}`
      + `  (browser ${med(of.map((c) => c.end - c.start)).toFixed(0)} ms, server ${med(serverMs.get(path) ?? []).toFixed(1)} ms)`);
  }
  out.push(`    rows shown ${med(timings.map((t) => t.shown)).toFixed(0)}`);
  return out.join('\n');
}

/**
 * An instance on `database` serving the console built in `dir`: dist/console is swapped for it while the
 * instance starts (the console capability reads the folder once, at start), then put back.
 */
async function startWithConsole(dir: string, database: TestDatabase) {
  const aside = `${CONSOLE_DIST}.bench-aside`;
  renameSync(CONSOLE_DIST, aside);
  try {
    cpSync(dir, CONSOLE_DIST, { recursive: true });
    return await startTestService({
      fixture: 'crm', database, log: requestLog, env: { RATE_LIMIT_RPS: '10000000', SVC_LOG_LEVEL: 'error' },
    });
  } finally {
    rmSync(CONSOLE_DIST, { recursive: true, force: true });
    renameSync(aside, CONSOLE_DIST);
  }
}

async function main() {
  ensureConsoleBuilt(); // the pages measured are those of the current sources
  const database = await createTestDatabase(process.env.BENCH_DB_PREFIX ?? 'console_bench', { fixture: 'crm' });
  try {
    const svc = await startTestService({
      fixture: 'crm', database, log: requestLog,
      env: { ADMIN_EMAIL: 'bench@example.com', ADMIN_PASSWORD: 'bench-password-1', RATE_LIMIT_RPS: '10000000', SVC_LOG_LEVEL: 'error' },
    });
    try {
      const seedStarted = performance.now();
      // ULID-shaped ids in creation order: 10 time characters, then the row number.
      const seed = (text: string) => svc.ctx.db.tx(async (t) => {
        await t.none('set local statement_timeout = 0');
        await t.none(text, [ROWS]);
      });
      // The global scope's rows (the Admin signs in without a tenant) carry the '' sentinel (layout 3, ADR 025).
      await seed(`insert into company (tenant_id, id, name, employees, created_at, updated_at)
        select '', '01J' || lpad(g::text, 23, '0'), 'Company ' || g, g % 5000, now(), now() from generate_series(1, $1) g`);
      await seed(`insert into svc_jobs (id, queue, kind, payload, status, attempts, max_attempts, error)
        select '01J' || lpad(g::text, 23, '0'), 'q' || (g % 4), 'send', jsonb_build_object('customer', g % 1000),
               case when g % 10 = 0 then 'dead' else 'succeeded' end, 1, 1, case when g % 10 = 0 then 'smtp refused' end
          from generate_series(1, $1) g`);
      await seed('analyze company; analyze svc_jobs');
      process.stdout.write(`seeded ${ROWS} companies and ${ROWS} jobs in ${((performance.now() - seedStarted) / 1000).toFixed(1)} s\n`);

      const login = await (await fetch(`${svc.url}/auth/login`, {
        method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: 'bench@example.com', password: 'bench-password-1' }),
      })).json() as { token: string };
      const headers = { authorization: `Bearer ${login.token}`, 'content-type': 'application/json' };
      const gql = (variables: Record<string, unknown>) => fetch(`${svc.url}/graphql`, { method: 'POST', headers, body: JSON.stringify({ query: PAGE, variables }) })
        .then(async (r) => { const body = await r.json() as { errors?: unknown }; if (body.errors) throw new Error(JSON.stringify(body.errors)); });
      const rest = (path: string) => fetch(svc.url + path, { headers }).then((r) => { if (!r.ok) throw new Error(`${path}: ${r.status}`); return r.json(); });

      process.stdout.write(`${line('API  records Company, first page (20)', await timed(() => gql({ model: 'Company', first: 20 })))}\n`);
      process.stdout.write(`${line('API  records Company, name contains "Company 99999"', await timed(() => gql({ model: 'Company', first: 20, where: { name: { contains: 'Company 99999' } } })))}\n`);
      process.stdout.write(`${line('API  jobs status=dead, first page (50)', await timed(() => rest('/jobs/search?status=dead')))}\n`);
      process.stdout.write(`${line('API  jobs status=dead queue=q2 payload customer=10', await timed(() => rest(`/jobs/search?status=dead&queue=q2&payload=${encodeURIComponent('{"customer":10}')}`)))}\n`);
      process.stdout.write(`${line('API  bulk retry dryRun status=dead (exact count)', await timed(() => fetch(`${svc.url}/jobs/bulk`, { method: 'POST', headers, body: JSON.stringify({ filter: { status: 'dead' }, action: 'retry', dryRun: true }) })))}\n`);

      // BENCH_BASELINE_DIST=DIR: a second instance on the same database serves the console built in DIR (another
      // version of it), and every cold load alternates between the two: a before/after from one run.
      const baseline = process.env.BENCH_BASELINE_DIST ? await startWithConsole(process.env.BENCH_BASELINE_DIST, database) : null;
      const builds = [{ name: 'current', url: svc.url }, ...(baseline ? [{ name: 'baseline', url: baseline.url }] : [])];
      const browser = await launchChromium();
      try {
        const page = await browser.newPage();
        await page.goto(`${svc.url}/console`);
        await page.getByLabel('Email').fill('bench@example.com');
        await page.getByLabel('Password').fill('bench-password-1');
        await page.getByRole('button', { name: 'Sign in' }).click();
        await page.getByRole('button', { name: 'Log out' }).waitFor();
        for (const [name, address, rows] of [
          ['page /console/records/Company (20 rows shown)', '/console/records/Company', 20],
          ['page /console/jobs?status=dead (50 rows shown)', '/console/jobs?status=dead', 50],
        ] as const) {
          const timings = new Map<string, Timing[]>(builds.map((b) => [b.name, []]));
          const outside = new Map<string, number[]>(builds.map((b) => [b.name, []]));
          served.length = 0;
          recording = true;
          for (let i = 0; i < RUNS; i++) {
            for (const build of i % 2 === 0 ? builds : [...builds].reverse()) {
              const started = performance.now();
              await page.goto(build.url + address);
              // The page's own clock when the rows are there (no round trip of the driver in it).
              const shown = await (await page.waitForFunction((n) => {
                const g = globalThis as any;
                return g.document.querySelectorAll('tbody tr').length >= n && g.performance.now();
              }, rows, { timeout: 30_000, polling: 'raf' })).jsonValue() as number;
              outside.get(build.name)!.push(performance.now() - started);
              timings.get(build.name)!.push({ ...await page.evaluate(() => {
                const perf = (globalThis as any).performance;
                const nav = perf.getEntriesByType('navigation')[0];
                const calls: Record<string, { start: number; end: number }> = {};
                let script = 0;
                for (const entry of perf.getEntriesByType('resource')) {
                  const path = new URL(entry.name).pathname;
                  if (path.startsWith('/console/assets/')) { if (path.endsWith('.js')) script = entry.responseEnd; continue; }
                  calls[path] = { start: entry.startTime, end: entry.responseEnd };
                }
                return { html: nav.responseEnd, script, calls, shown: 0 };
              }), shown });
            }
          }
          recording = false;
          const serverMs = new Map<string, number[]>();
          for (const entry of served) serverMs.set(entry.path, [...(serverMs.get(entry.path) ?? []), entry.ms]);
          for (const build of builds) {
            const label = builds.length > 1 ? `${name} [${build.name}]` : name;
            const inPage = timings.get(build.name)!.map((t) => t.shown).sort((a, b) => a - b);
            process.stdout.write(`${line(label, outside.get(build.name)!.sort((a, b) => a - b))}\n`
              + `${line(`  in the page: navigation start to rows shown`, inPage)}\n${breakdown(label, timings.get(build.name)!, serverMs)}\n`);
          }
          // Inside the app (an operator moving between views): no page load, the schema already known; the current build.
          await page.goto(`${svc.url}/console/schema`);
          await page.waitForFunction(() => (globalThis as any).document.querySelector('h1')?.textContent === 'Schema');
          const inApp = await timed(async () => {
            await page.evaluate(() => { const g = globalThis as any; g.history.pushState(null, '', '/console/schema'); g.dispatchEvent(new g.PopStateEvent('popstate')); });
            await page.waitForFunction(() => (globalThis as any).document.querySelector('h1')?.textContent === 'Schema');
            await page.evaluate((to) => { const g = globalThis as any; g.history.pushState(null, '', to); g.dispatchEvent(new g.PopStateEvent('popstate')); }, address);
            await page.waitForFunction((n) => (globalThis as any).document.querySelectorAll('tbody tr').length >= n, rows, { timeout: 30_000 });
          });
          process.stdout.write(`${line(`${name.replace('page', 'view')}, in app`, inApp)}\n`);
        }
      } finally {
        await browser.close();
        await baseline?.close();
      }
    } finally {
      await svc.close();
    }
  } finally {
    await database.drop();
  }
}

await main();
process.exit(0);
