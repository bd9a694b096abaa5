/**
 * Records holding a media id in a `Media` field (CONTRACT section 10). A media
 * item that a live record references is not deleted (409 naming the records):
 * the record would keep an id that serves nothing. The fields come from the
 * IR; each is indexed like a belongsTo column, so each lookup is one index probe.
 */
import type { Tx } from '../db/index.ts';
import { conflict, type HttpError } from '../http/errors.ts';
import type { SchemaIR } from '../ir/types.ts';
import { compile, sql } from '../sql/index.ts';
import { TenantScope } from '../tenancy/index.ts';

/** At most this many records are named in a 409. */
const SHOWN = 10;

export interface MediaReference {
  readonly model: string;
  readonly id: string;
}

export interface MediaReferences {
  /** Live records of the tenant whose Media fields hold `id`: at most SHOWN + 1 (the one more says "and more"). */
  holding(t: Tx, tenantId: string | null, id: string): Promise<MediaReference[]>;
}

export function mediaReferences(ir: SchemaIR): MediaReferences {
  const fields = ir.models.flatMap((model) => model.fields
    .filter((field) => field.type.kind === 'media' && field.column !== null)
    .map((field) => ({ model: model.name, table: sql.ident(model.table), column: sql.ident(field.column!) })));
  return {
    async holding(t, tenantId, id) {
      if (fields.length === 0) return [];
      const scope = TenantScope.of(tenantId);
      const media = sql.value(id, 'text');
      const limit = sql.value(SHOWN + 1, 'int');
      const probes = fields.map((f) => sql`(select ${sql.value(f.model, 'text')} as model, t."id" from ${f.table} t
        where t.${f.column} = ${media} and t."deleted_at" is null and ${scope.predicate()} limit ${limit})`);
      return t.manyOrNone<MediaReference>(
        compile(sql`select model, id from (${sql.join(probes, ' union all ')}) held limit ${limit}`, { scope }));
    },
  };
}

/** 409 naming (a bounded list of) the records that still hold the media id. */
export function stillReferenced(references: readonly MediaReference[]): HttpError {
  return conflict('media is referenced by records', {
    references: references.slice(0, SHOWN).map(({ model, id }) => ({ model, id })),
    more: references.length > SHOWN,
  });
}
