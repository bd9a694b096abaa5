/**
 * Raw facts read from schema.ts: what was written, where. No decisions: the
 * IR stage resolves names, applies defaults and validates.
 */
import type { Diagnostic, SourceLocation } from '../diagnostics.ts';

/** A field's type as written, before names are resolved. */
export type RawType =
  | { readonly kind: 'keyword'; readonly keyword: 'string' | 'number' | 'boolean'; readonly array: boolean }
  /** A named type: `Date`, `Stage`, `Address`, `Company`. */
  | { readonly kind: 'reference'; readonly name: string; readonly array: boolean }
  /** An inline string-literal union: `'a' | 'b'`. */
  | { readonly kind: 'union'; readonly values: readonly string[]; readonly array: boolean }
  | { readonly kind: 'unsupported'; readonly text: string };

export interface RawTag {
  readonly name: string;
  /** Text after the tag name, trimmed; '' when none. */
  readonly value: string;
  readonly at: SourceLocation;
}

export interface RawField {
  readonly name: string;
  readonly optional: boolean;
  readonly type: RawType;
  readonly tags: readonly RawTag[];
  readonly at: SourceLocation;
}

export interface RawInterface {
  readonly kind: 'interface';
  readonly name: string;
  readonly fields: readonly RawField[];
  readonly at: SourceLocation;
}

export interface RawAlias {
  readonly kind: 'alias';
  readonly name: string;
  /** String-literal union members; null when the alias is something else. */
  readonly values: readonly string[] | null;
  readonly text: string;
  readonly at: SourceLocation;
}

export type RawAccessValue =
  | { readonly kind: 'keyword'; readonly value: string }
  | { readonly kind: 'roles'; readonly roles: readonly { readonly name: string; readonly at: SourceLocation }[] };

export interface RawAccessEntry {
  readonly operation: string;
  readonly value: RawAccessValue;
  readonly at: SourceLocation;
}

export interface RawModelOptions {
  readonly name: string;
  readonly access: readonly RawAccessEntry[];
  readonly publicRead: { readonly fields: readonly string[]; readonly at: SourceLocation } | null;
  /** `on: { created: [...], ... }` action bindings as written; null when absent. */
  readonly on?: RawValue | null;
  readonly at: SourceLocation;
}

export interface RawSchema {
  readonly file: string;
  readonly interfaces: readonly RawInterface[];
  readonly aliases: readonly RawAlias[];
  /** Entries of `defineSchema({ models })`, in source order; empty without a default export. */
  readonly models: readonly RawModelOptions[];
  /** `defineSchema({ actions })` as written; null when absent. */
  readonly actions?: RawValue | null;
  /** `defineSchema({ workflows })` as written; null when absent. */
  readonly workflows?: RawValue | null;
  /** Things the parser could not read (computed values, unsupported syntax). */
  readonly diagnostics: readonly Diagnostic[];
  /** Local names of the types imported from `svc-gen/schema` (`Media`, or its alias), by exported name. */
  readonly schemaImports: Readonly<Record<string, string>>;
}

/** A literal value of schema.ts with the line of every node (the `actions`, `on` and `workflows` blocks). */
export type RawValue =
  | { readonly kind: 'string'; readonly value: string; readonly at: SourceLocation }
  | { readonly kind: 'number'; readonly value: number; readonly at: SourceLocation }
  | { readonly kind: 'boolean'; readonly value: boolean; readonly at: SourceLocation }
  | { readonly kind: 'null'; readonly at: SourceLocation }
  | { readonly kind: 'array'; readonly items: readonly RawValue[]; readonly at: SourceLocation }
  | { readonly kind: 'object'; readonly entries: readonly RawEntry[]; readonly at: SourceLocation };

/** `key: value` of an object literal; `at` is the key's line. */
export interface RawEntry {
  readonly key: string;
  readonly value: RawValue;
  readonly at: SourceLocation;
}
