/**
 * `npx tsx bench/performance/perf-components.ts FILE.data [BASELINE.data]`:
 * the server's CPU per request from a `PROFILE_PERF` recording (profile.ts)
 * by component, every thread of the server's process (not its children): each sample goes to the
 * innermost frame that belongs to a component (a runtime/ folder, a package,
 * node's HTTP server), so the kernel's time in a `writev` counts to whoever
 * wrote (the HTTP response, or node-postgres), and V8's builtins (JSON,
 * promises) to their JavaScript caller. With a baseline (the floor): both
 * side by side, and what the baseline does not pay.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

const SAMPLE_HZ = 1999; // perf-record.ts's -F

/** Components, tried in order on each frame; the first frame (innermost first) that matches one decides. */
const COMPONENTS: ReadonlyArray<readonly [string, RegExp]> = [
  // V8's JSON builtins, whoever calls them: the floor stringifies its rows too.
  ['JSON.stringify / JSON.parse (V8)', /JsonStringif|JsonParser|Builtins_JsonParse|Builtins_JsonStringify/],
  ['graphql (runtime/graphql, graphql-js, graphql-jit)', /\/runtime\/graphql\/|\/node_modules\/graphql(-jit)?\/|@graphql-tools/],
  ['auth (runtime/auth, JWT)', /\/runtime\/auth\/|\/node_modules\/(jose|jsonwebtoken)\//],
  ['records (runtime/records, sql, rules, tenancy)', /\/runtime\/(records|sql|rules|access|tenancy|ir)\//],
  ['audit, events, feed', /\/runtime\/(audit|events|feed)\//],
  ['metrics (runtime/metrics, prom-client)', /\/runtime\/metrics\/|\/node_modules\/prom-client\//],
  ['edge and HTTP middleware (runtime/http, runtime/edge)', /\/runtime\/(http|edge)\//],
  ['db access (runtime/db)', /\/runtime\/db\//],
  ['node-postgres (pg, pg-protocol, pg-pool, pg-promise)', /\/node_modules\/(pg|pg-protocol|pg-pool|pg-promise|pg-types)\//],
  ['Koa, router, body parser', /\/node_modules\/(koa[^/]*|@koa\/[^/]+|koa-compose|delegates|vary|ee-first|accepts|type-is|content-type|negotiator|co-body|raw-body|inflation|on-finished|statuses|http-errors|mime-types|cache-content-type)\//],
  ['the bench\'s own server code (floor)', /\/bench\/records\//],
  // Sockets and streams are no component: their time (and the kernel's) counts to whoever reads or writes.
  ['node HTTP server (parser, headers, response)', /node:_http|node:internal\/http|node:internal\/url|llhttp|node::http/],
  ['other runtime/', /\/runtime\//],
  ['other packages', /\/node_modules\//],
];
const GC = /v8::internal::(Heap|Scavenger|MarkCompact|Sweeper|MinorMarkCompact|ConcurrentMarking|IncrementalMarking)|ScavengeJob|GCTracer/;

interface Recording {
  readonly file: string;
  readonly requests: number;
  readonly byComponent: Map<string, number>;
  readonly total: number;
}

/** PERF_FRAMES=component-prefix: also list the frames that decided that component, most samples first. */
const SHOW = process.env.PERF_FRAMES;
const shown = new Map<string, number>();

function componentOf(frames: readonly string[], mainThread: boolean): string {
  if (frames.some((frame) => GC.test(frame))) return 'garbage collection';
  for (const frame of frames) {
    for (const [name, pattern] of COMPONENTS) {
      if (!pattern.test(frame)) continue;
      if (SHOW && name.startsWith(SHOW)) {
        const key = frame.replace(/^[0-9a-f]+ /, '').replace(/\+0x[0-9a-f]+/, '').replace(/\(\/tmp\/perf-\d+\.map\)/, '').slice(0, 120);
        shown.set(key, (shown.get(key) ?? 0) + 1);
      }
      return name;
    }
  }
  return mainThread ? 'event loop, V8 and kernel without a component' : 'other threads (libuv, V8 compiler)';
}

function load(file: string): Recording {
  const { requests, tid } = JSON.parse(readFileSync(`${file}.json`, 'utf8')) as { requests: number; tid: number };
  // perf follows children too (profile.ts's load generator): the server process's threads only.
  const script = execFileSync('perf', ['script', '-i', file, '--pid', String(tid), '-F', 'tid,ip,sym,dso'], { maxBuffer: 1 << 30, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  const counts = new Map<string, number>();
  let total = 0;
  for (const block of script.split('\n\n')) {
    const lines = block.split('\n').map((line) => line.trim()).filter(Boolean);
    if (lines.length < 2) continue;
    total++;
    const thread = Number(lines[0].split(/\s+/)[0]);
    const key = componentOf(lines.slice(1), thread === tid);
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  const micros = (count: number) => (count * 1e6) / SAMPLE_HZ / requests;
  return { file, requests, byComponent: new Map([...counts].map(([k, n]) => [k, micros(n)])), total: micros(total) };
}

const [first, second] = process.argv.slice(2);
if (!first) throw new Error('usage: perf-components.ts FILE.data [BASELINE.data]');
const run = load(first);
const base = second ? load(second) : undefined;
const fmt = (v: number) => v.toFixed(1).padStart(8);
console.log(`µs of CPU per request (every thread of the server process), ${run.file}: ${run.requests} requests`
  + (base ? `; baseline ${base.file}: ${base.requests} requests` : ''));
console.log(`${base ? `${'baseline'.padStart(8)} ` : ''}${'this'.padStart(8)}${base ? ` ${'diff'.padStart(8)}` : ''}  component`);
const names = new Set([...run.byComponent.keys(), ...(base?.byComponent.keys() ?? [])]);
const rows = [...names].map((name) => [name, base?.byComponent.get(name) ?? 0, run.byComponent.get(name) ?? 0] as const);
rows.sort((a, b) => (b[2] - b[1]) - (a[2] - a[1]));
for (const [name, b, t] of rows) console.log(`${base ? `${fmt(b)} ` : ''}${fmt(t)}${base ? ` ${fmt(t - b)}` : ''}  ${name}`);
console.log(`${base ? `${fmt(base.total)} ` : ''}${fmt(run.total)}${base ? ` ${fmt(run.total - base.total)}` : ''}  total`);
if (SHOW) {
  console.log(`\nframes deciding "${SHOW}…" (samples, both recordings):`);
  for (const [frame, n] of [...shown].sort((a, b) => b[1] - a[1]).slice(0, 25)) console.log(`${String(n).padStart(6)}  ${frame}`);
}
