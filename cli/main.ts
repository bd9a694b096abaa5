/**
 * The thin CLI: parse flags, call the programmatic API, map the result to
 * stdout/stderr and an exit code (0 ok, 1 user error, 2 bad usage). A user
 * error is one line naming the file (and line); never a stack trace.
 */
import { parseArgs } from 'node:util';
import { buildCommand } from './build.ts';
import { migrateCommand, startCommand } from './serve.ts';
import { devCommand } from './dev.ts';
import { UsageError, UserError } from './errors.ts';

const USAGE = `usage:
  svc-gen build --schema FILE --out DIR [--check] [--allow-destructive]
  svc-gen migrate DIR
  svc-gen start DIR
  svc-gen dev [--schema FILE] [--out DIR]      (FILE defaults to SVC_SCHEMA_PATH)`;

type Command = (args: string[]) => Promise<number>;

const COMMANDS: Record<string, Command> = {
  build: (args) => {
    const { values } = parse(args, {
      schema: { type: 'string' }, out: { type: 'string' },
      check: { type: 'boolean' }, 'allow-destructive': { type: 'boolean' },
    });
    if (!values.schema || !values.out) throw new UsageError('build needs --schema FILE and --out DIR');
    return buildCommand({
      schemaPath: values.schema, outDir: values.out,
      check: values.check === true, allowDestructive: values['allow-destructive'] === true,
    });
  },
  migrate: (args) => migrateCommand(oneDir(args, 'migrate')),
  start: (args) => startCommand(oneDir(args, 'start')),
  dev: (args) => {
    const { values } = parse(args, { schema: { type: 'string' }, out: { type: 'string' } });
    const schemaPath = values.schema ?? process.env.SVC_SCHEMA_PATH?.trim();
    if (!schemaPath) throw new UsageError('dev needs --schema FILE (or SVC_SCHEMA_PATH)');
    return devCommand({ schemaPath, outDir: values.out });
  },
};

export async function main(argv: string[]): Promise<number> {
  const [name, ...args] = argv;
  if (name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  if (name === '--version' || name === '-v') {
    const pkg = await import('../package.json', { with: { type: 'json' } });
    process.stdout.write(`${pkg.default.version}\n`);
    return 0;
  }
  const command = name ? COMMANDS[name] : undefined;
  try {
    if (!command) throw new UsageError(name ? `unknown command: ${name}` : 'no command given');
    return await command(args);
  } catch (error) {
    if (error instanceof UsageError) {
      process.stderr.write(`svc-gen: ${error.message}\n${USAGE}\n`);
      return 2;
    }
    if (error instanceof UserError) {
      process.stderr.write(`svc-gen: ${error.message}\n`);
      return 1;
    }
    throw error;
  }
}

function parse<T extends Parameters<typeof parseArgs>[0]['options']>(args: string[], options: T) {
  try {
    return parseArgs({ args, options, allowPositionals: false, strict: true });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

function oneDir(args: string[], command: string): string {
  if (args.length !== 1 || args[0].startsWith('-')) throw new UsageError(`${command} needs exactly one DIR`);
  return args[0];
}
