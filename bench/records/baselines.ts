/**
 * The baselines the records benchmark compares svc-gen with: the floor (the
 * same SQL through pg in a bare Node http server, no GraphQL, no auth), the
 * same statements behind svc-gen's own stack (Koa, then Koa and graphql-js)
 * and PostGraphile v5 over a copy of the table, whose create is a custom
 * mutation doing the same work (POSTGRAPHILE_SQL). serve.ts runs each in a
 * process of its own.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import Router from '@koa/router';
import { buildSchema, execute, parse, validate, type DocumentNode } from 'graphql';
import Koa from 'koa';
import pg from 'pg';
import { newId as ulid } from '../../runtime/ids.ts'; // ULIDs from pooled randomness: the fastest raw way

/** `rows` items (ids in key order) in `table`: what the read rows page through. */
export const seedItemsSql = (table: string, rows: number) => `insert into ${table} ("id", "tenant_id", "name", "price")
  select lpad(i::text, 26, '0'), '', 'item ' || i, i from generate_series(1, ${rows}) as i`;

/** The records benches' database: `rows` items for svc-gen and the floor, PostGraphile's copy with as many, analysed. */
export async function prepareRecordsDatabase(db: { none(sql: string): Promise<unknown>; multi(sql: string): Promise<unknown> }, rows: number) {
  await db.none(seedItemsSql('"item"', rows));
  await db.multi(POSTGRAPHILE_SQL);
  await db.none(seedItemsSql('pgl.item', rows));
  await db.none('analyze');
}

function listen(server: Server): Promise<number> {
  return new Promise((done) => server.listen(0, '127.0.0.1', () => done((server.address() as { port: number }).port)));
}

function readBody(request: IncomingMessage): Promise<any> {
  return new Promise((done, fail) => {
    let text = '';
    request.setEncoding('utf8');
    request.on('data', (chunk) => (text += chunk));
    request.on('end', () => done(text ? JSON.parse(text) : {}));
    request.on('error', fail);
  });
}

const ITEM_COLUMNS = `"id", "tenant_id" as "tenantId", "created_at" as "createdAt", "updated_at" as "updatedAt", "deleted_at" as "deletedAt", "name", "price", "note"`;

/** The work of svc-gen's create (row + event + audit entry, atomic) and records (20 rows), in raw SQL, on `pool`. */
function floorStatements(pool: pg.Pool) {
  // The same work as svc-gen's create (row + version-1 event + audit entry, atomic; no
  // per-write notice since the change feed, ADR 010), the fastest raw way: one
  // autocommit statement, one round trip, prepared once per connection (as svc-gen's).
  const create = async (data: { name: string; price: number }) => {
    const id = ulid();
    const { rows } = await pool.query({
      name: 'floor_create',
      text: `with created as (
         insert into "item" ("id", "tenant_id", "name", "price") values ($1, '', $2, $3) returning ${ITEM_COLUMNS}
       ), appended as (
         insert into svc_events (id, stream_type, stream_id, version, event_type, data, actor_id, tenant_id)
         select $4, 'Item', $1, 1, 'Created', to_jsonb(created), 'bench', '' from created
       ), audited as (
         insert into svc_audit (id, tenant_id, actor_kind, actor_id, actor_role, action, entity_type, entity_id, event_id, outcome, changes, ip, user_agent, request_id)
         select svc_audit_next_id(), '', 'user', 'bench', 'Sales', 'record.create', 'Item', $1, $4, 'success', $5::jsonb, '127.0.0.1', null, null from created
       )
       select created.* from created`,
      values: [id, data.name, data.price, ulid(), JSON.stringify(data)],
    });
    return rows[0];
  };
  const records = async () => (await pool.query({
    name: 'floor_records', text: `select ${ITEM_COLUMNS} from "item" where "deleted_at" is null and "tenant_id" = '' order by "id" limit 20`,
  })).rows;
  return { create, records };
}

export async function startFloor(url: string, poolSize: number) {
  const pool = new pg.Pool({ connectionString: url, max: poolSize });
  pool.on('error', () => undefined); // an idle connection ended by the database's drop at teardown
  const { create, records } = floorStatements(pool);
  return bareServer(pool, 200, async (url, body) => ({ data: url === '/create' ? await create(body) : await records() }));
}

/**
 * A bare Node http server over `pool`: the JSON body in, `answer`'s result out
 * as JSON with `status` (500, without a body, when it throws).
 */
async function bareServer(pool: pg.Pool, status: number, answer: (url: string | undefined, body: any) => Promise<unknown>) {
  const reported = new Set<string>();
  const server = createServer(async (request, response) => {
    try {
      const result = await answer(request.url, await readBody(request));
      response.writeHead(status, { 'content-type': 'application/json' });
      response.end(JSON.stringify(result));
    } catch (error) {
      // A floor that fails must say why (once per message), or its rate means nothing.
      const message = error instanceof Error ? error.message : String(error);
      if (!reported.has(message)) process.stderr.write(`  floor error: ${message}\n`);
      reported.add(message);
      response.writeHead(500).end();
    }
  });
  const port = await listen(server);
  return { url: `http://127.0.0.1:${port}`, server, stop: async () => { server.close(); await pool.end(); } };
}

/**
 * The floor's statements behind the stack svc-gen is built on (koa, @koa/router,
 * graphql-js), with nothing of svc-gen: no auth, access rules, tenant scope,
 * validation, audit of denials, request ids, rate limit or metrics. What the
 * chosen stack alone costs against the raw floor, measured beside it:
 *
 *   POST /koa/create, POST /koa/records   Koa + router + a JSON body: the statement's rows as JSON
 *   POST /koa/jobs                        the same around `POST /jobs`'s own statement (needs the jobs tables)
 *   POST /graphql                         the same + graphql-js: `create(model, data: JSON)` and
 *                                         `records(model, limit)`, each document parsed and validated
 *                                         once (cached by its text), `execute` per request
 */
export async function startStackFloor(url: string, poolSize: number) {
  const pool = new pg.Pool({ connectionString: url, max: poolSize });
  pool.on('error', () => undefined); // an idle connection ended by the database's drop at teardown
  const { create, records } = floorStatements(pool);
  const enqueue = enqueueStatement(pool);
  const schema = buildSchema(`
    scalar JSON
    type Query { records(model: String!, limit: Int): JSON }
    type Mutation { create(model: String!, data: JSON!): JSON }
  `);
  const root = {
    records: () => records(),
    create: ({ data }: { data: { name: string; price: number } }) => create(data),
  };
  const documents = new Map<string, DocumentNode>();
  const documentOf = (query: string) => {
    let document = documents.get(query);
    if (!document) {
      document = parse(query);
      const errors = validate(schema, document);
      if (errors.length > 0) throw errors[0];
      documents.set(query, document);
    }
    return document;
  };
  const app = new Koa();
  const router = new Router();
  router.post('/koa/create', async (ctx) => {
    ctx.body = JSON.stringify({ data: await create(await readBody(ctx.req)) });
    ctx.type = 'application/json';
  });
  router.post('/koa/records', async (ctx) => {
    await readBody(ctx.req);
    ctx.body = JSON.stringify({ data: await records() });
    ctx.type = 'application/json';
  });
  router.post('/koa/jobs', async (ctx) => {
    ctx.body = JSON.stringify({ id: (await enqueue(await readBody(ctx.req))).id });
    ctx.type = 'application/json';
    ctx.status = 201;
  });
  router.post('/graphql', async (ctx) => {
    const body = await readBody(ctx.req);
    const result = await execute({ schema, document: documentOf(body.query), rootValue: root, variableValues: body.variables });
    ctx.body = JSON.stringify(result);
    ctx.type = 'application/json';
  });
  app.use(router.routes());
  const server = createServer(app.callback());
  const port = await listen(server);
  return { url: `http://127.0.0.1:${port}`, server, stop: async () => { server.close(); await pool.end(); } };
}

/**
 * A copy of the item table in schema `pgl`, and PostGraphile's create as its
 * documented way to do a multi-table write (a custom mutation: one VOLATILE
 * SQL function, exposed as `addItem`): the row, its version-1 event and its
 * audit entry, all three keyed in time order (UUIDv7, as svc-gen's ULIDs),
 * atomic, with no NOTIFY: the work of svc-gen's create and of the floor's.
 */
export const POSTGRAPHILE_SQL = `
create schema pgl;
create function pgl.uuid7() returns text language sql volatile as $$
  select encode(set_bit(set_bit(overlay(uuid_send(gen_random_uuid())
    placing substring(int8send(floor(extract(epoch from clock_timestamp()) * 1000)::bigint) from 3) from 1 for 6),
    52, 1), 53, 1), 'hex')::uuid::text
$$;
create table pgl.item (
  id text primary key default pgl.uuid7(),
  tenant_id text,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  deleted_at timestamptz,
  name text not null,
  price double precision not null,
  note text
);
create index on pgl.item (deleted_at);
comment on function pgl.uuid7() is '@omit';
create function pgl.add_item(name text, price double precision) returns pgl.item language plpgsql volatile as $$
#variable_conflict use_variable
declare
  created pgl.item;
  event_id text := pgl.uuid7();
begin
  insert into pgl.item (name, price) values (name, price) returning * into created;
  insert into public.svc_events (id, stream_type, stream_id, version, event_type, data, actor_id, tenant_id)
    values (event_id, 'PglItem', created.id, 1, 'Created', to_jsonb(created), 'bench', '');
  insert into public.svc_audit (id, tenant_id, actor_kind, actor_id, actor_role, action, entity_type, entity_id, event_id,
                                outcome, changes, ip, user_agent, request_id)
    values (public.svc_audit_next_id(), '', 'user', 'bench', 'Sales', 'record.create', 'PglItem', created.id, event_id,
            'success', jsonb_build_object('name', name, 'price', price), '127.0.0.1', null, null);
  return created;
end $$;
`;

export async function startPostGraphile(url: string, poolSize: number) {
  // PostGraphile 5 expects Node 22: polyfill what it uses before loading it.
  const P = Promise as unknown as { withResolvers?: () => unknown };
  P.withResolvers ??= function withResolvers() {
    let resolve!: (value: unknown) => void;
    let reject!: (reason: unknown) => void;
    const promise = new Promise((res, rej) => { resolve = res; reject = rej; });
    return { promise, resolve, reject };
  };
  const { postgraphile } = await import('postgraphile');
  const { PostGraphileAmberPreset } = await import('postgraphile/presets/amber');
  const { makePgService } = await import('postgraphile/adaptors/pg');
  const { grafserv } = await import('postgraphile/grafserv/node');
  // Our own pool, ended by stop(): connections left open would log errors when the database is dropped.
  const pool = new pg.Pool({ connectionString: url, max: poolSize });
  pool.on('error', () => undefined); // an idle connection ended by the database's drop at teardown
  const pgl = postgraphile({
    extends: [PostGraphileAmberPreset],
    pgServices: [makePgService({ pool, schemas: ['pgl'] })],
    grafserv: { graphqlPath: '/graphql', graphiql: false },
  });
  const serv = pgl.createServ(grafserv);
  const server = createServer();
  serv.addTo(server);
  await pgl.getSchema();
  const port = await listen(server);
  return { url: `http://127.0.0.1:${port}`, stop: async () => { server.close(); await pgl.release(); await pool.end(); } };
}

/**
 * The floor of `POST /jobs`: svc-gen's enqueue statement (the job row with
 * its idempotency arbiter, its JobEnqueued event and its `job.enqueue` audit
 * entry, in one prepared statement) behind a bare Node http server. The
 * target of `POST /jobs` is set against the create floor; this row shows
 * what the enqueue's own statement allows.
 */
/** `POST /jobs`'s own statement (job, JobEnqueued event and audit entry in one statement), prepared, from pg. */
function enqueueStatement(pool: pg.Pool) {
  const enqueue = async (body: { queue: string; kind: string; payload: unknown }) => {
    const id = ulid();
    const eventId = ulid();
    const changes = JSON.stringify({ queue: body.queue, kind: body.kind, priority: 0, maxAttempts: 5 });
    const { rows } = await pool.query({
      name: 'floor_enqueue',
      text: `with created as (
         insert into svc_jobs (id, queue, kind, payload, idempotency_key, max_attempts, priority, tenant_id, created_by)
         values ($1, $2, $3, $4::jsonb, null, 5, 0, null, 'bench')
         on conflict (coalesce(tenant_id, ''), queue, idempotency_key) where idempotency_key is not null do nothing
         returning id
       ), appended as (
         insert into svc_events (id, stream_type, stream_id, version, event_type, data, actor_id, tenant_id)
         select $5, 'Job', created.id, 1, 'JobEnqueued', $6::jsonb, 'bench', '' from created
       ), audited as (
         insert into svc_audit (id, tenant_id, actor_kind, actor_id, actor_role, action, entity_type, entity_id, event_id, outcome, changes, ip, user_agent, request_id)
         select svc_audit_next_id(), '', 'user', 'bench', 'Viewer', 'job.enqueue', 'Job', created.id, $5, 'success', $6::jsonb, '127.0.0.1', null, null from created
       )
       select id from created`,
      values: [id, body.queue, body.kind, JSON.stringify(body.payload ?? {}), eventId, changes],
    });
    return rows[0];
  };
  return enqueue;
}

export async function startEnqueueFloor(url: string, poolSize: number) {
  const pool = new pg.Pool({ connectionString: url, max: poolSize });
  pool.on('error', () => undefined); // an idle connection ended by the database's drop at teardown
  const enqueue = enqueueStatement(pool);
  return bareServer(pool, 201, async (_, body) => ({ id: (await enqueue(body)).id, status: 'queued' }));
}
