/**
 * The raw floor of bench:feed: svc-gen's create work (row + version-1 event,
 * atomic, one autocommit statement) through pg in a bare Node http server,
 * in its own process; with BENCH_NOTIFY=1 the statement also calls pg_notify,
 * as every write did before the change feed (the "before" floor).
 */
import { createServer } from 'node:http';
import pg from 'pg';
import { ulid } from 'ulid';

const notify = process.env.BENCH_NOTIFY === '1';
const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: Number(process.env.SVC_DB_POOL_SIZE ?? 20) });
pool.on('error', () => undefined); // an idle connection ended by the database's drop at teardown
const SQL = `with created as (
    insert into "item" ("id", "tenant_id", "name", "price") values ($1, '', $2, $3)
    returning "id", "tenant_id" as "tenantId", "created_at" as "createdAt", "name", "price"
  ), appended as (
    insert into svc_events (id, stream_type, stream_id, version, event_type, data, actor_id, tenant_id)
    select $4, 'Item', $1, 1, 'Created', to_jsonb(created), 'bench', '' from created
  )
  select created.* ${notify ? `, pg_notify('bench_floor', $1) as notified` : ''} from created`;

const server = createServer((request, response) => {
  let body = '';
  request.on('data', (chunk) => (body += chunk));
  request.on('end', async () => {
    try {
      const data = JSON.parse(body) as { name: string; price: number };
      const { rows } = await pool.query(SQL, [ulid(), data.name, data.price, ulid()]);
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ data: rows[0] }));
    } catch {
      response.writeHead(500).end();
    }
  });
});
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${(server.address() as { port: number }).port}` })}\n`);
});
process.on('SIGTERM', () => server.close(() => void pool.end().then(() => process.exit(0))));
