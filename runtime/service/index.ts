export { defineService, startService, runService, migrationSets, type StartOptions, type RunningService } from './start.ts';
export type {
  Capability, CapabilityHandle, HookContext, ModelHooks, ResolverTable, ServiceContext, ServiceDefinition,
  Services, UpgradeHandler,
} from './types.ts';
