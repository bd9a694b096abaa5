/**
 * What the engine's parts share: the services it runs on, its internal
 * queue, and the payload of an advance (one job per step transition).
 */
import type { AuditLog } from '../audit/index.ts';
import type { WorkflowsConfig } from '../config/index.ts';
import type { Db } from '../db/index.ts';
import type { EventStore } from '../events/index.ts';
import type { JobQueue } from '../jobs/index.ts';
import type { Logger } from '../log/index.ts';
import type { RealtimeBus } from '../realtime/types.ts';
import type { RecordService } from '../records/index.ts';

/** The internal queue of advances (a reserved `svc.` name: no client enqueues or leases it). */
export const ADVANCE_QUEUE = 'svc.workflows';
export const ADVANCE_KIND = 'advance';
/** Attempts of one advance job before it goes dead (engine faults only: step failures follow onFailure). */
export const ADVANCE_MAX_ATTEMPTS = 1000;
/** Stream type of run and step transitions in the event log. */
export const RUN_STREAM = 'WorkflowRun';
/** Entity type of `workflow.run` audit entries. */
export const RUN_ENTITY = 'WorkflowRun';
/** An advance job's payload: look at step `position` of run `runId`. */
export interface AdvancePayload {
  readonly runId: string;
  readonly position: number;
}

export interface EngineDeps {
  readonly db: Db;
  readonly jobs: JobQueue;
  readonly records: RecordService;
  readonly events: EventStore;
  readonly audit: AuditLog;
  readonly realtime: RealtimeBus | undefined;
  readonly log: Logger;
  readonly config: WorkflowsConfig;
  /** Tells the local runners an advance becomes due in `delaySecs` (0: now). Call after the commit. */
  due(delaySecs: number): void;
}
