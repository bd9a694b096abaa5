/**
 * resolvers/<Model>.ts stubs (the operator's code: written once, never
 * overwritten) and the generated resolvers/index.ts that links them.
 */
import type { SchemaIR } from '../../runtime/ir/types.ts';
import { render } from './templates.ts';

export function resolverStub(model: string): string {
  return render('resolver-stub.ts', { model });
}

export function stubPath(model: string): string {
  return `resolvers/${model}.ts`;
}

export function emitResolverIndex(ir: SchemaIR, schemaFile: string): string {
  return render('resolvers-index.ts', { schemaFile, models: ir.models.map((m) => m.name) });
}

/** The operator's custom projections (a leading `_` keeps it apart from model stubs). */
export const CUSTOM_PROJECTIONS_FILE = 'resolvers/_projections.ts';

function customProjectionsFile(ir: SchemaIR): string {
  const model = ir.models[0]?.name ?? 'Record';
  const base = model.charAt(0).toLowerCase() + model.slice(1);
  const table = `${base.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)}_counts`;
  return render('custom-projections.ts', { model, exampleName: `${base}Counts`, exampleTable: table });
}

/** Stubs of models that do not have one yet. */
export function emitStubs(ir: SchemaIR, existing: ReadonlyMap<string, string>): Map<string, string> {
  return new Map(ir.models.filter((m) => !existing.has(stubPath(m.name))).map((m) => [stubPath(m.name), resolverStub(m.name)]));
}

/** The operator's custom projections file, written once. */
export function emitCustomProjections(ir: SchemaIR, existing: ReadonlyMap<string, string>): Map<string, string> {
  return existing.has(CUSTOM_PROJECTIONS_FILE) ? new Map() : new Map([[CUSTOM_PROJECTIONS_FILE, customProjectionsFile(ir)]]);
}

/** Stubs of removed models that were never edited can go; edited ones stay (they are the operator's code). */
export function obsoleteStubs(ir: SchemaIR, existing: ReadonlyMap<string, string>): string[] {
  const models = new Set(ir.models.map((m) => m.name));
  return [...existing]
    .filter(([path]) => /^resolvers\/[^/]+\.ts$/.test(path) && path !== 'resolvers/index.ts' && path !== CUSTOM_PROJECTIONS_FILE)
    .map(([path, content]) => ({ path, content, model: path.slice('resolvers/'.length, -'.ts'.length) }))
    .filter(({ model, content }) => !models.has(model) && content === resolverStub(model))
    .map(({ path }) => path);
}
