/**
 * `svc-gen dev`: build, start the server as a child process, watch the schema
 * file; on change rebuild and restart after a trailing 2 s debounce. A schema
 * error is printed and the running server is kept.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, watch } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, formatDiagnostic } from '../generator/index.ts';
import { UserError } from './errors.ts';

export const DEV_DEBOUNCE_MS = 2000;
const BIN = fileURLToPath(new URL('../bin/svc-gen.mjs', import.meta.url));

export interface DevFlags {
  readonly schemaPath: string;
  readonly outDir?: string;
}

export async function devCommand(flags: DevFlags): Promise<number> {
  const schemaPath = resolve(flags.schemaPath);
  if (!existsSync(schemaPath)) throw new UserError(`${flags.schemaPath}: not found`);
  const outDir = resolve(flags.outDir ?? join('.svc', 'build', basename(schemaPath, '.ts')));
  let child: ChildProcess | null = null;

  const rebuild = async (): Promise<boolean> => {
    const result = await build({ schemaPath, outDir });
    if ('diagnostics' in result) {
      for (const d of result.diagnostics) process.stderr.write(`${formatDiagnostic(d)}\n`);
      process.stderr.write(child ? 'svc-gen dev: schema error; the running server is kept\n' : 'svc-gen dev: fix the schema to start\n');
      return false;
    }
    if ('stale' in result) return false;
    for (const file of result.written) process.stdout.write(`svc-gen dev: wrote ${file}\n`);
    return true;
  };
  const start = () => {
    child = spawn(process.execPath, [BIN, 'start', outDir], { stdio: 'inherit', env: process.env });
    child.on('exit', (code, signal) => {
      if (signal === null && code !== 0) process.stderr.write(`svc-gen dev: server exited with code ${code}\n`);
    });
  };
  const stop = () => new Promise<void>((done) => {
    const running = child;
    child = null;
    if (!running || running.exitCode !== null) return done();
    running.once('exit', () => done());
    running.kill('SIGTERM');
  });

  if (await rebuild()) start();
  let timer: NodeJS.Timeout | null = null;
  let queue = Promise.resolve();
  const watcher = watch(dirname(schemaPath), (_event, file) => {
    if (file !== basename(schemaPath)) return;
    if (timer) clearTimeout(timer);
    timer = setTimeout(() => {
      queue = queue.then(async () => {
        process.stdout.write('svc-gen dev: schema changed, rebuilding\n');
        if (await rebuild()) {
          await stop();
          start();
        }
      });
    }, DEV_DEBOUNCE_MS);
  });
  return new Promise<number>((done) => {
    const quit = async () => {
      watcher.close();
      if (timer) clearTimeout(timer);
      await stop();
      done(0);
    };
    process.once('SIGINT', quit);
    process.once('SIGTERM', quit);
  });
}
