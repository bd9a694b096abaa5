/**
 * workflows.ts: a typed listing of the declared workflows (trigger and step
 * ids in order) for clients and workers; the engine reads the snapshot.
 */
import type { WorkflowDef, WorkflowTrigger } from '../../runtime/ir/automation.ts';
import type { SchemaIR } from '../../runtime/ir/types.ts';
import { render } from './templates.ts';
import { quote, tsLiteral } from './ts-literal.ts';

export function emitWorkflows(ir: SchemaIR, schemaFile: string): string {
  const workflows = ir.workflows.map((w) => ({ name: w.name, trigger: tsLiteral(triggerSummary(w.trigger)), steps: tsLiteral(stepSummary(w)) }));
  const manual = ir.workflows.filter((w) => w.trigger.kind === 'manual').map((w) => quote(w.name));
  return render('workflows.ts', { schemaFile, workflows, manual: manual.length ? manual.join(' | ') : 'never' });
}

function triggerSummary(trigger: WorkflowTrigger): Record<string, unknown> {
  switch (trigger.kind) {
    case 'event':
      return { kind: 'event', model: trigger.model, event: trigger.event };
    case 'schedule':
      return { kind: 'schedule', cron: trigger.cron, timezone: trigger.timezone };
    case 'manual':
      return { kind: 'manual', roles: trigger.roles };
  }
}

function stepSummary(workflow: WorkflowDef): Record<string, unknown>[] {
  return workflow.steps.map((s) => ({ id: s.id, kind: s.kind }));
}
