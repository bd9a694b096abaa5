/**
 * Who a request acts as: the seam type every capability reads (records'
 * access rules, tenancy, audit's actor, realtime's channels). Owned here, below
 * the capabilities, so none of them imports auth for it; auth issues and
 * verifies it.
 */
import type { Role } from '../ir/types.ts';

export interface Principal {
  readonly userId: string;
  readonly role: Role;
  /** The user's bound tenant; null for users not bound to one (platform admins). */
  readonly tenantId: string | null;
  /** The session the access token belongs to (logout revokes it). */
  readonly sessionId: string | null;
  readonly email: string | null;
}
