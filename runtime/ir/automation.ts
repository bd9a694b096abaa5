/**
 * The IR of actions (CONTRACT section 11) and workflows (section 12): what a
 * record write enqueues and which durable runs it starts. Frozen plain data
 * like the rest of the IR; the generator validates it, the runtime serves it.
 */
import type { AccessRule, Role } from './access.ts';
import type { FieldType, Literal } from './field-type.ts';

/** Record events an action binding or a workflow trigger can name (`restore` counts as updated, `hardDelete` as deleted). */
export const RECORD_EVENTS = ['created', 'updated', 'deleted'] as const;
export type RecordEvent = (typeof RECORD_EVENTS)[number];

/** Who may invoke an action directly when schema.ts says nothing. */
export const DEFAULT_ACTION_ACCESS: AccessRule = { kind: 'roles', roles: ['Admin'] };

/**
 * `when: { changed, equals }`: both parts must hold. `changed` names fields
 * (IR names) of which at least one changed (updated events only); `equals`
 * compares the new record's field with a literal (null: the field is empty).
 */
export interface EventCondition {
  readonly changed: readonly string[];
  readonly equals: Readonly<Record<string, Literal | null>>;
}

/** A field of an action's declared input: scalars, enums and lists of scalars. */
export interface InputField {
  readonly kind: 'inputField';
  readonly name: string;
  readonly type: Extract<FieldType, { kind: 'scalar' | 'enum' | 'list' }>;
  readonly required: boolean;
}

export type ActionInput =
  | { readonly kind: 'fields'; readonly fields: readonly InputField[] }
  /** `{ pick: { model, fields } }`: JSON names of the model (`companyId`, `id`, ...), required as on the model. */
  | { readonly kind: 'pick'; readonly model: string; readonly fields: readonly string[] };

export interface ActionDef {
  readonly kind: 'action';
  readonly name: string;
  readonly input: ActionInput;
  /** Who may call `POST /api/actions/{name}`; 'public' is never used. Admin always may. */
  readonly access: AccessRule;
}

/** `models.<model>.on.<event>: [action | { action, when }]`, in declared order. */
export interface ActionBinding {
  readonly kind: 'binding';
  readonly model: string;
  readonly event: RecordEvent;
  readonly action: string;
  readonly when: EventCondition | null;
}

// ---------------------------------------------------------------- workflows

/** A JSON value whose strings may hold `{{...}}` templates (see template.ts). */
export type TemplateValue = null | boolean | number | string | readonly TemplateValue[] | { readonly [key: string]: TemplateValue };

export type WorkflowTrigger =
  | { readonly kind: 'event'; readonly model: string; readonly event: RecordEvent; readonly when: EventCondition | null }
  /** A cron expression (5 or 6 fields, croner syntax) read in an IANA timezone. */
  | { readonly kind: 'schedule'; readonly cron: string; readonly timezone: string }
  /** `POST /workflows/{name}/run` by these roles (Admin always may). */
  | { readonly kind: 'manual'; readonly roles: readonly Role[] };

export const CONDITION_OPERATORS = ['eq', 'ne', 'gt', 'gte', 'lt', 'lte', 'in', 'contains', 'exists'] as const;
export type ConditionOperator = (typeof CONDITION_OPERATORS)[number];

/** A step's `if`: `{ eq: [a, b] }`; `exists` takes one operand. */
export interface StepCondition {
  readonly kind: 'condition';
  readonly op: ConditionOperator;
  readonly args: readonly TemplateValue[];
}

export const HTTP_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;
export type HttpMethod = (typeof HTTP_METHODS)[number];
export const DEFAULT_HTTP_TIMEOUT_SECS = 10;
export const MAX_HTTP_TIMEOUT_SECS = 30;

interface StepBase {
  /** Unique in its workflow; `{{steps.<id>.*}}` reads its outcome. */
  readonly id: string;
  readonly if: StepCondition | null;
}

export type WorkflowStep =
  | (StepBase & { readonly kind: 'job'; readonly queue: string; readonly jobKind: string; readonly payload: TemplateValue; readonly await: boolean })
  | (StepBase & {
      readonly kind: 'mutation';
      readonly operation: 'create' | 'update' | 'delete';
      readonly model: string;
      /** Template or literal id; null for create. */
      readonly recordId: TemplateValue;
      /** Input (JSON) names of the model -> values; empty for delete. */
      readonly data: Readonly<Record<string, TemplateValue>>;
    })
  | (StepBase & {
      readonly kind: 'http';
      readonly method: HttpMethod;
      readonly url: string;
      readonly headers: Readonly<Record<string, string>>;
      readonly body: TemplateValue;
      readonly timeoutSecs: number;
    })
  /** Waits this long; holds no process. */
  | (StepBase & { readonly kind: 'delay'; readonly seconds: number })
  /** Stores `{{vars.<name>}}`. */
  | (StepBase & { readonly kind: 'set'; readonly values: Readonly<Record<string, TemplateValue>> });

export type StepKind = WorkflowStep['kind'];
export const STEP_KINDS = ['job', 'mutation', 'http', 'delay', 'set'] as const satisfies readonly StepKind[];

export type FailurePolicy = { readonly kind: 'stop' } | { readonly kind: 'continue' } | { readonly kind: 'retry'; readonly maxAttempts: number };
export const DEFAULT_FAILURE_POLICY: FailurePolicy = { kind: 'stop' };

export interface WorkflowDef {
  readonly kind: 'workflow';
  readonly name: string;
  readonly trigger: WorkflowTrigger;
  readonly steps: readonly WorkflowStep[];
  readonly onFailure: FailurePolicy;
}
