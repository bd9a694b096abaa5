/**
 * The generated project type-checks against the real runtime (`svc-gen` symlinked
 * to the repo, its sources selected by the `svc-gen-source` export condition).
 */
import { execFile } from 'node:child_process';
import { mkdirSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { FIXTURES, REPO_ROOT, buildOk, tempDir } from './helpers.ts';

const run = promisify(execFile);

/**
 * A worker written against the generated action types: what must compile
 * does, and each `@ts-expect-error` proves a mistake is caught (an unused
 * one is itself an error).
 */
const CRM_WORKER = `import type { ActionName, ActionPayload, ScoreLeadInput } from './actions.ts';
import type { ManualWorkflowName, WorkflowName } from './workflows.ts';

export function onNotifyWon(payload: ActionPayload<'notifyWon'>): string {
  const amount: number = payload.input.amount;
  const before: string | undefined = payload.old?.stage;
  const model: 'Deal' | null = payload.model;
  return \`\${payload.input.title} \${amount} \${before} \${model} \${payload.actor.role} \${payload.depth}\`;
}

export function route(payload: ActionPayload): string {
  if (payload.action === 'sendQuote') return payload.input.recipients.join(', ');
  if (payload.action === 'enrichCompany') return payload.input.website ?? payload.input.companyId;
  return payload.action;
}

export const names: ActionName[] = ['scoreLead', 'notifyWon', 'escalateTicket', 'enrichCompany', 'sendQuote'];
export const input: ScoreLeadInput = { id: '1', email: 'a@example.com', companyId: null };
export const manual: ManualWorkflowName = 'followUp';
export const all: WorkflowName[] = ['wonDeal', 'staleTickets', 'followUp'];

// @ts-expect-error an action that is not declared
export const unknown: ActionName = 'scoreLeed';
// @ts-expect-error the input of notifyWon has no stage
export const stage = (p: ActionPayload<'notifyWon'>) => p.input.stage;
// @ts-expect-error sendQuote is never bound to a model event
export const bound: ActionPayload<'sendQuote'>['model'] = 'Deal';
// @ts-expect-error wonDeal is triggered by an event, not by hand
export const byHand: ManualWorkflowName = 'wonDeal';
`;

describe.each(['crm', 'small'])('generated project %s', (fixture) => {
  it('passes tsc --noEmit', async () => {
    const outDir = tempDir(`tsc-${fixture}`);
    await buildOk({ schemaPath: join(FIXTURES, fixture, 'schema.ts'), outDir });
    if (fixture === 'crm') writeFileSync(join(outDir, 'worker.ts'), CRM_WORKER);
    mkdirSync(join(outDir, 'node_modules'));
    const link = join(outDir, 'node_modules', 'svc-gen');
    symlinkSync(REPO_ROOT, link, 'dir');
    // client.ts imports graphql-ws, a dependency of the generated package.json.
    symlinkSync(join(REPO_ROOT, 'node_modules', 'graphql-ws'), join(outDir, 'node_modules', 'graphql-ws'), 'dir');
    try {
      const tsc = join(REPO_ROOT, 'node_modules', '.bin', 'tsc');
      const result = await run(tsc, ['--noEmit', '-p', outDir, '--customConditions', 'svc-gen-source']).catch((error: { stdout: string; stderr: string }) => error);
      expect(`${result.stdout}${result.stderr}`).toBe('');
    } finally {
      unlinkSync(link);
    }
  });
});
