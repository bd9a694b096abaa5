/** Limits and timers of the realtime tier (SVC_REALTIME_*), validated with the rest of the config. */
import type { Config } from '../config/index.ts';

export type RealtimeConfig = Config['realtime'];
