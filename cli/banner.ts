/**
 * The start banner of `svc-gen dev`: where everything is and how to log in,
 * written once to stdout for the person who just ran the command (not a log
 * record: it carries the development admin's password on purpose).
 */
import { relative } from 'node:path';
import type { Config } from '../runtime/config/index.ts';
import type { DevAdmin } from '../runtime/auth/index.ts';

export interface BannerInput {
  readonly config: Config;
  readonly port: number;
  readonly schemaPath: string;
  readonly outDir: string;
  readonly embeddedDir: string;
  readonly admin: DevAdmin | null;
  readonly adminStateFile: string;
  readonly readyMs: number;
}

export function banner(input: BannerInput): string {
  const host = ['0.0.0.0', '::', '', '127.0.0.1', '::1'].includes(input.config.host) ? 'localhost' : input.config.host;
  const base = `http://${host.includes(':') ? `[${host}]` : host}:${input.port}`;
  const rows: [string, string][] = [
    ['GraphQL', `${base}/graphql   (POST; subscriptions: ws://${base.slice(7)}/graphql/ws)`],
    ['IDE', `${base}/graphql   (open it in a browser)`],
    ['REST docs', `${base}/docs   (OpenAPI: ${base}/openapi.json)`],
    ['Health', `${base}/ready`],
    ['Database', database(input.config, input.embeddedDir)],
    ['Schema', `${shown(input.schemaPath)} -> ${shown(input.outDir)}`],
  ];
  const width = Math.max(...rows.map(([label]) => label.length)) + 2;
  const lines = [
    '',
    `  svc-gen dev is ready (${(input.readyMs / 1000).toFixed(1)} s)`,
    '',
    ...rows.map(([label, value]) => `  ${label.padEnd(width)}${value}`),
    '',
    ...login(input, base, width),
    '',
    `  Saving ${shown(input.schemaPath)} rebuilds and switches to the new schema 2 s after the last save. Ctrl-C stops.`,
    '',
  ];
  return `${lines.join('\n')}\n`;
}

function login(input: BannerInput, base: string, width: number): string[] {
  const pad = ' '.repeat(width + 2);
  const { adminEmail, adminPassword } = input.config.auth;
  if (input.admin) {
    const body = JSON.stringify({ email: input.admin.email, password: input.admin.password });
    const origin = input.admin.created ? 'created now: the database had no user' : `kept in ${shown(input.adminStateFile)}`;
    return [
      `  ${'Log in'.padEnd(width)}${input.admin.email} / ${input.admin.password}   (development admin, ${origin})`,
      `${pad}curl -s -X POST ${base}/auth/login -H 'content-type: application/json' -d '${body}'`,
      `${pad}then send "authorization: Bearer <token>" (the IDE has a field for it)`,
    ];
  }
  if (adminEmail && adminPassword) {
    return [`  ${'Log in'.padEnd(width)}${adminEmail} with the password in ADMIN_PASSWORD: POST ${base}/auth/login {"email","password"}`];
  }
  return [
    `  ${'Log in'.padEnd(width)}with a user of this database: POST ${base}/auth/login {"email","password"}`,
    `${pad}(ADMIN_EMAIL and ADMIN_PASSWORD seed an admin; POST /auth/users adds users)`,
  ];
}

function database(config: Config, embeddedDir: string): string {
  if (config.databaseUrl === null) return `embedded Postgres (PGlite) in ${shown(embeddedDir)} (set DATABASE_URL to use a server)`;
  try {
    const url = new URL(config.databaseUrl);
    return `Postgres server ${url.hostname}:${url.port || '5432'}${url.pathname} (DATABASE_URL)`;
  } catch {
    return 'Postgres server (DATABASE_URL)';
  }
}

function shown(path: string): string {
  const rel = relative(process.cwd(), path);
  return rel && !rel.startsWith('..') ? rel : path;
}
