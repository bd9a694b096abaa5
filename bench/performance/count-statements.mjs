// Loaded into a service with `node --import` (NODE_OPTIONS) by ./idle.ts: counts
// every statement the process sends through `pg`, by its text, and on SIGUSR2
// writes the counts so far to SVC_BENCH_STATEMENTS (JSON). It patches the pg
// that pg-promise loads (its own copy, under its node_modules) and the top-level
// one (the LISTEN client), resolved from the started script's folder as the
// service resolves them.
import { renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const out = process.env.SVC_BENCH_STATEMENTS;
if (out) {
  const top = createRequire(process.argv[1]);
  // As runtime/db/pg-promise.ts loads it: with a `navigator`, so that pg does not load undici.
  const bare = !('navigator' in globalThis);
  if (bare) globalThis.navigator = { userAgent: `Node.js/${process.versions.node}` };
  const drivers = new Set([top('pg').Client, createRequire(top.resolve('pg-promise'))('pg').Client]);
  if (bare) delete globalThis.navigator;
  const counts = new Map();
  for (const Client of drivers) {
    const query = Client.prototype.query;
    Client.prototype.query = function counted(config, ...rest) {
      const text = typeof config === 'string' ? config : config?.text;
      if (typeof text === 'string') {
        const key = text.replace(/\s+/g, ' ').trim();
        counts.set(key, (counts.get(key) ?? 0) + 1);
      }
      return query.call(this, config, ...rest);
    };
  }
  // Written aside and renamed: the reader sees the whole file or none.
  process.on('SIGUSR2', () => {
    writeFileSync(`${out}.tmp`, JSON.stringify(Object.fromEntries(counts)));
    renameSync(`${out}.tmp`, out);
  });
}
