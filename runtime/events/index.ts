export {
  createEventStore, cteFragments, CREATED,
  type EventStore, type NewEvent, type StoredEvent, type SqlQuery, type CreatedEvent, type CreatedCte, type NamedCte, type EventColumnsSql,
} from './store.ts';
export {
  coverageGaps, pruneHistory, pruneChanges, HISTORY_LOCK_KEY, FULL_HISTORY,
  type HistoryOptions, type CoverageGap, type GapReason,
} from './history.ts';
export { events } from './capability.ts';
export { RuntimeStreams, type StreamReader, type MayReadStream } from './streams.ts';
export { tenantKey, tenantOfKey, tenantKeySql, type FeedCursorMode } from './tenant-seq.ts';
export { feedCursorMode } from './capability.ts';
