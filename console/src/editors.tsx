/**
 * Typed editors, one per field type of the IR: selects for enums, date-time
 * inputs, numbers, booleans, structured editors for embedded blocks and
 * lists, and a picker that searches the target model for relations. Every
 * control is labelled; an API validation message is shown under its field.
 */
import { useEffect, useState } from 'preact/hooks';
import { gql } from './api.ts';
import { labelField, loadSchema, type Field, type Schema } from './schema.ts';

export interface EditorProps {
  field: Field;
  value: unknown;
  onChange: (value: unknown) => void;
  schema: Schema;
  /** The control's id (and the prefix of nested ones). */
  id: string;
  error?: string;
  disabled?: boolean;
}

export function FieldEditor(props: EditorProps) {
  const { field, id, error } = props;
  const described = error ? `${id}-error` : undefined;
  const label = `${field.name}${field.required ? ' *' : ''}`;
  const structured = field.type.kind === 'embed' || field.type.kind === 'list';
  return (
    <div class={`field${error ? ' invalid' : ''}`}>
      {structured
        ? <fieldset><legend>{label}</legend><Control {...props} described={described} /></fieldset>
        : <><label for={id}>{label}</label><Control {...props} described={described} /></>}
      {error ? <p id={described} class="field-error" role="alert">{error}</p> : null}
    </div>
  );
}

function toLocalInput(value: unknown): string {
  if (typeof value !== 'string' || value === '') return '';
  const date = new Date(value);
  if (Number.isNaN(date.getTime())) return '';
  const local = new Date(date.getTime() - date.getTimezoneOffset() * 60_000);
  return local.toISOString().slice(0, 16);
}

function Control(props: EditorProps & { described?: string }) {
  const { field, value, onChange, id, disabled, described } = props;
  const type = field.type;
  const common = { id, disabled, 'aria-describedby': described, 'aria-invalid': described ? true : undefined };
  switch (type.kind) {
    case 'enum':
      return (
        <select {...common} value={value == null ? '' : String(value)} onChange={(e) => onChange(e.currentTarget.value === '' ? null : e.currentTarget.value)}>
          <option value="">{field.required ? 'choose…' : '(none)'}</option>
          {type.values.map((v) => <option value={v} key={v}>{v}</option>)}
        </select>
      );
    case 'scalar':
      return <Scalar {...props} described={described} scalar={type.scalar} />;
    case 'list':
      return <ListEditor {...props} render={(item, set, itemId) => (
        <ScalarInput id={itemId} scalar={type.of} value={item} onChange={set} disabled={disabled} label={`${field.name} item`} />
      )} empty={null} />;
    case 'embed': {
      const embed = props.schema.embeds.find((e) => e.name === type.embed);
      if (!embed) return <p class="muted">unknown embedded type {type.embed}</p>;
      const block = (item: unknown, set: (v: unknown) => void, itemId: string) => (
        <div class="embed">
          {embed.fields.map((sub) => (
            <FieldEditor key={sub.name} field={sub} schema={props.schema} id={`${itemId}-${sub.name}`} disabled={disabled}
              value={(item as Record<string, unknown> | null)?.[sub.inputName]}
              onChange={(v) => set({ ...((item as Record<string, unknown>) ?? {}), [sub.inputName]: v })} />
          ))}
        </div>
      );
      if (type.list) return <ListEditor {...props} render={block} empty={{}} />;
      return value == null && !field.required
        ? <button type="button" onClick={() => onChange({})} disabled={disabled}>Add {field.name}</button>
        : <>{block(value, onChange, id)}{field.required ? null : <button type="button" onClick={() => onChange(null)} disabled={disabled}>Remove {field.name}</button>}</>;
    }
    case 'belongsTo':
      return <RelationPicker {...props} described={described} model={type.model} />;
    case 'media':
      return <input {...common} type="text" value={value == null ? '' : String(value)} placeholder="media id"
        onInput={(e) => onChange(e.currentTarget.value === '' ? null : e.currentTarget.value)} />;
    case 'hasMany':
      return null;
  }
}

function Scalar(props: EditorProps & { described?: string; scalar: 'string' | 'number' | 'boolean' | 'date' }) {
  const { field, value, onChange, id, disabled, described, scalar } = props;
  if (scalar === 'boolean' && !field.required) {
    return (
      <select id={id} disabled={disabled} aria-describedby={described} value={value == null ? '' : String(value)}
        onChange={(e) => onChange(e.currentTarget.value === '' ? null : e.currentTarget.value === 'true')}>
        <option value="">(none)</option><option value="true">true</option><option value="false">false</option>
      </select>
    );
  }
  return <ScalarInput id={id} scalar={scalar} value={value} onChange={onChange} disabled={disabled} described={described} />;
}

function ScalarInput(props: { id: string; scalar: string; value: unknown; onChange: (v: unknown) => void; disabled?: boolean; described?: string; label?: string }) {
  const { id, scalar, value, onChange, disabled, described, label } = props;
  const common = { id, disabled, 'aria-describedby': described, 'aria-label': label };
  if (scalar === 'boolean') return <input {...common} type="checkbox" checked={value === true} onChange={(e) => onChange(e.currentTarget.checked)} />;
  if (scalar === 'number') {
    return <input {...common} type="number" step="any" value={value == null ? '' : String(value)}
      onInput={(e) => { const text = e.currentTarget.value; onChange(text === '' ? null : Number(text)); }} />;
  }
  if (scalar === 'date') {
    return <input {...common} type="datetime-local" value={toLocalInput(value)}
      onInput={(e) => { const text = e.currentTarget.value; onChange(text === '' ? null : new Date(text).toISOString()); }} />;
  }
  return <input {...common} type="text" value={value == null ? '' : String(value)} onInput={(e) => onChange(e.currentTarget.value === '' ? null : e.currentTarget.value)} />;
}

function ListEditor(props: EditorProps & { render: (item: unknown, set: (v: unknown) => void, id: string) => preact.JSX.Element; empty: unknown }) {
  const { value, onChange, id, field, disabled, render, empty } = props;
  const items = Array.isArray(value) ? value : [];
  const setAt = (i: number, v: unknown) => onChange(items.map((old, j) => (j === i ? v : old)));
  return (
    <div class="list-editor">
      {items.map((item, i) => (
        <div class="list-item" key={i}>
          {render(item, (v) => setAt(i, v), `${id}-${i}`)}
          <button type="button" disabled={disabled} onClick={() => onChange(items.filter((_, j) => j !== i))}>Remove {field.name} item {i + 1}</button>
        </div>
      ))}
      <button type="button" disabled={disabled} onClick={() => onChange([...items, empty])}>Add {field.name} item</button>
    </div>
  );
}

const SEARCH = `query($model: String!, $where: JSON, $limit: Int) { records(model: $model, where: $where, limit: $limit) }`;

/** Searches the target model by its label field (contains), and keeps the chosen record's id. */
function RelationPicker(props: EditorProps & { described?: string; model: string }) {
  const { value, onChange, id, disabled, described, model } = props;
  const [search, setSearch] = useState('');
  const [options, setOptions] = useState<Array<{ id: string; label: string }>>([]);
  useEffect(() => {
    let live = true;
    const timer = setTimeout(async () => {
      const schema = await loadSchema();
      const target = schema.models.find((m) => m.name === model);
      const label = target ? labelField(target) : undefined;
      const where = search && label ? { [label.name]: { contains: search } } : undefined;
      try {
        const data = await gql<{ records: Array<Record<string, unknown>> }>(SEARCH, { model, where, limit: 20 });
        if (live) setOptions(data.records.map((r) => ({ id: String(r.id), label: label ? `${String(r[label.name] ?? '')} (${String(r.id)})` : String(r.id) })));
      } catch {
        if (live) setOptions([]);
      }
    }, 200);
    return () => { live = false; clearTimeout(timer); };
  }, [search, model]);
  const current = value == null ? '' : String(value);
  const shown = current && !options.some((o) => o.id === current) ? [{ id: current, label: current }, ...options] : options;
  return (
    <div class="picker">
      <input type="search" id={`${id}-search`} aria-label={`Search ${model}`} placeholder={`search ${model}…`} value={search}
        disabled={disabled} onInput={(e) => setSearch(e.currentTarget.value)} />
      <select id={id} disabled={disabled} aria-describedby={described} value={current}
        onChange={(e) => onChange(e.currentTarget.value === '' ? null : e.currentTarget.value)}>
        <option value="">(none)</option>
        {shown.map((o) => <option key={o.id} value={o.id}>{o.label}</option>)}
      </select>
    </div>
  );
}
