/**
 * `npx tsx bench/sql/run.ts`: build and compile the records hot-path statements
 * 100,000 times each (ADR 016): the one-statement create (insert of a
 * 10-field row, its first event and its audit entry as CTEs) and a read by id.
 * Three ways side by side, in ns per statement: the in-house fragment module
 * (runtime/sql), pg-sql2 (the bench's copy, brought by postgraphile; it
 * needs Node >= 22, so the runtime cannot depend on it), and the string
 * binder the records code used before (`Params`, rebuilt here as it was).
 *
 *   npx tsx bench/sql/run.ts        BENCH_ITERATIONS (default 100000)
 */
import * as pgSql2 from 'pg-sql2';
import { compile, sql } from '../../runtime/sql/index.ts';

const ITERATIONS = Number(process.env.BENCH_ITERATIONS ?? 100_000);
const FIELDS = ['name', 'email', 'phone', 'employees', 'active', 'founded_at', 'address', 'tags', 'notes', 'score'];
const VALUES: unknown[] = ['Acme', 'a@acme.test', '+1 555', 12, true, '2024-01-01T00:00:00.000Z', '{"city":"X"}', '["a"]', 'n', 1.5];
const SELECT = FIELDS.map((f) => `t."${f}" as "${f}"`).join(', ');
const AUDIT = ['t1', 'user', 'u1', 'Manager', 'record.create', 'Company', 'id', 'ev', 'success', '{}', '1.2.3.4', 'ua', 'req'];

// ------------------------------------------------------------- runtime/sql
const T = sql.ident('company');
const COLUMNS = sql.join([sql`"id", "tenant_id"`, ...FIELDS.map((f) => sql.ident(f))], ', ');
const SELECTED = sql.raw(SELECT);
const scope = {};

function createInHouse() {
  const values = sql.join([sql.value('id', 'text'), sql.scoped(scope, sql`${sql.value('t1', 'text')}`),
    ...VALUES.map((v) => sql.value(v, 'text'))], ', ');
  const event = sql`insert into svc_events (id, stream_type, stream_id, version, event_type, data, actor_id, tenant_id)
    select ${sql.value('ev', 'text')}, ${sql.value('Company', 'text')}, ${sql.value('id', 'text')}, 1, ${sql.value('Created', 'text')},
           to_jsonb(created), ${sql.value('u1', 'text')}, ${sql.value('t1', 'text')} from created`;
  const audit = sql`insert into svc_audit (a) select ${sql.join(AUDIT.map((v) => sql.value(v, 'text')), ', ')} from created`;
  return compile(sql`with created as (insert into ${T} as t (${COLUMNS}) values (${values}) returning ${SELECTED}),
    appended as (${event}), audited as (${audit}) select created.* from created`, { scope });
}

function readInHouse() {
  const predicate = sql.scoped(scope, sql`t."tenant_id" = ${sql.value('t1', 'text')}`);
  return compile(sql`select ${SELECTED} from ${T} t where t."id" = ${sql.value('id', 'text')} and t."deleted_at" is null
    and ${predicate} and true`, { scope });
}

// ------------------------------------------------------------------ pg-sql2
const p2 = pgSql2.sql;
process.env.GRAPHILE_ENV ??= 'production';
const T2 = p2.identifier('company');
const COLUMNS2 = p2.join([p2`"id", "tenant_id"`, ...FIELDS.map((f) => p2.identifier(f))], ', ');
const SELECTED2 = p2.raw(SELECT);
const cast = (v: unknown) => p2`${p2.value(v as string)}::text`;

function createPgSql2() {
  const values = p2.join([cast('id'), cast('t1'), ...VALUES.map(cast)], ', ');
  const event = p2`insert into svc_events (id, stream_type, stream_id, version, event_type, data, actor_id, tenant_id)
    select ${cast('ev')}, ${cast('Company')}, ${cast('id')}, 1, ${cast('Created')},
           to_jsonb(created), ${cast('u1')}, ${cast('t1')} from created`;
  const audit = p2`insert into svc_audit (a) select ${p2.join(AUDIT.map(cast), ', ')} from created`;
  return p2.compile(p2`with created as (insert into ${T2} as t (${COLUMNS2}) values (${values}) returning ${SELECTED2}),
    appended as (${event}), audited as (${audit}) select created.* from created`);
}

function readPgSql2() {
  return p2.compile(p2`select ${SELECTED2} from ${T2} t where t."id" = ${cast('id')} and t."deleted_at" is null
    and t."tenant_id" = ${cast('t1')} and true`);
}

// ------------------------------------- the string binder records used before
class Params {
  readonly values: unknown[] = [];
  add(value: unknown, type?: string): string {
    this.values.push(value);
    return type ? `$${this.values.length}::${type}` : `$${this.values.length}`;
  }
}
const COLUMNS0 = ['"id"', '"tenant_id"', ...FIELDS.map((f) => `"${f}"`)].join(', ');

function createBefore() {
  const p = new Params();
  const values = [p.add('id', 'text'), p.add('t1', 'text'), ...VALUES.map((v) => p.add(v, 'text'))];
  const row = `insert into "company" as t (${COLUMNS0}) values (${values.join(', ')}) returning ${SELECT}`;
  const event = `insert into svc_events (id, stream_type, stream_id, version, event_type, data, actor_id, tenant_id)
    select ${p.add('ev', 'text')}, ${p.add('Company', 'text')}, ${p.add('id', 'text')}, 1, ${p.add('Created', 'text')},
           to_jsonb(created), ${p.add('u1', 'text')}, ${p.add('t1', 'text')} from created`;
  const audit = `insert into svc_audit (a) select ${AUDIT.map((v) => p.add(v, 'text')).join(', ')} from created`;
  return { text: `with created as (${row}), appended as (${event}), audited as (${audit}) select created.* from created`, values: p.values };
}

function readBefore() {
  const p = new Params();
  const text = `select ${SELECT} from "company" t where t."id" = ${p.add('id', 'text')} and t."deleted_at" is null
    and t."tenant_id" = ${p.add('t1', 'text')} and true`;
  return { text, values: p.values };
}

/**
 * The best of ROUNDS rounds, timed in this process's CPU time (the machine is
 * shared: wall time counts other processes' turns; the best round is the
 * least disturbed).
 */
const ROUNDS = 5;

/** As the records code does with every statement: its text looked up for a prepared statement's name (this flattens the text). */
const names = new Map<string, number>();
const named = (query: { text: string; values: unknown[] }) => (names.get(query.text) ?? 0) + query.values.length;

function nsPerOp(run: () => { text: string; values: unknown[] }): number {
  let sink = 0;
  for (let i = 0; i < ITERATIONS / 10; i++) sink += named(run()); // warm-up
  let best = Infinity;
  for (let round = 0; round < ROUNDS; round++) {
    const start = process.cpuUsage();
    for (let i = 0; i < ITERATIONS / ROUNDS; i++) sink += named(run());
    const used = process.cpuUsage(start);
    best = Math.min(best, used.user + used.system);
  }
  if (sink === 0) throw new Error('nothing compiled');
  return Math.round((best * 1e3) / (ITERATIONS / ROUNDS));
}

const rows = [
  { statement: 'create (insert + event + audit CTEs, 23 values)', runs: [createInHouse, createPgSql2, createBefore] },
  { statement: 'read by id (scoped)', runs: [readInHouse, readPgSql2, readBefore] },
];
console.log(`SQL build + compile, ${ITERATIONS.toLocaleString('en')} iterations each, CPU ns/op, best of ${ROUNDS} rounds (Node ${process.version})`);
console.log('| statement | runtime/sql | pg-sql2 5.0.1 | string binder (before) |');
console.log('| --- | ---: | ---: | ---: |');
for (const row of rows) console.log(`| ${row.statement} | ${row.runs.map(nsPerOp).join(' | ')} |`);
