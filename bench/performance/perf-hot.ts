/**
 * `npx tsx bench/performance/perf-hot.ts FILE.data [BASELINE.data] [N]`: the
 * server's main-thread CPU per request from a `PROFILE_PERF` recording
 * (profile.ts), by the JavaScript function each sample ran in or under
 * (builtins, V8 internals and the kernel counted to their nearest JavaScript
 * caller). With a baseline: both side by side, sorted by the difference.
 *
 * perf samples CPU, so a system call costs what the kernel spent on it; V8's
 * own profiler samples wall time and counts, as `writev`, the wait after a
 * write wakes another process on the same core (ADR 009, seventh pass).
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

const SAMPLE_HZ = 1999; // perf-record.ts's -F

interface Recording {
  readonly file: string;
  readonly requests: number;
  readonly byFunction: Map<string, number>;
  readonly microsPerRequest: number;
}

const JS_FRAME = /^(JS:|Function:|LazyCompile:)?[*~^]/;

function frameName(frame: string): string {
  return frame
    .replace(/^(JS:|Function:|LazyCompile:)/, '').replace(/^[*~^]/, '')
    .replace(/(^|\s)\S*\/node_modules\/(?:pg-promise\/node_modules\/)?/, '$1npm:')
    .replace(/(^|\s)(?:file:\/\/)?\/\S*?\/(runtime|bench|cli|worker)\//, '$1$2/')
    .slice(0, 100);
}

function load(file: string): Recording {
  const { requests, tid } = JSON.parse(readFileSync(`${file}.json`, 'utf8')) as { requests: number; tid: number };
  const script = execFileSync('perf', ['script', '-i', file, '--tid', String(tid), '-F', 'ip,sym'], { maxBuffer: 1 << 30, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  const samples = new Map<string, number>();
  let total = 0;
  for (const block of script.split('\n\n')) {
    const frames = block.split('\n').map((line) => line.trim().replace(/^[0-9a-f]+ /, '')).filter(Boolean);
    if (frames.length === 0) continue;
    total++;
    const js = frames.find((frame) => JS_FRAME.test(frame));
    const key = js ? frameName(js) : `(no JavaScript) ${frames[0].slice(0, 60)}`;
    samples.set(key, (samples.get(key) ?? 0) + 1);
  }
  const micros = (count: number) => (count * 1e6) / SAMPLE_HZ / requests;
  return { file, requests, byFunction: new Map([...samples].map(([k, n]) => [k, micros(n)])), microsPerRequest: micros(total) };
}

const [first, second, limitText] = process.argv.slice(2);
if (!first) throw new Error('usage: perf-hot.ts FILE.data [BASELINE.data] [N]');
const withBaseline = second !== undefined && !/^\d+$/.test(second);
const limit = Number((withBaseline ? limitText : second) ?? 40);
const run = load(first);
const fmt = (v: number) => v.toFixed(1).padStart(7);
if (!withBaseline) {
  console.log(`${run.file}: ${run.requests} requests, main thread ${run.microsPerRequest.toFixed(0)} µs/request\n`);
  for (const [name, us] of [...run.byFunction].sort((a, b) => b[1] - a[1]).slice(0, limit)) console.log(`${fmt(us)}  ${name}`);
} else {
  const base = load(second);
  console.log(`baseline ${base.file}: ${base.microsPerRequest.toFixed(0)} µs/request; ${run.file}: ${run.microsPerRequest.toFixed(0)} µs/request\n`);
  console.log(`${'base'.padStart(7)} ${'this'.padStart(7)} ${'diff'.padStart(7)}`);
  const names = new Set([...run.byFunction.keys(), ...base.byFunction.keys()]);
  const rows = [...names].map((name) => [name, base.byFunction.get(name) ?? 0, run.byFunction.get(name) ?? 0] as const);
  rows.sort((a, b) => (b[2] - b[1]) - (a[2] - a[1]));
  for (const [name, b, t] of rows.slice(0, limit)) console.log(`${fmt(b)} ${fmt(t)} ${fmt(t - b)}  ${name}`);
}
