/**
 * The durable change feed behind `modelChanges`: one LISTEN per instance
 * (events.onChange, so changes committed through any instance arrive), fanned
 * out to the subscriptions of this instance, each filtered by model, by the
 * subscriber's tenant and by its read access.
 */
import type { AccessTable, SchemaIR } from '../ir/types.ts';
import type { ChangeNotice, EventStore } from '../events/index.ts';
import { allows, ruleOf, RecordError, type Caller } from '../records/index.ts';

/** Job transitions are events too (stream `Job`); subscribers must name the stream to get them. */
const JOB_STREAM = 'Job';
/** A subscriber that stops reading loses its oldest changes rather than growing without bound. */
const MAX_QUEUED = 1000;

interface Subscriber {
  accepts(change: ChangeNotice): boolean;
  push(change: ChangeNotice): void;
}

export interface ChangeFeed {
  subscribe(caller: Caller, model: string | null): AsyncIterableIterator<ChangeNotice>;
  stop(): Promise<void>;
}

export async function createChangeFeed(events: EventStore, ir: SchemaIR, access: AccessTable): Promise<ChangeFeed> {
  const subscribers = new Set<Subscriber>();
  const models = new Map(ir.models.map((m) => [m.name, m]));
  const unlisten = await events.onChange((change) => {
    for (const s of subscribers) if (s.accepts(change)) s.push(change);
  });
  const readable = (caller: Caller, name: string) => {
    const model = models.get(name);
    if (model) return allows(ruleOf(access, model, 'read'), caller.principal);
    return name === JOB_STREAM && caller.principal !== null;
  };
  return {
    subscribe(caller, model) {
      if (model !== null && !models.has(model) && model !== JOB_STREAM) {
        throw new RecordError('VALIDATION_ERROR', `${model} is not a model of this schema`, 'model');
      }
      if (model !== null && !readable(caller, model)) throw new RecordError('FORBIDDEN', `not allowed to read ${model}`);
      const accepts = (c: ChangeNotice) =>
        c.tenantId === caller.tenantId &&
        (model === null ? models.has(c.modelName) && readable(caller, c.modelName) : c.modelName === model);
      return queueIterator(subscribers, accepts);
    },
    async stop() {
      subscribers.clear();
      await unlisten();
    },
  };
}

function queueIterator(subscribers: Set<Subscriber>, accepts: (c: ChangeNotice) => boolean): AsyncIterableIterator<ChangeNotice> {
  const queue: ChangeNotice[] = [];
  let waiting: ((result: IteratorResult<ChangeNotice>) => void) | null = null;
  let done = false;
  const subscriber: Subscriber = {
    accepts,
    push(change) {
      if (waiting) {
        const resolve = waiting;
        waiting = null;
        resolve({ value: change, done: false });
      } else {
        if (queue.length >= MAX_QUEUED) queue.shift();
        queue.push(change);
      }
    },
  };
  subscribers.add(subscriber);
  const finish = async (): Promise<IteratorResult<ChangeNotice>> => {
    done = true;
    subscribers.delete(subscriber);
    queue.length = 0;
    waiting?.({ value: undefined, done: true });
    waiting = null;
    return { value: undefined, done: true };
  };
  return {
    next: () => {
      if (queue.length > 0) return Promise.resolve({ value: queue.shift()!, done: false });
      if (done) return Promise.resolve({ value: undefined, done: true });
      return new Promise((resolve) => (waiting = resolve));
    },
    return: finish,
    throw: async (error) => {
      await finish();
      throw error;
    },
    [Symbol.asyncIterator]() {
      return this;
    },
  };
}
