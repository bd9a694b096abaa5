/**
 * The records capability: provides `ctx.services.records`, the model-generic,
 * event-sourced data API (served over HTTP by the graphql capability).
 */
import { defineCapability } from '../core/index.ts';
import { createRecordService, type RecordService } from './service.ts';

declare module '../core/capability.ts' {
  interface Services {
    records: RecordService;
  }
}

export const records = defineCapability({
  name: 'records',
  provides: ['records'],
  requires: ['events', 'audit'],
  async init(ctx) {
    ctx.services.records = createRecordService(ctx);
  },
});

export { createRecordService, type RecordService, type RecordEvent } from './service.ts';
export { allows, ruleOf, type Caller } from './access.ts';
export { AccessDenied, RecordError, ERROR_CODES, type ErrorCode } from './errors.ts';
export { LIMITS, type ListArgs, type PageArgs, type Page } from './read.ts';
export type { Row } from './row.ts';
export { KIND_OF_STEP, WriteTriggers, type WriteKind, type WriteStep, type WriteTrigger, type WrittenRecord, type PlannedCreate } from './triggers.ts';
export { WHERE_OPERATORS } from './where.ts';
export { automationRedaction } from './audit.ts';
