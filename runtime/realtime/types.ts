/**
 * The realtime tier's public surface for other capabilities (jobs publishes
 * progress on `job:{id}` and guards who may subscribe to it).
 */
import type { Principal } from '../auth/index.ts';
import type { TenantScope } from '../tenancy/index.ts';

export interface RealtimeBus {
  /** Publishes an ephemeral message on `channel` within tenant scope, to subscribers on every instance. Never event-sourced. */
  publish(tenantId: string | null, channel: string, data: unknown, from?: string | null): Promise<void>;
  /** Lets a capability decide who may subscribe to channels starting with `prefix` (e.g. 'job:'). */
  guardChannels(prefix: string, guard: (principal: Principal, scope: TenantScope, channel: string) => Promise<boolean>): void;
  /** This instance's open connections and channels with a subscriber (metrics). */
  stats(): { connections: number; channels: number };
}

export type ChannelGuard = Parameters<RealtimeBus['guardChannels']>[1];

declare module '../core/capability.ts' {
  interface Services {
    realtime: RealtimeBus;
  }
}
