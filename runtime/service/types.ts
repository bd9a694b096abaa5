/**
 * The service's public types. The seam types live in runtime/core, below every
 * capability; they are re-exported here for the runtime's package surface.
 */
export type {
  Capability, CapabilityContext, CapabilityHandle, HookContext, ModelHooks, ResolverTable, ServiceContext, ServiceDefinition,
  ServiceName, Services, UpgradeHandler,
} from '../core/index.ts';
