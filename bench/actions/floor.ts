/**
 * The database's own share of a bound action, without Node's per-request
 * work: svc-gen's two create statements (the `Plain` one: row, event, audit
 * entry; the `Bound` one: the same plus the action's job and its JobEnqueued
 * event), sent by `connections` loops over one pg pool as prepared statements,
 * alternating in rounds as the HTTP rows do. Their ratio is what a bound
 * create costs Postgres: no server in front of it can do better than this
 * ratio unless its own per-request work dilutes it.
 */
import pg from 'pg';
import { newId, newMonotonicId } from '../../runtime/ids.ts';

const TS = (column: string) => `to_char((t."${column}") at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as "${column.replace(/_(\w)/, (_, c: string) => c.toUpperCase())}"`;

// The texts svc-gen sends (bench/performance/profile.ts plain|bound prints them), with their parameters.
const created = (table: string) => `with created as (
  insert into "${table}" as t ("id", "tenant_id", "name", "price") values ($1::text, $2::text, $3::text, $4::double precision)
  returning t."id" as "id", t."tenant_id" as "tenantId", ${TS('created_at')}, ${TS('updated_at')}, ${TS('deleted_at')}, t."name" as "name", t."price" as "price"
), appended as (
  insert into svc_events (id, stream_type, stream_id, version, event_type, data, actor_id, tenant_id)
  select $5, $6, $7, 1, $8, to_jsonb(created), $9, $10 from created
), also_0 as (
  insert into svc_audit (id, tenant_id, actor_kind, actor_id, actor_role, action, entity_type, entity_id, event_id, outcome, changes, ip, user_agent, request_id)
  select svc_audit_next_id(), $11::text, $12::text, $13::text, $14::text, $15::text, $16::text, $17::text, $18::text, $19::text, $20::jsonb, $21::text, $22::text, $23::text from created
)`;

const PLAIN = `${created('plain')} select created.* from created`;
const BOUND = `${created('bound')}, action_job_0 as (
  insert into svc_jobs (id, queue, kind, payload, idempotency_key, max_attempts, priority, tenant_id, created_by)
  select $24::text, $25::text, $26::text, ($27::jsonb || jsonb_build_object('input', jsonb_build_object($28::text, c."id", $29::text, c."name", $30::text, c."price"))),
         $31::text, $32::int, $33::int, $34::text, $35::text
    from created c
  on conflict (coalesce(tenant_id, ''), queue, idempotency_key) where idempotency_key is not null do nothing
  returning id
), action_job_0_event as (
  insert into svc_events (id, stream_type, stream_id, version, event_type, data, actor_id, tenant_id)
  select $36::text, $37::text, $38::text, 1, $39::text, $40::jsonb, $41::text, $42::text from action_job_0
) select created.* from created`;

function values(model: 'Plain' | 'Bound'): unknown[] {
  const id = newId();
  const eventId = newId();
  const common = [
    id, '', 'bench', 1, eventId, model, id, 'Created', 'bench', '',
    '', 'user', 'bench', 'Sales', 'record.create', model, id, eventId, 'success', '{"name":"bench","price":1}', '127.0.0.1', 'autocannon', newId(),
  ];
  if (model === 'Plain') return common;
  const jobId = newMonotonicId();
  const base = {
    action: 'priced', trigger: 'event', model, event: 'created', eventId, recordId: id, tenantId: null, old: null,
    actor: { kind: 'user', id: 'bench', role: 'Sales' }, depth: 0,
  };
  return [
    ...common,
    jobId, 'actions', 'priced', JSON.stringify(base), 'id', 'name', 'price', `${eventId}:priced`, 5, 0, null, 'bench',
    newId(), 'Job', jobId, 'JobEnqueued', '{"queue":"actions","kind":"priced","priority":0,"maxAttempts":5}', 'bench', '',
  ];
}

async function run(pool: pg.Pool, model: 'Plain' | 'Bound', connections: number, seconds: number): Promise<number> {
  const statement = { name: `bench_${model}`, text: model === 'Plain' ? PLAIN : BOUND };
  const until = performance.now() + seconds * 1000;
  let done = 0;
  await Promise.all(Array.from({ length: connections }, async () => {
    while (performance.now() < until) {
      await pool.query({ ...statement, values: values(model) });
      done++;
    }
  }));
  return done / seconds;
}

/** Statements per second of each model, per round (a short warm-up first). */
export async function databaseFloor(url: string, connections: number, seconds: number, rounds: number) {
  const pool = new pg.Pool({ connectionString: url, max: connections });
  pool.on('error', () => undefined); // an idle connection ended by the database's drop at teardown
  try {
    for (const model of ['Plain', 'Bound'] as const) await run(pool, model, connections, 1);
    const result = { Plain: [] as number[], Bound: [] as number[] };
    for (let round = 0; round < rounds; round++) {
      const order = round % 2 === 0 ? (['Plain', 'Bound'] as const) : (['Bound', 'Plain'] as const);
      for (const model of order) result[model].push(await run(pool, model, connections, seconds));
    }
    return result;
  } finally {
    await pool.end();
  }
}
