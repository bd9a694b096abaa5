export {
  defineService, startService, runService, mountService, warnAboutConfig, migrationSets,
  type StartOptions, type RunningService, type MountedService, type MountOptions,
} from './start.ts';
export type {
  Capability, CapabilityHandle, HookContext, ModelHooks, ResolverTable, ServiceContext, ServiceDefinition,
  Services, UpgradeHandler,
} from './types.ts';
