/**
 * The operating views: /console (health, instances, rates, jobs, projection
 * lag, history coverage), /console/workers (worker tokens: mint, shown once, revoke),
 * /console/schema (models, fields, relations, access per role, from the
 * IR), /console/migrations and /console/projections.
 */
import { useEffect, useState } from 'preact/hooks';
import { rest, session } from '../api.ts';
import { allows, loadSchema, typeName, type Operation } from '../schema.ts';
import { ErrorNote, Link, Loading, Time, useAction, useApi } from '../ui.tsx';

const ROLES = ['Admin', 'Manager', 'Sales', 'Support', 'Viewer'];
const OPERATIONS: Operation[] = ['read', 'create', 'update', 'delete'];

interface Stats { byStatus: Record<string, number>; byQueue: Array<{ queue: string; status: string; count: number }>; oldestQueuedSeconds: number }
interface Diagnostics {
  projections?: { items?: Array<{ name: string; sourceModel: string; rows: number; lagRows: number; lastSyncAt: string | null; lastRebuildAt: string | null }> };
  history?: { policy: string; models: Array<{ model: string; events: number; complete: boolean }> };
  audit?: Record<string, unknown>;
}

async function probe(path: string): Promise<string> {
  const response = await fetch(path);
  const body = await response.json().catch(() => ({})) as { status?: string; reason?: string };
  return `${response.status} ${body.status ?? ''}${body.reason ? ` (${body.reason})` : ''}`;
}

/** Sums of the samples of each metric in Prometheus text (labels summed away). */
function parseMetrics(text: string): Map<string, number> {
  const sums = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][\w:]*)(?:\{[^}]*\})?\s+(\S+)/.exec(line);
    if (!match) continue;
    const value = Number(match[2]);
    if (Number.isFinite(value)) sums.set(match[1], (sums.get(match[1]) ?? 0) + value);
  }
  return sums;
}

interface Sample { at: number; values: Map<string, number> }

/**
 * Rates from two scrapes of this instance's /metrics (open to loopback
 * clients, else it needs SVC_METRICS_TOKEN: then the panel says so).
 */
function Rates() {
  const [samples, setSamples] = useState<Sample[]>([]);
  const [refused, setRefused] = useState<number | null>(null);
  useEffect(() => {
    let live = true;
    const scrape = async () => {
      const response = await fetch('/metrics');
      if (!live) return;
      if (!response.ok) { setRefused(response.status); return; }
      const sample = { at: performance.now(), values: parseMetrics(await response.text()) };
      setSamples((old) => [...old.slice(-1), sample]);
    };
    void scrape();
    const first = setTimeout(scrape, 2000);
    const timer = setInterval(scrape, 10_000);
    return () => { live = false; clearTimeout(first); clearInterval(timer); };
  }, []);
  if (refused !== null) return <p class="muted">Rates need /metrics, which answered {refused}: it is open to loopback clients, else it needs SVC_METRICS_TOKEN.</p>;
  const [a, b] = samples.length === 2 ? samples : [null, samples[0] ?? null];
  const rate = (name: string) => (a && b ? ((b.values.get(name) ?? 0) - (a.values.get(name) ?? 0)) / ((b.at - a.at) / 1000) : null);
  const shown = (value: number | null, unit: string) => (value === null ? 'measuring…' : `${value.toFixed(1)} ${unit}`);
  const now = (name: string) => (b?.values.has(name) ? String(Math.round((b.values.get(name) ?? 0) * 1000) / 1000) : '–');
  return (
    <dl class="facts" aria-label="Rates of this instance">
      <div><dt>requests</dt><dd id="rate-requests">{shown(rate('svc_http_requests_total'), 'per s')}</dd></div>
      <div><dt>GraphQL operations</dt><dd>{shown(rate('svc_graphql_operations_total'), 'per s')}</dd></div>
      <div><dt>jobs completed</dt><dd>{shown(rate('svc_job_lease_to_complete_seconds_count'), 'per s')}</dd></div>
      <div><dt>feed lag</dt><dd id="feed-lag">{now('svc_feed_lag_seconds')} s</dd></div>
      <div><dt>realtime connections</dt><dd>{now('svc_realtime_connections')}</dd></div>
    </dl>
  );
}

interface Instance {
  id: string; host: string | null; pid: number | null; startedAt: string; lastHeartbeatAt: string; secondsSinceHeartbeat: number;
  schemaMigration: string | null; olderSchema: boolean; stale: boolean; self: boolean;
}

/**
 * The service's instances (GET /meta/instances, the realtime tier's registry),
 * refreshed every 10 s. They belong to no tenant: asked in the global scope
 * even while the operator acts in a tenant; a tenant's Admin is not shown them.
 */
function Instances() {
  const list = useApi(() => rest<{ self: string; instances: Instance[] }>('GET', '/meta/instances', undefined, { global: true }), 'instances');
  useEffect(() => {
    const timer = setInterval(list.reload, 10_000);
    return () => clearInterval(timer);
  }, []);
  const instances = list.data?.instances ?? [];
  const stale = instances.filter((i) => i.stale).length;
  return (
    <>
      <h2>Instances</h2>
      <ErrorNote error={list.error} />
      {list.data ? (
        <p class="muted" id="instances-summary">{instances.length - stale} live instance{instances.length - stale === 1 ? '' : 's'}
          {stale > 0 ? `, ${stale} stale (silent past their heartbeat TTL, about to be removed)` : ''}</p>
      ) : <Loading loading={list.loading} />}
      <div class="scroll" tabIndex={0}><table id="instances">
        <caption class="sr-only">Instances of the service</caption>
        <thead><tr><th scope="col">instance</th><th scope="col">host (pid)</th><th scope="col">started</th><th scope="col">last heartbeat</th><th scope="col">schema migration</th><th scope="col">state</th></tr></thead>
        <tbody>{instances.map((i) => (
          <tr key={i.id}>
            <td>{i.id}{i.self ? <span class="muted"> (this one)</span> : null}</td>
            <td>{i.host ?? '–'}{i.pid !== null ? ` (${i.pid})` : ''}</td>
            <td><Time at={i.startedAt} /></td>
            <td><Time at={i.lastHeartbeatAt} /> <span class="muted">{Math.round(i.secondsSinceHeartbeat)} s ago</span></td>
            <td>{i.schemaMigration ?? '–'}{i.olderSchema ? <span class="muted"> (older build)</span> : null}</td>
            <td><span class={`status ${i.stale ? 'status-dead' : 'status-succeeded'}`}>{i.stale ? 'stale' : 'live'}</span></td>
          </tr>))}</tbody>
      </table></div>
    </>
  );
}

export function Dashboard() {
  const isAdmin = session.user?.role === 'Admin';
  const health = useApi(async () => ({ health: await probe('/health'), ready: await probe('/ready') }), 'health');
  const stats = useApi(() => (isAdmin ? rest<Stats>('GET', '/jobs/stats') : Promise.resolve(null)), 'stats');
  const diag = useApi(() => (isAdmin ? rest<Diagnostics>('GET', '/storage/diagnostics') : Promise.resolve(null)), 'diag');
  return (
    <section>
      <h1>Overview</h1>
      <div class="cards">
        <div class="card"><h2>Health</h2><Loading loading={health.loading} />
          {health.data ? <dl class="facts"><div><dt>liveness</dt><dd>{health.data.health}</dd></div><div><dt>readiness</dt><dd>{health.data.ready}</dd></div></dl> : null}</div>
        {isAdmin ? <div class="card"><h2>This instance</h2><Rates /></div> : null}
        {isAdmin ? (
          <div class="card"><h2>Jobs</h2><ErrorNote error={stats.error} />
            {stats.data ? (
              <>
                <dl class="facts">{Object.entries(stats.data.byStatus).map(([status, n]) => (
                  <div key={status}><dt>{status}</dt><dd><Link href={`/jobs?status=${status}`}>{n}</Link></dd></div>))}</dl>
                <p class="muted">oldest queued job waits {Math.round(stats.data.oldestQueuedSeconds)} s</p>
              </>
            ) : null}</div>
        ) : null}
      </div>
      {session.isOperator ? <Instances /> : null}
      {isAdmin && diag.data?.projections?.items ? (
        <>
          <h2>Feed and projections lag</h2>
          <div class="scroll" tabIndex={0}><table>
            <caption class="sr-only">Projection lag</caption>
            <thead><tr><th scope="col">projection</th><th scope="col">model</th><th scope="col">rows</th><th scope="col">lag (rows)</th><th scope="col">last sync</th></tr></thead>
            <tbody>{diag.data.projections.items.map((p) => (
              <tr key={p.name}><td>{p.name}</td><td>{p.sourceModel}</td><td>{p.rows}</td><td>{p.lagRows}</td><td><Time at={p.lastSyncAt} /></td></tr>))}</tbody>
          </table></div>
        </>
      ) : null}
      <ErrorNote error={diag.error} />
    </section>
  );
}

interface Token { id: string; name: string; queues: string[]; isRevoked: boolean; createdAt: string }

export function WorkersView() {
  const list = useApi(() => rest<{ workers: Token[] }>('GET', '/jobs/workers'), 'workers');
  const action = useAction();
  const [minted, setMinted] = useState<{ id: string; token: string } | null>(null);
  const mint = async (event: Event) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    const queues = String(form.get('queues') ?? '*').split(',').map((q) => q.trim()).filter(Boolean);
    let out: { id: string; token: string } | null = null;
    if (await action.run(async () => { out = await rest('POST', '/jobs/workers', { name: String(form.get('name') ?? ''), queues }); })) {
      setMinted(out);
      list.reload();
    }
  };
  const revoke = async (id: string) => {
    if (!confirm('Revoke this worker token? Workers using it stop at once.')) return;
    if (await action.run(() => rest('DELETE', `/jobs/workers/${id}`))) list.reload();
  };
  return (
    <section>
      <h1>Worker tokens</h1>
      <form class="filters" onSubmit={mint} aria-label="Mint a worker token">
        <div class="filter"><label for="worker-name">name</label><input id="worker-name" name="name" required /></div>
        <div class="filter"><label for="worker-queues">queues (comma separated, * for any)</label><input id="worker-queues" name="queues" value="*" /></div>
        <button type="submit" disabled={action.busy}>Mint token</button>
      </form>
      {minted ? <div class="notice" role="status"><p>The token, shown this once: copy it now.</p><pre class="json" id="minted-token">{minted.token}</pre></div> : null}
      <ErrorNote error={list.error ?? action.error} />
      <Loading loading={list.loading} />
      <div class="scroll" tabIndex={0}><table>
        <caption class="sr-only">Worker tokens</caption>
        <thead><tr><th scope="col">name</th><th scope="col">queues</th><th scope="col">state</th><th scope="col">created</th><th scope="col">action</th></tr></thead>
        <tbody>{list.data?.workers.map((w) => (
          <tr key={w.id}><td>{w.name}</td><td>{w.queues.join(', ')}</td><td>{w.isRevoked ? 'revoked' : 'active'}</td><td><Time at={w.createdAt} /></td>
            <td>{w.isRevoked ? null : <button type="button" class="danger" onClick={() => revoke(w.id)}>Revoke {w.name}</button>}</td></tr>))}</tbody>
      </table></div>
    </section>
  );
}

export function SchemaView() {
  const schema = useApi(loadSchema, 'schema');
  return (
    <section>
      <h1>Schema</h1>
      <ErrorNote error={schema.error} />
      <Loading loading={schema.loading} />
      {schema.data?.models.map((m) => (
        <article key={m.name} class="card">
          <h2><Link href={`/records/${m.name}`}>{m.name}</Link></h2>
          <div class="scroll" tabIndex={0}><table>
            <caption>Fields of {m.name}</caption>
            <thead><tr><th scope="col">field</th><th scope="col">type</th><th scope="col">required</th><th scope="col">rules</th></tr></thead>
            <tbody>{m.fields.map((f) => (
              <tr key={f.name}><td>{f.name}</td><td>{typeName(f.type)}</td><td>{f.required ? 'yes' : 'no'}</td>
                <td>{Object.entries(f.validation).map(([k, v]) => `@${k}${v === true ? '' : ` ${String(v)}`}`).join(' ')}{f.sensitive ? ' @sensitive' : ''}</td></tr>))}</tbody>
          </table></div>
          <div class="scroll" tabIndex={0}><table>
            <caption>Access to {m.name} per role</caption>
            <thead><tr><th scope="col">role</th>{OPERATIONS.map((o) => <th scope="col" key={o}>{o}</th>)}</tr></thead>
            <tbody>{ROLES.map((role) => (
              <tr key={role}><th scope="row">{role}</th>{OPERATIONS.map((o) => <td key={o}>{allows(m.access[o], role) ? 'yes' : 'no'}</td>)}</tr>))}</tbody>
          </table></div>
        </article>
      ))}
    </section>
  );
}

interface Migrations { applied: Array<{ scope: string; name: string; appliedAt: string }>; pending: string[]; unknown: string[] }

export function MigrationsView() {
  const list = useApi(() => rest<Migrations>('GET', '/meta/migrations'), 'migrations');
  const data = list.data;
  return (
    <section>
      <h1>Migrations</h1>
      <ErrorNote error={list.error} />
      <Loading loading={list.loading} />
      {data ? (
        <>
          <p role="status">{data.pending.length === 0 ? 'Nothing pending: every migration of this build is applied.' : `${data.pending.length} pending.`}
            {data.unknown.length > 0 ? ` ${data.unknown.length} applied migration(s) unknown to this build (a newer version migrated this database).` : ''}</p>
          {data.pending.length > 0 ? <><h2>Pending</h2><ul>{data.pending.map((name) => <li key={name}>{name}</li>)}</ul></> : null}
          {data.unknown.length > 0 ? <><h2>Unknown to this build</h2><ul>{data.unknown.map((name) => <li key={name}>{name}</li>)}</ul></> : null}
          <h2>Applied</h2>
          <div class="scroll" tabIndex={0}><table>
            <caption class="sr-only">Applied migrations</caption>
            <thead><tr><th scope="col">scope</th><th scope="col">file</th><th scope="col">applied</th></tr></thead>
            <tbody>{data.applied.map((m) => <tr key={`${m.scope}/${m.name}`}><td>{m.scope}</td><td>{m.name}</td><td><Time at={m.appliedAt} /></td></tr>)}</tbody>
          </table></div>
        </>
      ) : null}
    </section>
  );
}

export function ProjectionsView() {
  const list = useApi(() => rest<Diagnostics>('GET', '/storage/diagnostics'), 'projections');
  const action = useAction();
  const [note, setNote] = useState('');
  const rebuild = async () => {
    if (!confirm('Rebuild every projection from the event log?')) return;
    setNote('Rebuilding…');
    let count = 0;
    if (await action.run(async () => { count = (await rest<{ count: number }>('POST', '/projections/rebuild')).count; })) setNote(`Rebuilt ${count} projections.`);
    else setNote('');
    list.reload();
  };
  return (
    <section>
      <h1>Projections</h1>
      {session.user?.role === 'Admin' ? <div class="toolbar"><button type="button" onClick={rebuild} disabled={action.busy}>Rebuild projections</button></div> : null}
      <p role="status" aria-live="polite">{note}</p>
      <ErrorNote error={list.error ?? action.error} />
      <Loading loading={list.loading} />
      <div class="scroll" tabIndex={0}><table>
        <caption class="sr-only">Projections</caption>
        <thead><tr><th scope="col">projection</th><th scope="col">model</th><th scope="col">rows</th><th scope="col">lag (rows)</th><th scope="col">last sync</th><th scope="col">last rebuild</th></tr></thead>
        <tbody>{list.data?.projections?.items?.map((p) => (
          <tr key={p.name}><td>{p.name}</td><td>{p.sourceModel}</td><td>{p.rows}</td><td>{p.lagRows}</td><td><Time at={p.lastSyncAt} /></td><td><Time at={p.lastRebuildAt} /></td></tr>))}</tbody>
      </table></div>
    </section>
  );
}
