/**
 * `modelChanges(model, after)` over the instance's change feed (runtime/feed):
 * each subscription is a feed subscriber filtered by model, by the caller's
 * tenant scope and by its read access. With `after` (an eventId the client
 * saw) it first replays what the caller missed, then goes live, with no gap
 * and no duplicate at the seam. A subscriber that falls too far behind gets
 * one error and the subscription completes: it resubscribes with `after`.
 */
import type { AccessTable, SchemaIR } from '../ir/types.ts';
import { FeedOverflowError, FeedPositionError, type ChangeFeed, type FeedChange } from '../feed/index.ts';
import { allows, ruleOf, RecordError, type Caller } from '../records/index.ts';

/**
 * The runtime's own streams beside the models, and who may follow them: job
 * transitions (`Job`, any user) and workflow run and step transitions
 * (`WorkflowRun`, Admins). Subscribers must name the stream to get them.
 */
const RUNTIME_STREAMS: Readonly<Record<string, (caller: Caller) => boolean>> = {
  Job: (caller) => caller.principal !== null,
  WorkflowRun: (caller) => caller.principal?.role === 'Admin',
};
/** Changes queued for one subscription before it is closed with an error. */
const MAX_QUEUED = 1000;

export interface ModelChange {
  readonly eventType: string;
  readonly modelName: string;
  readonly eventId: string;
  readonly recordId: string;
  readonly tenantId: string | null;
}

export interface ModelChanges {
  subscribe(caller: Caller, model: string | null, after: string | null): Promise<AsyncIterableIterator<ModelChange | RecordError>>;
}

export function createModelChanges(feed: ChangeFeed, ir: SchemaIR, access: AccessTable): ModelChanges {
  const models = new Map(ir.models.map((m) => [m.name, m]));
  const readable = (caller: Caller, name: string) => {
    const model = models.get(name);
    if (model) return allows(ruleOf(access, model, 'read'), caller.principal);
    return Object.hasOwn(RUNTIME_STREAMS, name) && RUNTIME_STREAMS[name](caller);
  };
  return {
    async subscribe(caller, model, after) {
      if (model !== null && !models.has(model) && !Object.hasOwn(RUNTIME_STREAMS, model)) {
        throw new RecordError('VALIDATION_ERROR', `${model} is not a model of this schema`, 'model');
      }
      if (model !== null && !readable(caller, model)) throw new RecordError('FORBIDDEN', `not allowed to read ${model}`);
      const scope = caller.scope;
      // Read access is checked at each delivery with the caller's current principal (a role change applies at once).
      const accepts = (c: FeedChange) => scope.contains(c.tenantId) &&
        (model === null ? models.has(c.modelName) : c.modelName === model) && readable(caller, c.modelName);
      let from;
      if (after !== null) {
        let seen;
        try {
          seen = await feed.positionOf(after);
        } catch (error) {
          // A position of the other feed mode (ADR 025 decision 4): it cannot be translated.
          if (error instanceof FeedPositionError) throw new RecordError('VALIDATION_ERROR', error.message, 'after');
          throw error;
        }
        // An event of another scope is answered like an unknown one: no oracle across tenants.
        if (!seen || !scope.contains(seen.tenantId)) {
          throw new RecordError('VALIDATION_ERROR', 'after is not a change this subscription can resume from', 'after');
        }
        from = seen.position;
      }
      const streams = model === null ? [...models.keys()] : [model];
      return toModelChanges(feed.subscribe({ from, streams, accepts, maxQueued: MAX_QUEUED }));
    },
  };
}

/** Maps feed changes to the GraphQL shape; an overflow becomes one error value, then the end. */
async function* toModelChanges(source: AsyncIterableIterator<FeedChange>): AsyncGenerator<ModelChange | RecordError> {
  try {
    for (;;) {
      let next: IteratorResult<FeedChange>;
      try {
        next = await source.next();
      } catch (error) {
        if (!(error instanceof FeedOverflowError)) throw error;
        const resume = error.resumeAfter ? ` (resume with after: "${error.resumeAfter.eventId}")` : '';
        yield new RecordError('INTERNAL_ERROR', `${error.message}${resume}`);
        return;
      }
      if (next.done) return;
      const c = next.value;
      yield { eventType: c.eventType, modelName: c.modelName, eventId: c.eventId, recordId: c.recordId, tenantId: c.tenantId };
    }
  } finally {
    await source.return?.();
  }
}
