/** Links each hasMany to its inverse belongsTo on the target model. */
import type { Field, Model } from '../../runtime/ir/types.ts';
import { diagnostic, type Diagnostic } from '../diagnostics.ts';
import type { RawInterface } from '../parse/index.ts';

export function linkInverses(models: readonly Model[], raws: ReadonlyMap<string, RawInterface>, diagnostics: Diagnostic[]): Model[] {
  const byName = new Map(models.map((m) => [m.name, m]));
  return models.map((model) => ({
    ...model,
    fields: model.fields.map((field) => (field.type.kind === 'hasMany' ? link(model, field, byName, raws, diagnostics) : field)),
  }));
}

function link(model: Model, field: Field, byName: ReadonlyMap<string, Model>, raws: ReadonlyMap<string, RawInterface>, diagnostics: Diagnostic[]): Field {
  if (field.type.kind !== 'hasMany') return field;
  const target = field.type.model;
  const candidates = (byName.get(target)?.fields ?? []).filter((f) => f.type.kind === 'belongsTo' && f.type.model === model.name);
  const at = raws.get(model.name)?.fields.find((f) => f.name === field.name)?.at ?? { file: '', line: 1 };
  if (candidates.length === 1) return { ...field, type: { ...field.type, inverse: candidates[0].name } };
  if (candidates.length === 0) {
    diagnostics.push(
      diagnostic('MISSING_INVERSE', at, `${model.name}.${field.name} lists ${target} records, but ${target} has no field of type ${model.name} (add e.g. \`${lowerFirst(model.name)}?: ${model.name}\` to ${target})`),
    );
  } else {
    const names = candidates.map((c) => `${target}.${c.name}`).join(', ');
    diagnostics.push(diagnostic('AMBIGUOUS_INVERSE', at, `${model.name}.${field.name} is ambiguous: ${names} all refer to ${model.name}`));
  }
  return field;
}

function lowerFirst(name: string): string {
  return name.charAt(0).toLowerCase() + name.slice(1);
}
