/**
 * Roles and access rules of the IR: who may read, create, update or delete a
 * model, or invoke an action. Below types.ts and automation.ts, which both use
 * them (types.ts re-exports them).
 */

export const ROLES = ['Admin', 'Manager', 'Sales', 'Support', 'Viewer'] as const;
export type Role = (typeof ROLES)[number];

export const OPERATIONS = ['read', 'create', 'update', 'delete'] as const;
export type Operation = (typeof OPERATIONS)[number];

export type AccessRule =
  | { readonly kind: 'public' }
  | { readonly kind: 'authenticated' }
  | { readonly kind: 'roles'; readonly roles: readonly Role[] };

export type AccessTable = Readonly<Record<string, Readonly<Record<Operation, AccessRule>>>>;
