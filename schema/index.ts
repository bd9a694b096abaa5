/**
 * The `svc-gen/schema` export: what an operator's schema.ts imports.
 *
 * svc-gen never executes schema.ts (it reads it with ts-morph), so these are
 * types for the editor plus an identity function that keeps the file valid
 * TypeScript. Only literal values are understood by the generator.
 */
import type { Operation, Role } from '../runtime/ir/types.ts';

export type { Operation, Role };

/** Who may perform an operation: anyone, any signed-in user, or these roles (Admin always may). */
export type AccessValue = 'public' | 'authenticated' | readonly Role[];

/**
 * Field tags, written in a field's JSDoc (`/** @email @unique *\/`):
 * - validation: `@email`, `@numeric`, `@min N`, `@max N` (value for numbers,
 *   length for strings and lists);
 * - storage: `@default <literal>`, `@unique` (among the live rows of a
 *   tenant), `@index` (a tenant's list ordered by the field walks an index);
 * - `@sensitive`: the audit log shows the field's values as "[redacted]";
 * - `@renamedFrom("oldName")`: the field was called `oldName`; the next build
 *   moves its data to the new column (expand/contract, docs/migrations.md)
 *   instead of dropping one field and adding another. Renames are never guessed.
 */
export type FieldTag = 'email' | 'numeric' | 'min' | 'max' | 'default' | 'unique' | 'index' | 'sensitive' | 'renamedFrom';

export interface ModelOptions {
  /** Absent operations default to: read `authenticated`, create/update/delete `['Admin']`. */
  access?: Partial<Record<Operation, AccessValue>>;
  /** Fields the anonymous endpoint `/public/records/{model}` may return. */
  publicRead?: { fields: readonly string[] };
  /** Actions enqueued (in the same transaction) when a record is created, updated or deleted. */
  on?: ActionBindings;
}

export interface SchemaDefinition {
  models: Record<string, ModelOptions>;
  /** Jobs on queue `actions`, bound to model events or called at `POST /api/actions/{name}`. */
  actions?: Record<string, ActionDefinition>;
  /** Durable multi-step runs triggered by an event, a schedule or a person. */
  workflows?: Record<string, WorkflowDefinition>;
}

// ---------------------------------------------------------------- actions (CONTRACT section 11)

type InputScalar = 'string' | 'number' | 'boolean' | 'date';
/** `'string'`, `'number?'` (optional), `'string[]'` (a list), or the name of an exported enum (`'DealStage'`). */
export type InputType = InputScalar | `${InputScalar}?` | `${InputScalar}[]` | `${InputScalar}[]?` | (string & {});

export interface ActionDefinition {
  /** Named fields with their types, or fields picked from a model (`{ pick: { model: 'Deal', fields: ['id', 'title'] } }`). */
  input?: Readonly<Record<string, InputType>> | { readonly pick: { readonly model: string; readonly fields: readonly string[] } };
  /** Who may call it directly; default `['Admin']` (Admin always may). */
  access?: 'authenticated' | readonly Role[];
}

/** A literal a field is compared with; null means the field is empty. */
export type ConditionLiteral = string | number | boolean | null;

/** Both parts must hold: one of `changed` changed (updated events only) and every `equals` matches the new record. */
export interface EventCondition {
  changed?: readonly string[];
  equals?: Readonly<Record<string, ConditionLiteral>>;
}

export type ActionBinding = string | { readonly action: string; readonly when?: EventCondition };

/** `restore` counts as updated, `hardDelete` as deleted. */
export interface ActionBindings {
  created?: readonly ActionBinding[];
  updated?: readonly ActionBinding[];
  deleted?: readonly ActionBinding[];
}

// ---------------------------------------------------------------- workflows (CONTRACT section 12)

/** JSON whose strings may hold templates: `{{trigger.record.id}}`, `{{steps.invoice.result}}`, `{{vars.total}}`. */
export type TemplateValue = string | number | boolean | null | readonly TemplateValue[] | { readonly [key: string]: TemplateValue };

export type WorkflowTrigger =
  | { readonly on: `${string}.${'created' | 'updated' | 'deleted'}`; readonly when?: EventCondition }
  /** Cron (5 fields, or 6 with seconds first) in an IANA timezone, default 'UTC'. */
  | { readonly schedule: string; readonly timezone?: string }
  /** `POST /workflows/{name}/run` by these roles (Admin always may). */
  | { readonly manual: readonly Role[] };

type Operand = TemplateValue;
export type StepCondition =
  | { readonly eq: readonly [Operand, Operand] }
  | { readonly ne: readonly [Operand, Operand] }
  | { readonly gt: readonly [Operand, Operand] }
  | { readonly gte: readonly [Operand, Operand] }
  | { readonly lt: readonly [Operand, Operand] }
  | { readonly lte: readonly [Operand, Operand] }
  | { readonly in: readonly [Operand, Operand] }
  | { readonly contains: readonly [Operand, Operand] }
  | { readonly exists: readonly [Operand] };

interface StepCommon {
  /** Unique in the workflow; later steps read `{{steps.<id>.*}}`. */
  readonly id: string;
  /** A false condition skips the step. */
  readonly if?: StepCondition;
}

export type WorkflowStep = StepCommon &
  (
    | { readonly job: { readonly queue: string; readonly kind: string; readonly payload?: TemplateValue; readonly await?: boolean } }
    | {
        readonly mutation:
          | { readonly create: { readonly model: string; readonly data: Readonly<Record<string, TemplateValue>> } }
          | { readonly update: { readonly model: string; readonly id: string; readonly data: Readonly<Record<string, TemplateValue>> } }
          | { readonly delete: { readonly model: string; readonly id: string } };
      }
    | {
        readonly http: {
          readonly method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
          /** Only origins in SVC_WORKFLOW_HTTP_ALLOW are reached. */
          readonly url: string;
          readonly headers?: Readonly<Record<string, string>>;
          readonly body?: TemplateValue;
          /** 1..30, default 10. */
          readonly timeoutSecs?: number;
        };
      }
    | { readonly delay: { readonly seconds?: number; readonly minutes?: number; readonly hours?: number; readonly days?: number } }
    | { readonly set: Readonly<Record<string, TemplateValue>> }
  );

export interface WorkflowDefinition {
  readonly trigger: WorkflowTrigger;
  readonly steps: readonly WorkflowStep[];
  /** Default 'stop'. */
  readonly onFailure?: 'stop' | 'continue' | { readonly retry: { readonly maxAttempts: number } };
}

declare const mediaBrand: unique symbol;

/**
 * A field holding the id of a media item (`POST /media`) of the record's own
 * tenant; writing an unknown or foreign id is a VALIDATION_ERROR.
 */
export type Media = string & { readonly [mediaBrand]: 'Media' };

export function defineSchema<const T extends SchemaDefinition>(def: T): T {
  return def;
}
