/**
 * `@sensitive` fields (item 8 of issue 26): the audit log shows them as
 * "[redacted]", and so do the automations a write feeds, unless they name the
 * field: an action job's `old` (its pick names it) and an event-triggered
 * run's `trigger.record` / `trigger.old` (a template names it). The tests read
 * what committed: the job rows and the run rows.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/service.ts';
import { actionJobs, startActionsService, userOf, CREATE, UPDATE, type User } from './helpers.ts';
import type { TestService } from '../helpers/service.ts';

const GUARDED = `${REPO_ROOT}/test/workflows/fixtures/guarded/schema.ts`;
const SSN = '123-45-6789';
const REDACTED = '[redacted]';

let service: TestService;
let manager: User;
let patientId: string;

beforeAll(async () => {
  service = await startActionsService({ fixture: GUARDED });
  manager = await userOf(service, 'Manager', 'mgr');
  const created = await manager.gql(CREATE, { model: 'Patient', data: { name: 'Ann', ssn: SSN, diagnosis: 'flu' } });
  patientId = created.data.create.id;
  const updated = await manager.gql(UPDATE, { model: 'Patient', id: patientId, data: { name: 'Anna' } });
  expect(updated.errors).toBeUndefined();
});
afterAll(async () => {
  await service?.close();
});

describe('an action bound to a model with @sensitive fields', () => {
  it('gets them as [redacted] in its payload unless its pick names them', async () => {
    const jobs = await actionJobs(service, `payload->>'recordId' = $1`, [patientId]);
    const byAction = Object.fromEntries(jobs.map((job) => [job.kind, job.payload]));
    // greet picks id and name: ssn and diagnosis are redacted in `old`.
    expect(byAction.greet.input).toEqual({ id: patientId, name: 'Anna' });
    expect(byAction.greet.old).toMatchObject({ name: 'Ann', ssn: REDACTED, diagnosis: REDACTED });
    // verify picks ssn: it travels in clear (input and old); diagnosis does not.
    expect(byAction.verify.input).toEqual({ id: patientId, ssn: SSN });
    expect(byAction.verify.old).toMatchObject({ name: 'Ann', ssn: SSN, diagnosis: REDACTED });
  });

  it('is redacted as the audit log redacts it', async () => {
    const entry = await service.ctx.db.one(`select changes from svc_audit where action = 'record.create' and entity_id = $1`, [patientId]);
    expect(entry.changes).toMatchObject({ ssn: REDACTED, diagnosis: REDACTED });
  });
});

describe('a workflow triggered by a model with @sensitive fields', () => {
  const triggerOf = (workflow: string) => service.ctx.db.one<{ trigger: any }>(
    `select trigger from svc_workflow_runs where workflow = $1 and trigger->>'recordId' = $2`, [workflow, patientId],
  ).then((row) => row.trigger);

  it('stores them as [redacted] in trigger.record and trigger.old unless a template names them', async () => {
    // welcome reads only trigger.record.name.
    const welcome = await triggerOf('welcome');
    expect(welcome.record).toMatchObject({ name: 'Anna', ssn: REDACTED, diagnosis: REDACTED });
    expect(welcome.old).toMatchObject({ name: 'Ann', ssn: REDACTED, diagnosis: REDACTED });
    // checkSsn reads trigger.record.ssn (and trigger.old.name): record.ssn in clear, nothing else sensitive.
    const checkSsn = await triggerOf('checkSsn');
    expect(checkSsn.record).toMatchObject({ name: 'Anna', ssn: SSN, diagnosis: REDACTED });
    expect(checkSsn.old).toMatchObject({ name: 'Ann', ssn: REDACTED, diagnosis: REDACTED });
  });
});
