/**
 * Start order from declarations: a capability starts after the providers of
 * everything it requires. Among capabilities free to start, the listed order
 * holds (so the order is stable and reviewable in capabilities.ts). A missing
 * provider, two providers of one service, or a cycle is refused by name.
 */
import type { Capability, ServiceName } from '../core/index.ts';

export class CapabilityOrderError extends Error {}

export function orderCapabilities(capabilities: readonly Capability[]): Capability[] {
  const providers = providersOf(capabilities);
  const waitingOn = new Map(capabilities.map((c) => [c, dependenciesOf(providers, c)]));
  const ordered: Capability[] = [];
  while (waitingOn.size > 0) {
    const next = [...waitingOn].find(([, deps]) => [...deps].every((dep) => !waitingOn.has(dep)));
    if (!next) throw new CapabilityOrderError(`capabilities require each other in a cycle: ${describeCycle(waitingOn)}`);
    ordered.push(next[0]);
    waitingOn.delete(next[0]);
  }
  return ordered;
}

function providersOf(capabilities: readonly Capability[]): Map<ServiceName, Capability> {
  const providers = new Map<ServiceName, Capability>();
  for (const capability of capabilities) {
    for (const name of capability.provides) {
      const other = providers.get(name);
      if (other) throw new CapabilityOrderError(`service "${name}" is provided by both ${other.name} and ${capability.name}`);
      providers.set(name, capability);
    }
  }
  return providers;
}

function dependenciesOf(providers: Map<ServiceName, Capability>, capability: Capability): Set<Capability> {
  const optional = (capability.optional ?? []).flatMap((name) => providers.get(name) ?? []);
  return new Set([...capability.requires.map((name) => providerOf(providers, capability, name)), ...optional]);
}

function providerOf(providers: Map<ServiceName, Capability>, capability: Capability, name: ServiceName): Capability {
  const provider = providers.get(name);
  if (!provider) throw new CapabilityOrderError(`capability ${capability.name} requires service "${name}", which no capability provides`);
  if (provider === capability) throw new CapabilityOrderError(`capability ${capability.name} requires service "${name}", which it provides itself`);
  return provider;
}

/** One cycle among the capabilities left waiting, as `a -> b -> a` (each waits on the next). */
function describeCycle(waitingOn: Map<Capability, Set<Capability>>): string {
  const path: Capability[] = [];
  let [current] = waitingOn.keys();
  while (!path.includes(current)) {
    path.push(current);
    current = [...waitingOn.get(current)!].find((dep) => waitingOn.has(dep))!;
  }
  return [...path.slice(path.indexOf(current)), current].map((c) => c.name).join(' -> ');
}
