/**
 * What a field, or an action's input field, holds, and the literals schema.ts
 * may write for it. Below types.ts and automation.ts, which both use them
 * (types.ts re-exports them).
 */

export const SCALARS = ['string', 'number', 'boolean', 'date'] as const;
export type Scalar = (typeof SCALARS)[number];

/** What a field holds. `column` facts live on the field, not here. */
export type FieldType =
  | { readonly kind: 'scalar'; readonly scalar: Scalar }
  /** An exported union alias (`enum` = its name) or an inline union (`enum` = null). */
  | { readonly kind: 'enum'; readonly enum: string | null; readonly values: readonly string[] }
  /** An id-less interface stored as jsonb; `list` for `Address[]`. */
  | { readonly kind: 'embed'; readonly embed: string; readonly list: boolean }
  /** `string[]`, `number[]`, ... stored as jsonb. */
  | { readonly kind: 'list'; readonly of: Scalar }
  /** `company?: Company`: column `company_id`, input name `companyId`. */
  | { readonly kind: 'belongsTo'; readonly model: string }
  /** `contacts?: Contact[]`: virtual, the inverse of `Contact.<inverse>`. */
  | { readonly kind: 'hasMany'; readonly model: string; readonly inverse: string }
  /** `logo?: Media`: the id of a media item of the same tenant (text column). */
  | { readonly kind: 'media' };

export type FieldKind = FieldType['kind'];

export type Literal = string | number | boolean;
