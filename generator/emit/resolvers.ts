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

/** Stubs of models that do not have one yet. */
export function emitStubs(ir: SchemaIR, existing: ReadonlyMap<string, string>): Map<string, string> {
  return new Map(ir.models.filter((m) => !existing.has(stubPath(m.name))).map((m) => [stubPath(m.name), resolverStub(m.name)]));
}

/** Stubs of removed models that were never edited can go; edited ones stay (they are the operator's code). */
export function obsoleteStubs(ir: SchemaIR, existing: ReadonlyMap<string, string>): string[] {
  const models = new Set(ir.models.map((m) => m.name));
  return [...existing]
    .filter(([path]) => /^resolvers\/[^/]+\.ts$/.test(path) && path !== 'resolvers/index.ts')
    .map(([path, content]) => ({ path, content, model: path.slice('resolvers/'.length, -'.ts'.length) }))
    .filter(({ model, content }) => !models.has(model) && content === resolverStub(model))
    .map(({ path }) => path);
}
