/**
 * projections/<table>.sql: the current-state read model of each entity, every
 * column as text, keyed like its model table in layout 3 (ADR 025): the tenant
 * (`''` for the global scope) not null, primary key `(tenant_id, id)`.
 */
import type { Model, SchemaIR } from '../../runtime/ir/types.ts';
import { projectionTableName, quoteIdent } from '../ir/naming.ts';
import { columnFields } from './sql.ts';
import { render } from './templates.ts';

export function emitProjections(ir: SchemaIR, schemaFile: string): Map<string, string> {
  return new Map(ir.models.map((model) => [`projections/${model.table}.sql`, projection(model, schemaFile)]));
}

/** The projection's columns, in table order (all text). */
export function projectionColumns(model: Model): string[] {
  return ['id', 'tenant_id', ...columnFields(model.fields).map((f) => f.column!), 'created_at', 'updated_at'];
}

function projection(model: Model, schemaFile: string): string {
  const columns = projectionColumns(model);
  const lines = [...columns.map((c) => `${quoteIdent(c)} text${c === 'id' || c === 'tenant_id' ? ' not null' : ''},`), 'primary key ("tenant_id", "id")'];
  return render('projection.sql', { schemaFile, model: model.name, table: quoteIdent(projectionTableName(model.table)), lines });
}
