/** /console/audit: the audit log, every filter in the query string, newest first, cursor pages. */
import { useState } from 'preact/hooks';
import { rest } from '../api.ts';
import { navigate, withQuery, type Location } from '../router.ts';
import { ErrorNote, Link, Loading, Time, useApi } from '../ui.tsx';

interface Entry {
  id: string; occurredAt: string; tenantId: string | null; actor: { kind: string; id: string | null; role: string | null };
  action: string; entityType: string | null; entityId: string | null; outcome: string; changes: unknown;
}

const FILTERS = ['actorId', 'entityType', 'entityId', 'action', 'outcome', 'from', 'to'] as const;

export function AuditView({ loc }: { loc: Location }) {
  const query = new URLSearchParams();
  for (const k of [...FILTERS, 'cursor']) { const v = loc.query.get(k); if (v) query.set(k, v); }
  const page = useApi(() => rest<{ items: Entry[]; nextCursor: string | null }>('GET', `/audit/logs?${query}`), `audit?${query}`);
  const [values, setValues] = useState<Record<string, string>>(() => Object.fromEntries(FILTERS.map((k) => [k, loc.query.get(k) ?? ''])));
  return (
    <section>
      <h1>Audit log</h1>
      <form class="filters" aria-label="Audit filters" onSubmit={(e) => { e.preventDefault(); navigate(withQuery('/audit', loc.query, { ...values, cursor: null })); }}>
        {FILTERS.map((k) => (
          <div class="filter" key={k}>
            <label for={`audit-${k}`}>{k}</label>
            {k === 'outcome' ? (
              <select id="audit-outcome" value={values.outcome} onChange={(e) => setValues({ ...values, outcome: e.currentTarget.value })}>
                <option value="">any</option><option value="success">success</option><option value="denied">denied</option><option value="error">error</option>
              </select>
            ) : (
              <input id={`audit-${k}`} value={values[k]} placeholder={k === 'from' || k === 'to' ? '2026-11-26T00:00:00Z' : ''}
                onInput={(e) => setValues({ ...values, [k]: e.currentTarget.value })} />
            )}
          </div>
        ))}
        <button type="submit">Filter entries</button>
      </form>
      <ErrorNote error={page.error} />
      <Loading loading={page.loading} />
      <div class="scroll" tabIndex={0}>
        <table>
          <caption class="sr-only">Audit entries</caption>
          <thead><tr><th scope="col">when</th><th scope="col">actor</th><th scope="col">action</th><th scope="col">entity</th><th scope="col">outcome</th><th scope="col">changes</th></tr></thead>
          <tbody>
            {page.data?.items.map((e) => (
              <tr key={e.id}>
                <td><Time at={e.occurredAt} /></td>
                <td>{e.actor.kind}{e.actor.id ? ` ${e.actor.id}` : ''}{e.actor.role ? ` (${e.actor.role})` : ''}</td>
                <td>{e.action}</td>
                <td>{e.entityType ?? ''} {e.entityId ?? ''}</td>
                <td><span class={`status status-${e.outcome}`}>{e.outcome}</span></td>
                <td class="clip">{e.changes ? JSON.stringify(e.changes) : ''}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <nav class="pager" aria-label="Pages">
        {loc.query.get('cursor') ? <Link href={withQuery('/audit', loc.query, { cursor: null })}>First page</Link> : null}
        {page.data?.nextCursor ? <Link href={withQuery('/audit', loc.query, { cursor: page.data.nextCursor })}>Next page</Link> : null}
      </nav>
    </section>
  );
}
