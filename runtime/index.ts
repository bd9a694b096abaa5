/**
 * `svc-gen/runtime`: what a generated project (and an operator's resolver
 * code) may use. Everything else in runtime/ is internal.
 */
export {
  defineService, startService, runService,
  type ServiceDefinition, type ModelHooks, type HookContext, type ResolverTable, type StartOptions, type RunningService,
} from './service/index.ts';
export type {
  AccessTable, AccessRule, Operation, Role, SchemaIR, Model, Field, FieldType, EnumDef, EmbedDef,
} from './ir/types.ts';
export { ROLES, OPERATIONS } from './ir/types.ts';
export type { Principal } from './auth/index.ts';
export { defineProjection, type ProjectionDefinition, type ProjectionEvent } from './projections/index.ts';
