/** schema.ts `actions`, `on` and `workflows` -> IR (CONTRACT sections 11 and 12). */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { formatDiagnostic, parseSchemaText } from '../../generator/index.ts';
import { buildOk, copySchema, tempDir } from './helpers.ts';
import { scanTemplates } from '../../runtime/ir/template.ts';

const MODELS = `
import { defineSchema } from 'svc-gen/schema';
export type Stage = 'lead' | 'won';
export interface Company { id: string; name: string; deals?: Deal[] }
export interface Deal { id: string; title: string; stage: Stage; amount?: number; invoiced?: boolean; closeDate?: Date; company?: Company }
`;

function ir(config: string) {
  const result = parseSchemaText(`${MODELS}\nexport default defineSchema(${config});\n`, 'schema.ts');
  if (!result.ok) throw new Error(result.diagnostics.map(formatDiagnostic).join('\n'));
  return result.ir;
}

function problems(config: string): string[] {
  const result = parseSchemaText(`${MODELS}\nexport default defineSchema(${config});\n`, 'schema.ts');
  return result.ok ? [] : result.diagnostics.map((d) => `${d.code}: ${d.message}`);
}

const step = (body: string) => `{ models: {}, workflows: { w: { trigger: { manual: ['Sales'] }, steps: [${body}] } } }`;

describe('actions', () => {
  it('reads input types, picks JSON names, and applies the default access', () => {
    const { actions } = ir(`{
      actions: {
        score: { input: { dealId: 'string', note: 'string?', stage: 'Stage', tags: 'string[]?', at: 'date', n: 'number', ok: 'boolean?' }, access: 'authenticated' },
        notify: { input: { pick: { model: 'Deal', fields: ['id', 'title', 'company', 'title'] } } },
        ping: {},
      },
      models: {},
    }`);
    expect(actions.map((a) => a.name)).toEqual(['notify', 'ping', 'score']);
    const [notify, ping, score] = actions;
    expect(notify).toEqual({ kind: 'action', name: 'notify', input: { kind: 'pick', model: 'Deal', fields: ['id', 'title', 'companyId'] }, access: { kind: 'roles', roles: ['Admin'] } });
    expect(ping.input).toEqual({ kind: 'fields', fields: [] });
    expect(score.access).toEqual({ kind: 'authenticated' });
    expect(score.input.kind === 'fields' && score.input.fields.map((f) => [f.name, f.type.kind === 'enum' ? f.type.enum : f.type, f.required])).toEqual([
      ['dealId', { kind: 'scalar', scalar: 'string' }, true],
      ['note', { kind: 'scalar', scalar: 'string' }, false],
      ['stage', 'Stage', true],
      ['tags', { kind: 'list', of: 'string' }, false],
      ['at', { kind: 'scalar', scalar: 'date' }, true],
      ['n', { kind: 'scalar', scalar: 'number' }, true],
      ['ok', { kind: 'scalar', scalar: 'boolean' }, false],
    ]);
    expect(Object.isFrozen(score.input)).toBe(true);
  });

  it('orders bindings by model, event, then declaration, and reads when', () => {
    const { bindings } = ir(`{
      actions: { a: {}, b: {} },
      models: {
        Deal: { on: { deleted: ['b'], updated: ['b', { action: 'a', when: { changed: ['stage', 'company'], equals: { stage: 'won', amount: null } } }], created: [] } },
        Company: { on: { created: ['a'] } },
      },
    }`);
    expect(bindings.map((b) => `${b.model}.${b.event}:${b.action}`)).toEqual(['Company.created:a', 'Deal.updated:b', 'Deal.updated:a', 'Deal.deleted:b']);
    expect(bindings[2].when).toEqual({ changed: ['stage', 'company'], equals: { stage: 'won', amount: null } });
    expect(bindings[1].when).toBeNull();
  });

  it.each([
    [`{ actions: { a: {} }, models: { Deal: { on: { updated: ['a', 'a'] } } } }`, 'BAD_BINDING: action a is bound twice to Deal.updated'],
    [`{ actions: { a: {} }, models: { Deal: { on: { updated: [{ action: 'a', when: { equals: { title: 3 } } }] } } } }`, 'BAD_CONDITION: equals Deal.title: 3 is not a string'],
    [`{ actions: { a: {} }, models: { Deal: { on: { updated: [{ action: 'a', when: { equals: { title: null } } }] } } } }`, 'BAD_CONDITION: equals Deal.title: null cannot be null: title is required'],
    [`{ actions: { a: {} }, models: { Deal: { on: { updated: [{ action: 'a', when: { equals: { closeDate: 'soon' } } }] } } } }`, "BAD_CONDITION: equals Deal.closeDate: 'soon' is not an ISO date"],
    [`{ actions: { a: { input: { pick: { model: 'Company', fields: ['deals'] } } } }, models: {} }`, 'UNKNOWN_FIELD: pick of action a: Company has no field deals'],
    [`{ actions: { a: { input: { s: 'Stage[]' } } }, models: {} }`, 'BAD_INPUT_TYPE: unknown input type Stage[] for s of action a'],
    [`{ actions: { a: { input: { pick: { model: 'Deal', fields: ['id'] }, x: 'string' } } }, models: {} }`, 'BAD_INPUT_TYPE: input of action a: pick cannot be mixed with other fields'],
    [`{ actions: { a: {}, A: {} }, models: {} }`, 'NAME_CLASH: action A clashes with action a (both are AInput in actions.ts)'],
    [`{ actions: { a: { retries: 3 } }, models: {} }`, 'UNKNOWN_OPTION: unknown option retries in action a (expected input, access)'],
    [`{ actions: { a: { input: { n: someType } } }, models: {} }`, 'NOT_LITERAL: someType is computed'],
  ])('reports %s', (config, message) => {
    expect(problems(config).join('\n')).toContain(message);
  });
});

describe('workflows', () => {
  it('reads the three trigger kinds, defaults and every step kind', () => {
    const { workflows } = ir(`{
      models: {},
      workflows: {
        won: {
          trigger: { on: 'Deal.updated', when: { changed: ['stage'], equals: { stage: 'won' } } },
          steps: [
            { id: 'invoice', job: { queue: 'billing', kind: 'invoice', payload: { dealId: '{{trigger.record.id}}', was: '{{trigger.old.stage}}' }, await: true } },
            { id: 'mark', if: { eq: ['{{steps.invoice.result.ok}}', true] }, mutation: { update: { model: 'Deal', id: '{{trigger.record.id}}', data: { invoiced: true, companyId: '{{steps.invoice.result.companyId}}' } } } },
            { id: 'total', set: { amount: '{{trigger.record.amount}}', who: '{{trigger.actor.role}}' } },
            { id: 'wait', if: { gt: ['{{vars.amount}}', 1000] }, delay: { hours: 1, minutes: 30 } },
            { id: 'ping', http: { method: 'POST', url: 'https://hooks.example.com/won/{{trigger.record.id}}', body: { total: '{{vars.amount}}' } } },
            { id: 'drop', mutation: { delete: { model: 'Deal', id: '{{trigger.record.id}}' } } },
          ],
          onFailure: { retry: { maxAttempts: 3 } },
        },
        nightly: { trigger: { schedule: '*/30 * * * * *' }, steps: [{ id: 'sweep', job: { queue: 'ops', kind: 'sweep' } }] },
        byHand: { trigger: { manual: ['Sales', 'Sales'] }, steps: [{ id: 'c', if: { exists: ['{{trigger.input.title}}'] }, mutation: { create: { model: 'Deal', data: { title: '{{trigger.input.title}}', stage: 'lead' } } } }], onFailure: 'continue' },
      },
    }`);
    expect(workflows.map((w) => w.name)).toEqual(['byHand', 'nightly', 'won']);
    const [byHand, nightly, won] = workflows;
    expect(byHand.trigger).toEqual({ kind: 'manual', roles: ['Sales'] });
    expect(byHand.onFailure).toEqual({ kind: 'continue' });
    expect(nightly.trigger).toEqual({ kind: 'schedule', cron: '*/30 * * * * *', timezone: 'UTC' });
    expect(nightly.onFailure).toEqual({ kind: 'stop' });
    expect(nightly.steps[0]).toEqual({ kind: 'job', id: 'sweep', if: null, queue: 'ops', jobKind: 'sweep', payload: null, await: false });
    expect(won.trigger).toEqual({ kind: 'event', model: 'Deal', event: 'updated', when: { changed: ['stage'], equals: { stage: 'won' } } });
    expect(won.steps.map((s) => s.kind)).toEqual(['job', 'mutation', 'set', 'delay', 'http', 'mutation']);
    expect(won.steps[1]).toMatchObject({ operation: 'update', model: 'Deal', recordId: '{{trigger.record.id}}', if: { kind: 'condition', op: 'eq', args: ['{{steps.invoice.result.ok}}', true] } });
    expect(won.steps[3]).toMatchObject({ kind: 'delay', seconds: 5400 });
    expect(won.steps[4]).toMatchObject({ kind: 'http', method: 'POST', timeoutSecs: 10, headers: {} });
    expect(won.steps[5]).toMatchObject({ kind: 'mutation', operation: 'delete', data: {} });
    expect(won.onFailure).toEqual({ kind: 'retry', maxAttempts: 3 });
  });

  it.each([
    [step(`{ id: 'a', http: { method: 'POST', url: 'https://{{vars.host}}/x' } }`), 'BAD_STEP: url of step a of workflow w must be an absolute http(s) URL whose origin is fixed'],
    [step(`{ id: 'a', http: { method: 'FETCH', url: 'https://x.example.com/' } }`), 'BAD_STEP: method of step a of workflow w must be one of GET, POST, PUT, PATCH, DELETE'],
    [step(`{ id: 'a', job: { queue: '{{trigger.input.q}}', kind: 'k' } }`), 'BAD_STEP: queue of step a of workflow w must be a fixed, non-blank name'],
    [step(`{ id: 'a', job: { queue: 'q' } }`), 'BAD_STEP: step a of workflow w needs kind'],
    [step(`{ id: 'a', delay: { seconds: 0 } }`), 'BAD_STEP: delay of step a of workflow w must wait a positive time'],
    [step(`{ id: 'a', delay: { weeks: 1 } }`), 'BAD_STEP: unknown option weeks in delay of step a of workflow w'],
    [step(`{ id: 'a', delay: { seconds: 1 }, set: { x: 1 } }`), 'BAD_STEP: step a of workflow w has two kinds, delay and set'],
    [step(`{ id: 'a' }`), 'UNKNOWN_STEP_KIND: step a of workflow w has no kind'],
    [step(`{ delay: { seconds: 1 } }`), 'BAD_STEP: a step of workflow w needs an id'],
    [step(`{ id: 'a-b', delay: { seconds: 1 } }`), 'BAD_NAME: step id a-b of workflow w must start with a letter'],
    [step(`{ id: 'a', mutation: { create: { model: 'Deal', data: { stage: 'won' } } } }`), 'BAD_STEP: step a of workflow w creates a Deal without its required title'],
    [step(`{ id: 'a', mutation: { update: { model: 'Deal', data: { title: 'x' } } } }`), 'BAD_STEP: mutation update of step a of workflow w needs id'],
    [step(`{ id: 'a', mutation: { update: { model: 'Deal', id: '1', data: { stage: 'lost' } } } }`), "BAD_STEP: step a of workflow w: Deal.stage 'lost' is not one of lead, won"],
    [step(`{ id: 'a', mutation: { update: { model: 'Deal', id: '1', data: { company: '2' } } } }`), 'UNKNOWN_FIELD: step a of workflow w: Deal has no input field company (write companyId)'],
    [step(`{ id: 'a', mutation: { delete: { model: 'Deal', id: 7 } } }`), "BAD_STEP: id of mutation delete of step a of workflow w must be a string such as '{{trigger.record.id}}', not 7"],
    [step(`{ id: 'a', mutation: { upsert: { model: 'Deal' } } }`), 'BAD_STEP: mutation of step a of workflow w must be { create: {...} }, { update: {...} } or { delete: {...} }'],
    [step(`{ id: 'a', mutation: { delete: { model: 'Dael', id: '1' } } }`), 'UNKNOWN_MODEL: step a of workflow w names Dael, which is not a model'],
    [step(`{ id: 'a', if: { in: ['{{trigger.input.x}}', 3] }, delay: { seconds: 1 } }`), 'BAD_CONDITION: in in if of step a of workflow w needs a list'],
    [step(`{ id: 'a', if: { eq: [1, 1], ne: [1, 2] }, delay: { seconds: 1 } }`), 'BAD_CONDITION: if of step a of workflow w needs exactly one operator'],
    [step(`{ id: 'a', set: { x: '{{steps.a.result}}' } }`), 'BAD_TEMPLATE: {{steps.a.result}}: step a cannot read its own outcome'],
    [step(`{ id: 'a', set: { x: '{{steps.zz}}' } }`), 'BAD_TEMPLATE: {{steps.zz}}: there is no step zz before this one'],
    [step(`{ id: 'a', set: { x: '{{trigger.record.id}}' } }`), 'BAD_TEMPLATE: {{trigger.record.id}}: trigger.record exists only for event triggers (this one is manual)'],
    [step(`{ id: 'a', set: { x: '{{trigger.actor.email}}' } }`), 'BAD_TEMPLATE: {{trigger.actor.email}}: trigger.actor has id, role, tenantId, not email'],
    [step(`{ id: 'a', set: { x: '{{trigger.eventId}}' } }`), 'BAD_TEMPLATE: {{trigger.eventId}}: unknown trigger.eventId'],
    [step(`{ id: 'a', set: { x: 'a {{steps' } }`), "BAD_TEMPLATE: unclosed template in 'a {{steps'"],
    [`{ models: {}, workflows: { w: { trigger: { on: 'Deal' }, steps: [] } } }`, "BAD_TRIGGER: on of workflow w is 'Deal'; write 'Model.created'"],
    [`{ models: {}, workflows: { w: { trigger: { manual: [], when: {} }, steps: [] } } }`, 'BAD_TRIGGER: when does not apply to a manual trigger'],
    [`{ models: {}, workflows: { w: { trigger: { schedule: '0 0 31 2 *' }, steps: [{ id: 'a', delay: { seconds: 1 } }] } } }`, "BAD_CRON: schedule of workflow w '0 0 31 2 *': it never fires"],
    [`{ models: {}, workflows: { w: { trigger: { manual: [] }, steps: [{ id: 'a', delay: { seconds: 1 } }], onFailure: { retry: { maxAttempts: 0 } } } } }`, 'BAD_FAILURE_POLICY'],
    [`{ models: {}, workflows: { 'bad name': { trigger: { manual: [] }, steps: [] } } }`, 'BAD_NAME: workflow name bad name must start with a letter'],
  ])('reports %s', (config, message) => {
    expect(problems(config).join('\n')).toContain(message);
  });
});

describe('template syntax', () => {
  it('finds paths, keeps a whole template apart, refuses code', () => {
    expect(scanTemplates('{{ trigger.record.id }}')).toEqual({ ok: true, whole: true, refs: [{ path: ['trigger', 'record', 'id'], text: '{{ trigger.record.id }}' }] });
    expect(scanTemplates('deal {{trigger.record.id}} by {{trigger.actor.id}}')).toMatchObject({ ok: true, whole: false, refs: [{ path: ['trigger', 'record', 'id'] }, { path: ['trigger', 'actor', 'id'] }] });
    expect(scanTemplates('{{steps.list.result.items.0}}')).toMatchObject({ ok: true, refs: [{ path: ['steps', 'list', 'result', 'items', '0'] }] });
    expect(scanTemplates('plain')).toEqual({ ok: true, whole: false, refs: [] });
    expect(scanTemplates('{{ a() }}').ok).toBe(false);
  });
});

describe('build', () => {
  it('adds actions and a workflow to a project built before them: no migration, only the declarations change', async () => {
    const schemaPath = copySchema('small');
    const outDir = tempDir('automation');
    await buildOk({ schemaPath, outDir });
    const before = readFileSync(join(outDir, 'schema.snapshot.json'), 'utf8');
    const text = readFileSync(schemaPath, 'utf8').replace(
      'export default defineSchema({\n',
      `export default defineSchema({
  actions: { remind: { input: { pick: { model: 'Task', fields: ['id', 'title', 'dueAt'] } }, access: ['Manager'] } },
  workflows: { daily: { trigger: { schedule: '0 8 * * *' }, steps: [{ id: 'sweep', job: { queue: 'tasks', kind: 'sweep' } }] } },
`,
    ).replace("Task: { access:", "Task: { on: { updated: [{ action: 'remind', when: { changed: ['dueAt'] } }] }, access:");
    writeFileSync(schemaPath, text);
    const result = await buildOk({ schemaPath, outDir });
    expect(result.migration).toBeNull();
    expect([...result.written].sort()).toEqual(['actions.ts', 'schema.snapshot.json', 'schema.ts', 'workflows.ts']);
    const after = JSON.parse(readFileSync(join(outDir, 'schema.snapshot.json'), 'utf8'));
    expect(after.models).toEqual(JSON.parse(before).models);
    expect(after.bindings).toEqual({ Task: { updated: [{ action: 'remind', when: { changed: ['dueAt'] } }] } });
    expect(readFileSync(join(outDir, 'actions.ts'), 'utf8')).toContain("export type RemindInput = Pick<Task, 'id' | 'title' | 'dueAt'>;");
    expect((await buildOk({ schemaPath, outDir })).written).toEqual([]);
  });
});
