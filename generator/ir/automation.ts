/** Actions, their model bindings and workflows, checked against the built models (CONTRACT sections 11 and 12). */
import type { EnumDef, Model, SchemaIR } from '../../runtime/ir/types.ts';
import type { Diagnostic } from '../diagnostics.ts';
import type { RawModelOptions, RawSchema } from '../parse/index.ts';
import { buildActions, buildBindings, declaredActionNames, type ActionContext } from './actions.ts';
import { Reporter } from './raw.ts';
import { buildWorkflows } from './workflows.ts';

export function buildAutomation(
  raw: RawSchema,
  models: readonly Model[],
  enums: readonly EnumDef[],
  options: readonly RawModelOptions[],
  diagnostics: Diagnostic[],
): Pick<SchemaIR, 'actions' | 'bindings' | 'workflows'> {
  const r = new Reporter(diagnostics);
  const ctx: ActionContext = { models: new Map(models.map((m) => [m.name, m])), enums: new Map(enums.map((e) => [e.name, e.values])) };
  const actions = buildActions(raw.actions, ctx, r);
  const bindings = buildBindings(options, declaredActionNames(raw.actions), ctx, r);
  const workflows = buildWorkflows(raw.workflows, ctx.models, r);
  return { actions: byName(actions), bindings, workflows: byName(workflows) };
}

function byName<T extends { readonly name: string }>(items: readonly T[]): T[] {
  return [...items].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}
