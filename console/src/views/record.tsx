/**
 * /console/records/{Model}/{id} (and /new): the record in typed editors, its
 * history from the event log as a timeline (?tab=history), delete and
 * restore. Controls the role may not use are not offered; a write forced
 * anyway shows the API's answer.
 */
import { useEffect, useState } from 'preact/hooks';
import { ApiError, gql, session } from '../api.ts';
import { FieldEditor } from '../editors.tsx';
import { navigate, withQuery, type Location } from '../router.ts';
import { allows, editable, loadSchema, type Model } from '../schema.ts';
import { ErrorNote, Json, Link, Loading, Time, useAction, useApi } from '../ui.tsx';

type Row = Record<string, unknown>;

const RECORD = 'query($model: String!, $id: ID!) { record(model: $model, id: $id) }';
const DELETED = 'query($model: String!, $where: JSON) { deletedRecords(model: $model, where: $where, limit: 1) }';
const HISTORY = 'query($model: String!, $id: ID!) { recordHistory(model: $model, id: $id) { eventId eventType version data actorId occurredAt } }';
const CREATE = 'mutation($model: String!, $data: JSON!) { create(model: $model, data: $data) }';
const UPDATE = 'mutation($model: String!, $id: ID!, $data: JSON!) { update(model: $model, id: $id, data: $data) }';
const DELETE = 'mutation($model: String!, $id: ID!) { delete(model: $model, id: $id) }';
const RESTORE = 'mutation($model: String!, $id: ID!) { restore(model: $model, id: $id) }';

interface Loaded { row: Row | null; deleted: boolean }

async function loadRecord(model: string, id: string): Promise<Loaded> {
  if (id === 'new') return { row: null, deleted: false };
  const live = await gql<{ record: Row | null }>(RECORD, { model, id });
  if (live.record) return { row: live.record, deleted: false };
  const gone = await gql<{ deletedRecords: Row[] }>(DELETED, { model, where: { id } });
  if (gone.deletedRecords[0]) return { row: gone.deletedRecords[0], deleted: true };
  throw new ApiError(404, `no ${model} with id ${id}`);
}

/** The form's values: what the record holds, keyed by input name. */
function valuesOf(model: Model, row: Row | null): Row {
  const out: Row = {};
  for (const f of editable(model)) {
    const value = row ? (row[f.inputName] ?? row[f.name]) : f.default;
    if (value !== undefined) out[f.inputName] = value;
  }
  return out;
}

export function RecordView({ loc, modelName, id }: { loc: Location; modelName: string; id: string }) {
  const schema = useApi(loadSchema, 'schema');
  const record = useApi(() => loadRecord(modelName, id), `${modelName}/${id}`);
  const model = schema.data?.models.find((m) => m.name === modelName);
  const tab = loc.query.get('tab') === 'history' ? 'history' : 'record';
  const base = `/records/${modelName}/${id}`;
  const isNew = id === 'new';
  return (
    <section>
      <p><Link href={`/records/${modelName}`}>← {modelName}</Link></p>
      <h1>{isNew ? `New ${modelName}` : `${modelName} ${id}`}</h1>
      {isNew ? null : (
        <nav class="tabs" aria-label="Record tabs">
          <Link href={withQuery(base, loc.query, { tab: null })} aria-current={tab === 'record' ? 'page' : undefined}>Record</Link>
          <Link href={withQuery(base, loc.query, { tab: 'history' })} aria-current={tab === 'history' ? 'page' : undefined}>History</Link>
        </nav>
      )}
      <ErrorNote error={schema.error ?? record.error} />
      <Loading loading={schema.loading || record.loading} />
      {model && record.data ? (tab === 'history'
        ? <History model={modelName} id={id} />
        : <RecordForm model={model} loaded={record.data} id={id} reload={record.reload} />) : null}
    </section>
  );
}

function RecordForm({ model, loaded, id, reload }: { model: Model; loaded: Loaded; id: string; reload: () => void }) {
  const schema = useApi(loadSchema, 'schema');
  const [values, setValues] = useState<Row>(() => valuesOf(model, loaded.row));
  const [saved, setSaved] = useState('');
  useEffect(() => setValues(valuesOf(model, loaded.row)), [loaded]);
  const action = useAction();
  const isNew = id === 'new';
  const mayWrite = isNew ? allows(model.access.create) : allows(model.access.update) && !loaded.deleted;
  const original = valuesOf(model, loaded.row);
  const fieldErrors: Record<string, string> = action.error?.fields ?? {};
  if (action.error?.field && !fieldErrors[action.error.field]) fieldErrors[action.error.field] = action.error.message;
  const save = async (event: Event) => {
    event.preventDefault();
    setSaved('');
    if (isNew) {
      const data = Object.fromEntries(Object.entries(values).filter(([, v]) => v !== null && v !== undefined));
      let created: Row | null = null;
      if (await action.run(async () => { created = (await gql<{ create: Row }>(CREATE, { model: model.name, data })).create; })) {
        navigate(`/records/${model.name}/${String((created as Row | null)?.id)}`);
      }
      return;
    }
    const changed = Object.fromEntries(Object.entries(values).filter(([k, v]) => JSON.stringify(v) !== JSON.stringify(original[k])));
    if (await action.run(() => gql(UPDATE, { model: model.name, id, data: changed }))) {
      setSaved('Saved.');
      reload();
    }
  };
  const remove = async () => {
    if (!confirm(`Delete this ${model.name}? It can be restored.`)) return;
    if (await action.run(() => gql(DELETE, { model: model.name, id }))) reload();
  };
  const restore = async () => {
    if (await action.run(() => gql(RESTORE, { model: model.name, id }))) reload();
  };
  return (
    <form id="record-form" class="record-form" onSubmit={save} aria-label={`${model.name} form`} noValidate>
      {loaded.deleted ? <p class="notice" role="status">This record is deleted.</p> : null}
      {!mayWrite && !loaded.deleted ? <p class="muted">Your role ({session.user?.role}) may not change this {model.name}.</p> : null}
      {schema.data ? editable(model).map((f) => (
        <FieldEditor key={f.name} field={f} schema={schema.data!} id={`field-${f.name}`} disabled={!mayWrite}
          value={values[f.inputName]} error={fieldErrors[f.inputName] ?? fieldErrors[f.name]}
          onChange={(v) => setValues({ ...values, [f.inputName]: v })} />
      )) : null}
      {loaded.row ? <p class="muted">created <Time at={loaded.row.createdAt as string} />, updated <Time at={loaded.row.updatedAt as string} /></p> : null}
      <ErrorNote error={action.error && Object.keys(fieldErrors).length === 0 ? action.error : action.error?.status === 403 ? action.error : null} />
      {action.error && Object.keys(fieldErrors).length > 0 ? <p class="error" role="alert">Some fields are not valid: see the messages at the fields.</p> : null}
      <p class="muted" role="status">{saved}</p>
      <div class="toolbar">
        {mayWrite ? <button type="submit" disabled={action.busy}>{isNew ? 'Create' : 'Save'}</button> : null}
        {!isNew && !loaded.deleted && allows(model.access.delete) ? <button type="button" class="danger" onClick={remove} disabled={action.busy}>Delete</button> : null}
        {loaded.deleted && allows(model.access.update) ? <button type="button" onClick={restore} disabled={action.busy}>Restore</button> : null}
      </div>
    </form>
  );
}

interface RecordEvent { eventId: string; eventType: string; version: number; data: unknown; actorId: string | null; occurredAt: string }

/** The event log of one record, oldest first: who changed what, when. */
function History({ model, id }: { model: string; id: string }) {
  const history = useApi(() => gql<{ recordHistory: RecordEvent[] }>(HISTORY, { model, id }), `history ${model}/${id}`);
  return (
    <div>
      <h2>History</h2>
      <ErrorNote error={history.error} />
      <Loading loading={history.loading} />
      <ol class="timeline">
        {history.data?.recordHistory.map((event) => (
          <li key={event.eventId}>
            <p><strong>{event.eventType}</strong> · version {event.version} · <Time at={event.occurredAt} /> · by {event.actorId ?? 'system'}</p>
            <Changes data={event.data} />
          </li>
        ))}
      </ol>
      {history.data && history.data.recordHistory.length === 0 ? <p class="muted">No events.</p> : null}
    </div>
  );
}

function Changes({ data }: { data: unknown }) {
  if (!data || typeof data !== 'object') return null;
  const entries = Object.entries(data as Record<string, unknown>);
  if (entries.length === 0) return null;
  return (
    <dl class="changes">
      {entries.map(([k, v]) => <div key={k}><dt>{k}</dt><dd>{typeof v === 'object' && v !== null ? <Json value={v} /> : String(v)}</dd></div>)}
    </dl>
  );
}
