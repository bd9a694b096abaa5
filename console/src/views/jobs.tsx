/**
 * /console/jobs: jobs filtered by queue, status, kind and a payload field
 * (`payload=customer.id=42`), all in the query string; retry or cancel one,
 * or every job the filter matches once the matched count has been shown.
 * /console/jobs/{id}: payload, attempts, last error, result, live progress.
 */
import { useEffect, useState } from 'preact/hooks';
import { rest, session } from '../api.ts';
import { watchJobProgress, watchModel, type Progress } from '../live.ts';
import { navigate, withQuery, type Location } from '../router.ts';
import { cell, ErrorNote, Json, Link, Loading, Time, useAction, useApi } from '../ui.tsx';

export interface Job {
  id: string; queue: string; kind: string; status: string; attempts: number; maxAttempts: number; priority: number;
  payload: unknown; result: unknown; error: string | null; createdAt: string; updatedAt: string; visibleAt: string;
}

const STATUSES = ['queued', 'leased', 'succeeded', 'failed', 'dead'];

/** `customer.id=42` -> `{customer: {id: 42}}` (the value read as JSON when it is, else as text). */
export function payloadFilter(text: string | null): Record<string, unknown> | undefined {
  if (!text) return undefined;
  const at = text.indexOf('=');
  if (at < 1) return undefined;
  const path = text.slice(0, at).trim().split('.');
  const raw = text.slice(at + 1).trim();
  let value: unknown = raw;
  try { value = JSON.parse(raw); } catch { value = raw; }
  return path.reduceRight<unknown>((inner, key) => ({ [key]: inner }), value) as Record<string, unknown>;
}

function filterOf(query: URLSearchParams) {
  const pick = (k: string) => query.get(k) || undefined;
  return { queue: pick('queue'), status: pick('status'), kind: pick('kind'), payload: payloadFilter(query.get('payload')) };
}

/** The page of jobs the address asks for: its useApi key and its call (also started early by a cold load, main.tsx). */
export function jobsPage(loc: Location) {
  const filter = filterOf(loc.query);
  const after = loc.query.get('after') ?? '';
  const search = new URLSearchParams();
  for (const [k, v] of Object.entries(filter)) if (v !== undefined) search.set(k, typeof v === 'string' ? v : JSON.stringify(v));
  if (after) search.set('after', after);
  return { key: `jobs?${search}`, load: () => rest<{ jobs: Job[]; nextCursor: string | null }>('GET', `/jobs/search?${search}`) };
}

export function JobsView({ loc }: { loc: Location }) {
  const filter = filterOf(loc.query);
  const after = loc.query.get('after') ?? '';
  const request = jobsPage(loc);
  const page = useApi(request.load, request.key);
  const action = useAction();
  const [pending, setPending] = useState<{ action: 'retry' | 'cancel'; matched: number } | null>(null);
  const [done, setDone] = useState('');
  const isAdmin = session.user?.role === 'Admin';

  const preview = async (kind: 'retry' | 'cancel') => {
    setDone('');
    await action.run(async () => {
      const { matched } = await rest<{ matched: number }>('POST', '/jobs/bulk', { filter, action: kind, dryRun: true });
      setPending({ action: kind, matched });
    });
  };
  const confirmBulk = async () => {
    if (!pending) return;
    const kind = pending.action;
    await action.run(async () => {
      const { changed } = await rest<{ changed: number }>('POST', '/jobs/bulk', { filter, action: kind, dryRun: false });
      setDone(`${kind === 'retry' ? 'Retried' : 'Cancelled'} ${changed} job${changed === 1 ? '' : 's'}.`);
    });
    setPending(null);
    page.reload();
  };
  const one = async (id: string, kind: 'retry' | 'cancel') => {
    if (await action.run(() => rest('POST', `/jobs/${id}/${kind}`))) page.reload();
  };

  return (
    <section>
      <h1>Jobs</h1>
      <JobFilters loc={loc} />
      <ErrorNote error={page.error ?? action.error} />
      {isAdmin ? (
        <div class="toolbar">
          <button type="button" onClick={() => preview('retry')} disabled={action.busy}>Retry all matching</button>
          <button type="button" onClick={() => preview('cancel')} disabled={action.busy}>Cancel all matching</button>
        </div>
      ) : null}
      {pending ? (
        <div class="confirm" role="alertdialog" aria-labelledby="bulk-question">
          <p id="bulk-question">{pending.matched} job{pending.matched === 1 ? '' : 's'} match{pending.matched === 1 ? 'es' : ''} this filter
            {pending.action === 'retry' ? ' and can be retried' : ' and can be cancelled'}. {pending.action === 'retry' ? 'Retry' : 'Cancel'} {pending.matched === 1 ? 'it' : 'them'}?</p>
          <button type="button" onClick={confirmBulk} disabled={action.busy || pending.matched === 0}>Confirm {pending.action} of {pending.matched}</button>
          <button type="button" onClick={() => setPending(null)}>Keep them</button>
        </div>
      ) : null}
      <p class="muted" role="status">{done}</p>
      <Loading loading={page.loading} />
      <div class="scroll" tabIndex={0}>
        <table>
          <caption class="sr-only">Jobs</caption>
          <thead><tr><th scope="col">id</th><th scope="col">queue</th><th scope="col">kind</th><th scope="col">status</th><th scope="col">attempts</th><th scope="col">last error</th><th scope="col">created</th><th scope="col">last change</th><th scope="col">action</th></tr></thead>
          <tbody>
            {page.data?.jobs.map((job) => (
              <tr key={job.id}>
                <td><Link href={`/jobs/${job.id}`}>{job.id}</Link></td>
                <td>{job.queue}</td><td>{job.kind}</td><td><span class={`status status-${job.status}`}>{job.status}</span></td>
                <td>{job.attempts}/{job.maxAttempts}</td><td class="clip">{job.error ?? ''}</td><td><Time at={job.createdAt} /></td><td><Time at={job.updatedAt} /></td>
                <td>
                  {isAdmin && (job.status === 'dead' || job.status === 'failed') ? <button type="button" onClick={() => one(job.id, 'retry')}>Retry {job.id}</button> : null}
                  {isAdmin && job.status === 'queued' ? <button type="button" onClick={() => one(job.id, 'cancel')}>Cancel {job.id}</button> : null}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <nav class="pager" aria-label="Pages">
        {after ? <Link href={withQuery('/jobs', loc.query, { after: null })}>First page</Link> : null}
        {page.data?.nextCursor ? <Link href={withQuery('/jobs', loc.query, { after: page.data.nextCursor })}>Next page</Link> : null}
      </nav>
    </section>
  );
}

function JobFilters({ loc }: { loc: Location }) {
  const [values, setValues] = useState(() => ({
    queue: loc.query.get('queue') ?? '', status: loc.query.get('status') ?? '', kind: loc.query.get('kind') ?? '', payload: loc.query.get('payload') ?? '',
  }));
  const set = (k: keyof typeof values) => (e: Event) => setValues({ ...values, [k]: (e.currentTarget as HTMLInputElement).value });
  return (
    <form class="filters" aria-label="Job filters" onSubmit={(e) => { e.preventDefault(); navigate(withQuery('/jobs', loc.query, { ...values, after: null })); }}>
      <div class="filter"><label for="job-queue">queue</label><input id="job-queue" value={values.queue} onInput={set('queue')} /></div>
      <div class="filter"><label for="job-status">status</label>
        <select id="job-status" value={values.status} onChange={set('status')}>
          <option value="">any</option>{STATUSES.map((s) => <option key={s} value={s}>{s}</option>)}
        </select></div>
      <div class="filter"><label for="job-kind">kind</label><input id="job-kind" value={values.kind} onInput={set('kind')} /></div>
      <div class="filter"><label for="job-payload">payload field = value</label>
        <input id="job-payload" placeholder="customer.id=42" value={values.payload} onInput={set('payload')} /></div>
      <button type="submit">Search jobs</button>
    </form>
  );
}

export function JobView({ id }: { id: string }) {
  const job = useApi(() => rest<Job>('GET', `/jobs/${id}/inspect`), `job ${id}`);
  const [progress, setProgress] = useState<Progress | null>(null);
  const action = useAction();
  useEffect(() => {
    const stopProgress = watchJobProgress(id, setProgress);
    const stopChanges = watchModel('Job', (change) => { if (change.recordId === id) job.reload(); });
    return () => { stopProgress(); stopChanges(); };
  }, [id]);
  const data = job.data;
  const isAdmin = session.user?.role === 'Admin';
  return (
    <section>
      <p><Link href="/jobs">← Jobs</Link></p>
      <h1>Job {id}</h1>
      <ErrorNote error={job.error ?? action.error} />
      <Loading loading={job.loading} />
      {data ? (
        <>
          <dl class="facts">
            <div><dt>status</dt><dd><span class={`status status-${data.status}`}>{data.status}</span></dd></div>
            <div><dt>queue / kind</dt><dd>{data.queue} / {data.kind}</dd></div>
            <div><dt>attempts</dt><dd>{data.attempts} of {data.maxAttempts}</dd></div>
            <div><dt>priority</dt><dd>{data.priority}</dd></div>
            <div><dt>created</dt><dd><Time at={data.createdAt} /></dd></div>
            <div><dt>updated</dt><dd><Time at={data.updatedAt} /></dd></div>
            <div><dt>last error</dt><dd>{data.error ?? '–'}</dd></div>
          </dl>
          <div class="progress-box" aria-live="polite">
            <h2>Progress</h2>
            {progress ? (
              <>
                <progress max={100} value={progress.percent ?? 0} aria-label="Job progress">{cell(progress.percent)}%</progress>
                <p id="job-progress-text">{progress.percent ?? '–'}% {progress.message ?? ''}</p>
              </>
            ) : <p class="muted">No progress reported since this page opened.</p>}
          </div>
          <div class="toolbar">
            {isAdmin && (data.status === 'dead' || data.status === 'failed') ? <button type="button" onClick={async () => { if (await action.run(() => rest('POST', `/jobs/${id}/retry`))) job.reload(); }}>Retry</button> : null}
            {isAdmin && data.status === 'queued' ? <button type="button" onClick={async () => { if (await action.run(() => rest('POST', `/jobs/${id}/cancel`))) job.reload(); }}>Cancel</button> : null}
          </div>
          <h2>Payload</h2><Json value={data.payload} />
          <h2>Result</h2><Json value={data.result} />
        </>
      ) : null}
    </section>
  );
}
