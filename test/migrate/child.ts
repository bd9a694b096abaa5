/**
 * The runner in a process of its own, for the kill -9 tests:
 * `node --import tsx test/migrate/child.ts URL DIR` applies DIR's migrations
 * (scope `schema`), its log on stdout, settings from the environment.
 */
import { migrate } from '../../runtime/db/migrate/index.ts';
import { openDb } from './helpers.ts';

const [url, dir] = process.argv.slice(2);
const db = openDb(url);
const line = (message: string) => void process.stdout.write(`${message}\n`);
await migrate(db, [{ scope: 'schema', dir }], { log: { info: (_d, m) => line(m), warn: (_d, m) => line(`warning: ${m}`) } });
await db.$pool.end();
