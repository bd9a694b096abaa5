/**
 * The seam every capability builds on: what a capability declares and sees,
 * the service definition it is started from, and who a request acts as.
 * Nothing here imports a capability or runtime/service.
 */
export {
  defineCapability,
  type Capability, type CapabilityContext, type CapabilityHandle, type ServiceBase, type ServiceContext, type ServiceName,
  type Services, type UpgradeHandler,
} from './capability.ts';
export type {
  HookContext, ModelHooks, ProjectionDefinition, ProjectionEvent, ResolverTable, ServiceDefinition,
} from './definition.ts';
export type { Principal } from './principal.ts';
