/**
 * The Citus stub (citus-stub.sql): `create_reference_table` and
 * `create_distributed_table` on plain Postgres that refuse what Citus would
 * (ADR 025), for the rule test without a Citus node.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { parseMigration } from '../../runtime/db/migrate/parse.ts';

export const CITUS_STUB = readFileSync(join(import.meta.dirname, 'citus-stub.sql'), 'utf8');

/** Runs `sql` (several statements) on the database at `url`; rejects with Postgres's error. */
export async function runSql(url: string, sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

export function installCitusStub(url: string): Promise<void> {
  return runSql(url, CITUS_STUB);
}

export interface Placement {
  readonly table: string;
  /** 'h' distributed by hash, 'n' reference (Citus's pg_dist_partition). */
  readonly method: 'h' | 'n';
  readonly column: string | null;
  readonly colocation: number;
}

/** What the stub recorded, in the order the tables were handed to it. */
export async function placements(url: string): Promise<Placement[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<Placement>(`select logicalrelid::text as table, partmethod as method, partkey as column,
      colocationid as colocation from pg_dist_partition order by xmin::text::bigint, ctid`);
    return rows;
  } finally {
    await client.end();
  }
}

/**
 * A distribution migration as an earlier svc-gen wrote it, before `tables`
 * existed: `text` without the steps that place them (renumbered) and without
 * them in its header. The runner and `placedRuntimeTables` read it as that
 * build's file.
 */
export function withoutPlacements(text: string, tables: readonly string[]): string {
  const { steps } = parseMigration(text);
  const places = (body: string) => tables.some((table) => body.includes(`_table('"${table}"'`));
  const header = text.slice(0, text.indexOf('\n-- step 1 ') + 1).replace(new RegExp(`, (${tables.join('|')})\\b`, 'g'), '');
  return header + steps.filter((step) => !places(step.body))
    .map((step, i) => `-- step ${i + 1} ${step.kind}${step.table ? ` "${step.table}"` : ''}: ${step.description}\n${step.body}`).join('\n');
}
