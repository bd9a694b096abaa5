/** The console's shell: login, navigation, the operator's tenant switcher, and the view of the address. */
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { login, logout, resume, session } from './api.ts';
import { currentLocation, useLocation, type Location } from './router.ts';
import { loadSchema } from './schema.ts';
import { ErrorNote, Link, preload, toApiError } from './ui.tsx';
import type { ApiError } from './api.ts';
import { AuditView } from './views/audit.tsx';
import { JobView, JobsView, jobsPage } from './views/jobs.tsx';
import { MediaView } from './views/media.tsx';
import { Dashboard, MigrationsView, ProjectionsView, SchemaView, WorkersView } from './views/operate.tsx';
import { RecordView } from './views/record.tsx';
import { ModelsIndex, RecordsList, recordsPage } from './views/records.tsx';
import { RunView, WorkflowsView } from './views/workflows.tsx';
import './style.css';

const NAV: Array<{ href: string; label: string; admin?: boolean; auditors?: boolean }> = [
  { href: '/', label: 'Overview' }, { href: '/records', label: 'Records' }, { href: '/jobs', label: 'Jobs', admin: true },
  { href: '/workers', label: 'Workers', admin: true }, { href: '/workflows', label: 'Workflows' },
  { href: '/audit', label: 'Audit log', auditors: true }, { href: '/media', label: 'Media' }, { href: '/schema', label: 'Schema' },
  { href: '/migrations', label: 'Migrations', admin: true }, { href: '/projections', label: 'Projections', admin: true },
];

function View({ loc }: { loc: Location }) {
  const parts = loc.path.split('/').filter(Boolean).map(decodeURIComponent);
  const [first, second, third] = parts;
  switch (first) {
    case undefined: return <Dashboard />;
    case 'records':
      if (!second) return <ModelsIndex />;
      return third ? <RecordView loc={loc} modelName={second} id={third} key={`${second}/${third}`} /> : <RecordsList loc={loc} modelName={second} key={second} />;
    case 'jobs': return second ? <JobView id={second} key={second} /> : <JobsView loc={loc} key={loc.query.toString()} />;
    case 'workers': return <WorkersView />;
    case 'workflows': return second === 'runs' && third ? <RunView id={third} key={third} /> : <WorkflowsView loc={loc} />;
    case 'audit': return <AuditView loc={loc} key={loc.query.toString()} />;
    case 'media': return <MediaView loc={loc} />;
    case 'schema': return <SchemaView />;
    case 'migrations': return <MigrationsView />;
    case 'projections': return <ProjectionsView />;
    default: return <section><h1>Not found</h1><p>No view at this address.</p><Link href="/">Overview</Link></section>;
  }
}

function Login() {
  const [error, setError] = useState<ApiError | null>(null);
  const [busy, setBusy] = useState(false);
  const [providers, setProviders] = useState<Array<{ name: string; authorizeUrl: string }>>([]);
  useEffect(() => {
    fetch('/auth/oauth/providers').then((r) => (r.ok ? r.json() : { providers: [] }))
      .then((body: { providers?: Array<{ name: string; authorizeUrl: string }> }) => setProviders(body.providers ?? []), () => setProviders([]));
  }, []);
  const submit = async (event: Event) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    setBusy(true);
    setError(null);
    try {
      await login(String(form.get('email') ?? ''), String(form.get('password') ?? ''));
    } catch (e) {
      setError(toApiError(e));
    } finally {
      setBusy(false);
    }
  };
  return (
    <main class="login">
      <h1>Sign in to the console</h1>
      <form onSubmit={submit} aria-label="Sign in">
        <div class="field"><label for="login-email">Email</label><input id="login-email" name="email" type="email" autocomplete="username" required /></div>
        <div class="field"><label for="login-password">Password</label><input id="login-password" name="password" type="password" autocomplete="current-password" required /></div>
        <ErrorNote error={error} />
        <button type="submit" disabled={busy}>Sign in</button>
      </form>
      {providers.length > 0 ? (
        <ul class="providers" aria-label="Sign in with a provider">
          {providers.map((p) => <li key={p.name}><a href={`${p.authorizeUrl}&return=console`}>Sign in with {p.name}</a></li>)}
        </ul>
      ) : null}
    </main>
  );
}

function TenantSwitcher() {
  const [value, setValue] = useState(session.tenant ?? '');
  if (!session.isOperator) return null;
  return (
    <form class="tenant" aria-label="Tenant switcher" onSubmit={(e) => { e.preventDefault(); session.setTenant(value); }}>
      <label for="tenant-id">Tenant</label>
      <input id="tenant-id" value={value} placeholder="global scope" onInput={(e) => setValue(e.currentTarget.value)} />
      <button type="submit">Switch tenant</button>
    </form>
  );
}

/**
 * A reload's session, asked for as this module runs: the refresh is the first
 * call of every cold load and everything else waits for its token, so it does
 * not wait for the first render and its effects too.
 */
const resumed = resume().then((ok) => { if (ok) preloadView(); return ok; }, () => false);

/**
 * A cold load of a list starts its first page (and the IR the list needs) as
 * soon as the session is back, before the app renders the view: the view then
 * takes those answers (useApi's key) instead of asking after its first render.
 */
function preloadView(): void {
  const loc = currentLocation();
  const [first, second, third] = loc.path.split('/').filter(Boolean).map(decodeURIComponent);
  if (first === 'records' && second && !third) {
    void loadSchema().catch(() => undefined);
    const { key, load } = recordsPage(loc, second);
    preload(key, load);
  } else if (first === 'jobs' && !second && session.user?.role === 'Admin') {
    const { key, load } = jobsPage(loc);
    preload(key, load);
  }
}

function App() {
  const loc = useLocation();
  const [, setTick] = useState(0);
  const [resuming, setResuming] = useState(true);
  useEffect(() => session.subscribe(() => setTick((n) => n + 1)), []);
  useEffect(() => { void resumed.finally(() => setResuming(false)); }, []);
  if (resuming) return <main><p class="muted">Loading…</p></main>;
  if (!session.user) return <Login />;
  const role = session.user.role;
  const nav = NAV.filter((n) => (!n.admin || role === 'Admin') && (!n.auditors || role === 'Admin' || role === 'Manager'));
  const active = (href: string) => (href === '/' ? loc.path === '/' : loc.path.startsWith(href));
  return (
    <>
      <header class="top">
        <a class="to-content" href="#main">Skip to content</a>
        <span class="brand">svc-gen console</span>
        <nav aria-label="Views"><ul>{nav.map((n) => (
          <li key={n.href}><Link href={n.href} aria-current={active(n.href) ? 'page' : undefined}>{n.label}</Link></li>))}</ul></nav>
        <TenantSwitcher />
        <span class="who">{session.user.email} ({role}){session.tenant && session.isOperator ? ` · tenant ${session.tenant}` : ''}</span>
        <button type="button" onClick={() => logout()}>Log out</button>
      </header>
      <main id="main" key={session.tenant ?? ''}><View loc={loc} /></main>
    </>
  );
}

render(<App />, document.getElementById('app')!);
