/**
 * `npx tsx bench/performance/hot.ts FILE.cpuprofile [N]`: the hottest
 * functions of a `node --cpu-prof` profile by self time, and self time per
 * package / project folder, as percentages of the busy (non-idle) samples.
 */
import { readFileSync } from 'node:fs';

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface Profile {
  nodes: Node[];
  samples: number[];
  timeDeltas: number[];
}

const [file, limit = '30'] = process.argv.slice(2);
const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
const byId = new Map(profile.nodes.map((node) => [node.id, node]));
const self = new Map<number, number>();
profile.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));

const IDLE = new Set(['(idle)', '(program)', '(garbage collector)']);
let busy = 0;
const functions = new Map<string, number>();
const areas = new Map<string, number>();
for (const [id, us] of self) {
  const { functionName, url, lineNumber } = byId.get(id)!.callFrame;
  if (functionName === '(idle)') continue;
  busy += us;
  const where = url.replace(/^file:\/\//, '').replace(/^.*\/node_modules\//, 'npm:').replace(/^.*\/wt-[^/]+\//, '');
  const key = `${functionName || '(anonymous)'} ${where}:${lineNumber + 1}`;
  functions.set(key, (functions.get(key) ?? 0) + us);
  const area = IDLE.has(functionName) ? functionName
    : where.startsWith('npm:') ? where.split('/').slice(0, where.startsWith('npm:@') ? 2 : 1).join('/')
      : where.startsWith('node:') ? 'node:' + where.slice(5).split('/')[0]
        : where === '' ? '(native)' : where.split('/').slice(0, 2).join('/');
  areas.set(area, (areas.get(area) ?? 0) + us);
}

const pct = (us: number) => `${((us / busy) * 100).toFixed(1).padStart(5)}%`;
console.log(`busy ${(busy / 1e6).toFixed(2)} s\n\nby area:`);
for (const [area, us] of [...areas].sort((a, b) => b[1] - a[1]).slice(0, 25)) console.log(`${pct(us)}  ${area}`);
console.log('\nby function (self):');
for (const [fn, us] of [...functions].sort((a, b) => b[1] - a[1]).slice(0, Number(limit))) console.log(`${pct(us)}  ${fn}`);
