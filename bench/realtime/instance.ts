/**
 * One svc-gen server instance in its own process: starts the project built
 * in argv[2] with this process's environment and prints `{"url": ...}`.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { pino } from 'pino';
import { defineService, runService } from '../../runtime/service/index.ts';

const dir = process.argv[2];
const snapshot = JSON.parse(readFileSync(join(dir, 'schema.snapshot.json'), 'utf8'));
const { access } = await import(pathToFileURL(join(dir, 'access.ts')).href);
const { resolvers } = await import(pathToFileURL(join(dir, 'resolvers', 'index.ts')).href);
const definition = defineService({ snapshot, access, resolvers, root: pathToFileURL(`${dir}/`) });
const running = await runService(definition, { port: 0, host: '127.0.0.1', log: pino({ level: 'warn' }) });
process.stdout.write(`${JSON.stringify({ url: running.url })}\n`);
