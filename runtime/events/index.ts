export {
  createEventStore, CHANGES_CHANNEL, NOTIFY_COLUMN,
  type EventStore, type NewEvent, type StoredEvent, type ChangeNotice, type ChangeListener, type SqlQuery, type CreatedEvent,
} from './store.ts';
export {
  coverageGaps, pruneHistory, HISTORY_LOCK_KEY, FULL_HISTORY,
  type HistoryOptions, type CoverageGap, type GapReason,
} from './history.ts';
export { events } from './capability.ts';
