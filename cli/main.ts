/**
 * The thin CLI: parse flags, call the programmatic API, map the result to
 * stdout/stderr and an exit code (0 ok, 1 user error, 2 bad usage). A user
 * error is one line naming the file (and line); never a stack trace.
 *
 * Each command's module is imported when that command runs: `start` and
 * `migrate` never load the generator (ts-morph and the TypeScript compiler,
 * over a second of a cold start).
 */
import { parseArgs } from 'node:util';
import { UsageError, UserError } from './errors.ts';
import { PACKAGE_VERSION } from '../runtime/package.ts';
import type { ProjectLoading } from './serve.ts';

const USAGE = `usage:
  svc-gen build --schema FILE --out DIR [--check] [--allow-destructive] [--target citus]
                                                                      (citus: adds the migration that distributes the tables)
  svc-gen migrate DIR [--plan]                                        (--plan: print each pending step's lock, applies nothing)
  svc-gen start DIR
  svc-gen compile DIR                                                 (bundles DIR for start; start does it itself when DIR is writable)
  svc-gen dev [--schema FILE] [--out DIR] [--host ADDRESS] [--allow-destructive]
                                                                      (FILE defaults to SVC_SCHEMA_PATH; ADDRESS to HOST, else 127.0.0.1)`;

// Each command imports what it needs when it runs: `start` never loads the
// generator (TypeScript's compiler), `dev` loads it only to build.

type Command = (args: string[], loading?: ProjectLoading) => Promise<number>;

const COMMANDS: Record<string, Command> = {
  build: async (args) => {
    const { values } = parse(() => parseArgs({
      args, allowPositionals: false, strict: true,
      options: {
        schema: { type: 'string' }, out: { type: 'string' },
        check: { type: 'boolean' }, 'allow-destructive': { type: 'boolean' }, target: { type: 'string' },
      },
    }));
    if (!values.schema || !values.out) throw new UsageError('build needs --schema FILE and --out DIR');
    if (values.target !== undefined && values.target !== 'citus' && values.target !== 'postgres') {
      throw new UsageError(`--target is citus or postgres (the default), not ${JSON.stringify(values.target)}`);
    }
    const { buildCommand } = await import('./build.ts');
    return buildCommand({
      schemaPath: values.schema, outDir: values.out,
      check: values.check === true, allowDestructive: values['allow-destructive'] === true, target: values.target,
    });
  },
  migrate: async (args) => {
    const { values, positionals } = parse(() => parseArgs({ args, allowPositionals: true, strict: true, options: { plan: { type: 'boolean' } } }));
    const dir = oneDir(positionals, 'migrate');
    return (await import('./serve.ts')).migrateCommand(dir, { plan: values.plan === true });
  },
  start: async (args, loading) => {
    const dir = oneDir(args, 'start');
    return (await import('./serve.ts')).startCommand(dir, loading);
  },
  compile: async (args, loading) => {
    const dir = oneDir(args, 'compile');
    return (await import('./serve.ts')).compileCommand(dir, loading);
  },
  dev: async (args) => {
    const { values } = parse(() => parseArgs({
      args, allowPositionals: false, strict: true,
      options: {
        schema: { type: 'string' }, out: { type: 'string' }, host: { type: 'string' }, 'allow-destructive': { type: 'boolean' },
      },
    }));
    const schemaPath = values.schema ?? process.env.SVC_SCHEMA_PATH?.trim();
    if (!schemaPath) throw new UsageError('dev needs --schema FILE (or SVC_SCHEMA_PATH)');
    const { devCommand } = await import('./dev.ts');
    return devCommand({ schemaPath, outDir: values.out, host: values.host, allowDestructive: values['allow-destructive'] === true });
  },
};

/**
 * `loading`: given by the installed bin for `start`, `migrate` and `compile`,
 * which it runs without TypeScript loader hooks (a project may be bundled).
 */
export async function main(argv: string[], loading?: ProjectLoading): Promise<number> {
  const [name, ...args] = argv;
  if (name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  if (name === '--version' || name === '-v') {
    process.stdout.write(`${PACKAGE_VERSION}\n`);
    return 0;
  }
  const command = name ? COMMANDS[name] : undefined;
  try {
    if (!command) throw new UsageError(name ? `unknown command: ${name}` : 'no command given');
    return await command(args, loading);
  } catch (error) {
    if (error instanceof UsageError) {
      process.stderr.write(`svc-gen: ${error.message}\n${USAGE}\n`);
      return 2;
    }
    if (error instanceof UserError) {
      // Several problems (every bad variable of the environment, say): a line each.
      process.stderr.write(error.message.split('\n').map((line) => `svc-gen: ${line}\n`).join(''));
      return 1;
    }
    throw error;
  }
}

/** Runs node's parseArgs, turning its errors into a usage error. */
function parse<T>(run: () => T): T {
  try {
    return run();
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

function oneDir(args: string[], command: string): string {
  if (args.length !== 1 || args[0].startsWith('-')) throw new UsageError(`${command} needs exactly one DIR`);
  return args[0];
}
