/**
 * /console/records/{Model}: a keyset page of records with filters per field
 * (all in the query string), never a count the database must scan for: the
 * count shown is exact only when everything fits on the first page, else
 * labelled as a lower bound. Soft-deleted records are one toggle away.
 */
import { useState } from 'preact/hooks';
import { gql } from '../api.ts';
import { navigate, withQuery, type Location } from '../router.ts';
import { allows, labelField, loadSchema, type Field, type Model } from '../schema.ts';
import { cell, ErrorNote, Link, Loading, useAction, useApi } from '../ui.tsx';

const PAGE = 20;
const LIST = `query($model: String!, $where: JSON, $orderBy: JSON, $first: Int, $after: String) {
  paginatedRecords(model: $model, where: $where, orderBy: $orderBy, first: $first, after: $after) { items pageInfo { hasNextPage endCursor } } }`;
const DELETED = `query($model: String!, $where: JSON, $limit: Int) { deletedRecords(model: $model, where: $where, limit: $limit) }`;
const RESTORE = 'mutation($model: String!, $id: ID!) { restore(model: $model, id: $id) }';

type Row = Record<string, unknown>;

/** Fields a list filters on and shows: scalars, enums and relations. */
const filterable = (model: Model) => model.fields.filter((f) => ['scalar', 'enum', 'belongsTo', 'media'].includes(f.type.kind));

function parseJson(text: string | null): Record<string, unknown> | undefined {
  if (!text) return undefined;
  try { return JSON.parse(text) as Record<string, unknown>; } catch { return undefined; }
}

export function ModelsIndex() {
  const schema = useApi(loadSchema, 'schema');
  return (
    <section>
      <h1>Records</h1>
      <ErrorNote error={schema.error} />
      <ul class="cards">
        {schema.data?.models.filter((m) => allows(m.access.read)).map((m) => (
          <li key={m.name}><Link href={`/records/${m.name}`}>{m.name}</Link></li>
        ))}
      </ul>
    </section>
  );
}

/** The page of records the address asks for: its useApi key and its call (also started early by a cold load, main.tsx). */
export function recordsPage(loc: Location, modelName: string) {
  const showDeleted = loc.query.get('deleted') === '1';
  const where = parseJson(loc.query.get('where'));
  const orderBy = parseJson(loc.query.get('orderBy'));
  const after = loc.query.get('after') || undefined;
  return {
    key: `${modelName}?${loc.query}`,
    async load() {
      if (showDeleted) {
        const data = await gql<{ deletedRecords: Row[] }>(DELETED, { model: modelName, where, limit: 100 });
        return { items: data.deletedRecords, hasNext: false, end: null as string | null };
      }
      const data = await gql<{ paginatedRecords: { items: Row[]; pageInfo: { hasNextPage: boolean; endCursor: string | null } } }>(
        LIST, { model: modelName, where, orderBy, first: PAGE, after });
      const p = data.paginatedRecords;
      return { items: p.items, hasNext: p.pageInfo.hasNextPage, end: p.pageInfo.endCursor };
    },
  };
}

export function RecordsList({ loc, modelName }: { loc: Location; modelName: string }) {
  const schema = useApi(loadSchema, 'schema');
  const model = schema.data?.models.find((m) => m.name === modelName);
  const showDeleted = loc.query.get('deleted') === '1';
  const where = parseJson(loc.query.get('where'));
  const orderBy = parseJson(loc.query.get('orderBy'));
  const after = loc.query.get('after') || undefined;
  const request = recordsPage(loc, modelName);
  const page = useApi(request.load, request.key);
  const restore = useAction();
  if (schema.error) return <section><h1>{modelName}</h1><ErrorNote error={schema.error} /></section>;
  if (!model) return <section><h1>{modelName}</h1><Loading loading={schema.loading} /></section>;
  const columns = filterable(model).slice(0, 6);
  const label = labelField(model);
  const count = page.data
    ? (!after && !page.data.hasNext ? `${page.data.items.length} ${showDeleted ? 'deleted ' : ''}record${page.data.items.length === 1 ? '' : 's'} (exact)`
      : `${page.data.hasNext ? 'more than ' : ''}${page.data.items.length} on this page (not counted: keyset pages)`)
    : '';
  const path = `/records/${modelName}`;
  return (
    <section>
      <h1>{modelName}</h1>
      <div class="toolbar">
        {allows(model.access.create) && !showDeleted ? <Link class="button" href={`${path}/new`}>Create {modelName}</Link> : null}
        <Link href={withQuery(path, loc.query, { deleted: showDeleted ? null : '1', after: null })}>
          {showDeleted ? 'Show live records' : 'Show deleted records'}
        </Link>
      </div>
      <Filters model={model} where={where ?? {}} orderBy={orderBy} onApply={(w, o) =>
        navigate(withQuery(path, loc.query, { where: Object.keys(w).length ? JSON.stringify(w) : null, orderBy: o ? JSON.stringify(o) : null, after: null }))} />
      <ErrorNote error={page.error ?? restore.error} />
      <p class="muted" aria-live="polite">{page.loading ? 'Loading…' : count}</p>
      <div class="scroll" tabIndex={0}>
        <table>
          <caption class="sr-only">{modelName} records</caption>
          <thead><tr><th scope="col">id</th>{columns.map((f) => <th scope="col" key={f.name}>{f.name}</th>)}<th scope="col">updated</th>{showDeleted ? <th scope="col">action</th> : null}</tr></thead>
          <tbody>
            {page.data?.items.map((row) => (
              <tr key={String(row.id)}>
                <td><Link href={`${path}/${String(row.id)}`}>{label ? `${cell(row[label.name]) || String(row.id)}` : String(row.id)}</Link></td>
                {columns.map((f) => <td key={f.name}>{cell(row[f.inputName] ?? row[f.name])}</td>)}
                <td>{cell(row.updatedAt)}</td>
                {showDeleted ? (
                  <td>{allows(model.access.update) ? (
                    <button type="button" onClick={async () => {
                      if (await restore.run(() => gql(RESTORE, { model: modelName, id: row.id }))) page.reload();
                    }}>Restore {cell(label ? row[label.name] : row.id)}</button>) : null}</td>
                ) : null}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <nav class="pager" aria-label="Pages">
        {after ? <Link href={withQuery(path, loc.query, { after: null })}>First page</Link> : null}
        {page.data?.hasNext && page.data.end ? <Link href={withQuery(path, loc.query, { after: page.data.end })}>Next page</Link> : null}
      </nav>
    </section>
  );
}

function Filters({ model, where, orderBy, onApply }: {
  model: Model; where: Record<string, unknown>; orderBy?: Record<string, unknown>;
  onApply: (where: Record<string, unknown>, orderBy: Record<string, string> | null) => void;
}) {
  const fields = filterable(model);
  const initial = (f: Field) => {
    const v = where[f.name] ?? where[f.inputName];
    if (v && typeof v === 'object' && 'contains' in (v as object)) return String((v as { contains: unknown }).contains);
    return v === undefined || v === null ? '' : String(v);
  };
  const [values, setValues] = useState<Record<string, string>>(() => Object.fromEntries(fields.map((f) => [f.name, initial(f)])));
  const [sortField, setSortField] = useState(orderBy ? Object.keys(orderBy)[0] ?? '' : '');
  const [sortDir, setSortDir] = useState(orderBy ? String(Object.values(orderBy)[0] ?? 'ASC') : 'ASC');
  const submit = (event: Event) => {
    event.preventDefault();
    const next: Record<string, unknown> = {};
    for (const f of fields) {
      const text = values[f.name]?.trim();
      if (!text) continue;
      const t = f.type;
      if (t.kind === 'scalar' && t.scalar === 'number') next[f.name] = Number(text);
      else if (t.kind === 'scalar' && t.scalar === 'boolean') next[f.name] = text === 'true';
      else if (t.kind === 'scalar' && t.scalar === 'string') next[f.name] = { contains: text };
      else next[t.kind === 'belongsTo' ? f.inputName : f.name] = text;
    }
    onApply(next, sortField ? { [sortField]: sortDir } : null);
  };
  return (
    <form class="filters" onSubmit={submit} aria-label="Filters">
      {fields.map((f) => (
        <div class="filter" key={f.name}>
          <label for={`filter-${f.name}`}>{f.name}</label>
          {f.type.kind === 'enum' || (f.type.kind === 'scalar' && f.type.scalar === 'boolean') ? (
            <select id={`filter-${f.name}`} value={values[f.name]} onChange={(e) => setValues({ ...values, [f.name]: e.currentTarget.value })}>
              <option value="">any</option>
              {(f.type.kind === 'enum' ? f.type.values : ['true', 'false']).map((v) => <option key={v} value={v}>{v}</option>)}
            </select>
          ) : (
            f.type.kind === 'scalar' && f.type.scalar === 'number'
              ? <input id={`filter-${f.name}`} type="number" value={values[f.name]} onInput={(e) => setValues({ ...values, [f.name]: e.currentTarget.value })} />
              : <input id={`filter-${f.name}`} type="text" value={values[f.name]} onInput={(e) => setValues({ ...values, [f.name]: e.currentTarget.value })} />
          )}
        </div>
      ))}
      <div class="filter">
        <label for="sort-field">sort by</label>
        <select id="sort-field" value={sortField} onChange={(e) => setSortField(e.currentTarget.value)}>
          <option value="">id</option>
          {fields.filter((f) => f.type.kind !== 'belongsTo').map((f) => <option key={f.name} value={f.name}>{f.name}</option>)}
          <option value="createdAt">createdAt</option><option value="updatedAt">updatedAt</option>
        </select>
      </div>
      <div class="filter">
        <label for="sort-dir">direction</label>
        <select id="sort-dir" value={sortDir} onChange={(e) => setSortDir(e.currentTarget.value)}>
          <option value="ASC">ascending</option><option value="DESC">descending</option>
        </select>
      </div>
      <button type="submit">Apply filters</button>
    </form>
  );
}

