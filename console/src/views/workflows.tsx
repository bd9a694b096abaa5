/**
 * /console/workflows: definitions (run a manual one) and runs filtered by
 * workflow and status (in the query string). /console/workflows/runs/{id}:
 * the run's steps on a timeline with waits, retries and errors, updated live
 * from the run's events (modelChanges of WorkflowRun).
 */
import { useEffect, useState } from 'preact/hooks';
import { rest, session } from '../api.ts';
import { watchModel } from '../live.ts';
import { navigate, withQuery, type Location } from '../router.ts';
import { ErrorNote, Json, Link, Loading, Time, useAction, useApi } from '../ui.tsx';

interface Definition { name: string; trigger: { kind: string; roles?: string[]; on?: string; cron?: string; nextAt?: string }; steps: Array<{ id: string; kind: string }> }
interface RunSummary { id: string; workflow: string; status: string; startedAt?: string; createdAt?: string; error?: unknown }
interface Step { id: string; status: string; attempts: number; wakeAt?: string | null; jobId?: string | null; output: unknown; error: unknown; startedAt: string | null; finishedAt: string | null }
interface Run { id: string; workflow: string; status: string; steps: Step[]; error: unknown }

const RUN_STATUSES = ['running', 'waiting', 'succeeded', 'failed'];

function mayRun(def: Definition): boolean {
  const role = session.user?.role;
  return def.trigger.kind === 'manual' && (role === 'Admin' || (def.trigger.roles ?? []).includes(role ?? ''));
}

export function WorkflowsView({ loc }: { loc: Location }) {
  const defs = useApi(() => rest<{ items: Definition[] }>('GET', '/workflows'), 'workflows');
  const query = new URLSearchParams();
  for (const k of ['workflow', 'status']) { const v = loc.query.get(k); if (v) query.set(k, v); }
  query.set('limit', '50');
  const runs = useApi(() => rest<{ items: RunSummary[] }>('GET', `/workflows/runs?${query}`), `runs?${query}`);
  const action = useAction();
  const [input, setInput] = useState('{}');
  const start = async (name: string) => {
    let parsed: unknown;
    try { parsed = JSON.parse(input); } catch { parsed = undefined; }
    let runId = '';
    if (await action.run(async () => { runId = (await rest<{ runId: string }>('POST', `/workflows/${name}/run`, { input: parsed ?? {} })).runId; })) {
      navigate(`/workflows/runs/${runId}`);
    }
  };
  return (
    <section>
      <h1>Workflows</h1>
      <ErrorNote error={defs.error ?? action.error} />
      <div class="scroll" tabIndex={0}>
        <table>
          <caption class="sr-only">Workflow definitions</caption>
          <thead><tr><th scope="col">workflow</th><th scope="col">trigger</th><th scope="col">steps</th><th scope="col">action</th></tr></thead>
          <tbody>
            {defs.data?.items.map((d) => (
              <tr key={d.name}>
                <td><Link href={withQuery('/workflows', loc.query, { workflow: d.name })}>{d.name}</Link></td>
                <td>{d.trigger.kind}{d.trigger.on ? ` ${d.trigger.on}` : ''}{d.trigger.cron ? ` ${d.trigger.cron}` : ''}</td>
                <td>{d.steps.map((s) => `${s.id} (${s.kind})`).join(' → ')}</td>
                <td>{mayRun(d) ? <button type="button" onClick={() => start(d.name)} disabled={action.busy}>Run {d.name}</button> : null}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {defs.data?.items.some(mayRun) ? (
        <div class="field"><label for="run-input">Input of a manual run (JSON)</label>
          <textarea id="run-input" rows={3} value={input} onInput={(e) => setInput(e.currentTarget.value)} /></div>
      ) : null}
      <h2>Runs</h2>
      <form class="filters" aria-label="Run filters" onSubmit={(e) => {
        e.preventDefault();
        const form = new FormData(e.currentTarget as HTMLFormElement);
        navigate(withQuery('/workflows', loc.query, { workflow: String(form.get('workflow') ?? ''), status: String(form.get('status') ?? '') }));
      }}>
        <div class="filter"><label for="run-workflow">workflow</label>
          <select id="run-workflow" name="workflow" value={loc.query.get('workflow') ?? ''}>
            <option value="">any</option>{defs.data?.items.map((d) => <option key={d.name} value={d.name}>{d.name}</option>)}
          </select></div>
        <div class="filter"><label for="run-status">status</label>
          <select id="run-status" name="status" value={loc.query.get('status') ?? ''}>
            <option value="">any</option>{RUN_STATUSES.map((s) => <option key={s} value={s}>{s}</option>)}
          </select></div>
        <button type="submit">Filter runs</button>
      </form>
      <ErrorNote error={runs.error} />
      <Loading loading={runs.loading} />
      <div class="scroll" tabIndex={0}>
        <table>
          <caption class="sr-only">Workflow runs</caption>
          <thead><tr><th scope="col">run</th><th scope="col">workflow</th><th scope="col">status</th><th scope="col">started</th></tr></thead>
          <tbody>
            {runs.data?.items.map((r) => (
              <tr key={r.id}><td><Link href={`/workflows/runs/${r.id}`}>{r.id}</Link></td><td>{r.workflow}</td>
                <td><span class={`status status-${r.status}`}>{r.status}</span></td><td><Time at={r.startedAt ?? r.createdAt} /></td></tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}

export function RunView({ id }: { id: string }) {
  const run = useApi(() => rest<Run>('GET', `/workflows/runs/${id}`), `run ${id}`);
  const [live, setLive] = useState(0);
  useEffect(() => watchModel('WorkflowRun', (change) => {
    if (change.recordId === id) { setLive((n) => n + 1); run.reload(); }
  }), [id]);
  const data = run.data;
  return (
    <section>
      <p><Link href="/workflows">← Workflows</Link></p>
      <h1>Run {id}</h1>
      <ErrorNote error={run.error} />
      <Loading loading={run.loading && !data} />
      {data ? (
        <>
          <p>Workflow <strong>{data.workflow}</strong>: <span class={`status status-${data.status}`} id="run-status">{data.status}</span>
            <span class="muted"> · live ({live} update{live === 1 ? '' : 's'} received)</span></p>
          {data.error ? <><h2>Error</h2><Json value={data.error} /></> : null}
          <ol class="timeline" aria-label="Steps">
            {data.steps.map((s) => (
              <li key={s.id} class={`step step-${s.status}`}>
                <p><strong>{s.id}</strong>: <span class={`status status-${s.status}`}>{s.status}</span>
                  {s.attempts > 1 ? ` · ${s.attempts} attempts (retried)` : s.attempts === 1 ? ' · 1 attempt' : ''}</p>
                <p class="muted">{s.startedAt ? <>started <Time at={s.startedAt} /></> : 'not started'}
                  {s.finishedAt ? <>, finished <Time at={s.finishedAt} /></> : s.startedAt ? ', waiting' : ''}</p>
                {s.wakeAt && !s.finishedAt ? <p>waits until <Time at={s.wakeAt} /></p> : null}
                {s.jobId ? <p>job <Link href={`/jobs/${s.jobId}`}>{s.jobId}</Link></p> : null}
                {s.error ? <p class="error">{typeof s.error === 'string' ? s.error : JSON.stringify(s.error)}</p> : null}
                {s.output !== null && s.output !== undefined ? <details><summary>output of {s.id}</summary><Json value={s.output} /></details> : null}
              </li>
            ))}
          </ol>
        </>
      ) : null}
    </section>
  );
}
