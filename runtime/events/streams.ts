/**
 * The runtime's own streams beside the models (`Job`, `WorkflowRun`): their
 * transitions are in the event log like a record's, so they have a history.
 * The capability that owns a stream type registers who may read one of its
 * streams (the rule of its realtime channel); GraphQL's `recordHistory`
 * serves them as it serves a model's, in the reader's tenant scope.
 */
import type { Role } from '../ir/types.ts';
import type { TenantScope } from '../tenancy/index.ts';
import type { EventStore, StoredEvent } from './store.ts';

export interface StreamReader {
  readonly principal: { readonly userId: string; readonly role: Role } | null;
  readonly scope: TenantScope;
}

/** May `reader` read the stream `streamId`? Answered in the reader's scope: another tenant's stream is no. */
export type MayReadStream = (reader: StreamReader, streamId: string) => Promise<boolean>;

export class RuntimeStreams {
  private readonly readers = new Map<string, MayReadStream>();

  constructor(private readonly events: Pick<EventStore, 'history'>) {}

  register(streamType: string, mayRead: MayReadStream): void {
    if (this.readers.has(streamType)) throw new Error(`runtime stream ${streamType} is registered twice`);
    this.readers.set(streamType, mayRead);
  }

  has(streamType: unknown): streamType is string {
    return typeof streamType === 'string' && this.readers.has(streamType);
  }

  /** The stream's events, oldest first; empty when the reader may not read it (as for an unknown id). */
  async history(reader: StreamReader, streamType: string, streamId: string): Promise<StoredEvent[]> {
    const mayRead = this.readers.get(streamType);
    if (!mayRead || !(await mayRead(reader, streamId))) return [];
    return this.events.history(streamType, streamId, reader.scope);
  }
}
