export {
  createEventStore, CHANGES_CHANNEL,
  type EventStore, type NewEvent, type StoredEvent, type ChangeNotice, type ChangeListener,
} from './store.ts';
export {
  coverageGaps, pruneHistory, HISTORY_LOCK_KEY, FULL_HISTORY,
  type HistoryOptions, type CoverageGap, type GapReason,
} from './history.ts';
export { events } from './capability.ts';
