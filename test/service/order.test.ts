import { describe, expect, it } from 'vitest';
import { defineCapability, type Capability } from '../../runtime/core/index.ts';
import { CAPABILITIES } from '../../runtime/service/capabilities.ts';
import { orderCapabilities } from '../../runtime/service/order.ts';

const named = (name: string, provides: string[], requires: string[], optional: string[] = []): Capability =>
  ({ name, provides, requires, optional, init: async () => {} }) as unknown as Capability;

describe('capability order', () => {
  it('starts each capability after the providers of what it requires, else keeps the listed order', () => {
    const order = orderCapabilities([
      named('graphql', [], ['records']), named('records', ['records'], ['audit']), named('audit', ['audit'], []), named('edge', [], []),
    ]).map((c) => c.name);
    expect(order).toEqual(['audit', 'records', 'graphql', 'edge']);
  });

  it('refuses a cycle, naming the capabilities in it', () => {
    const list = [named('audit', ['audit'], ['auth']), named('auth', ['auth'], ['audit']), named('core', [], [])];
    expect(() => orderCapabilities(list)).toThrow('capabilities require each other in a cycle: audit -> auth -> audit');
  });

  it('refuses a required service that no capability provides, naming both', () => {
    expect(() => orderCapabilities([named('media', ['media'], ['jobs'])]))
      .toThrow('capability media requires service "jobs", which no capability provides');
  });

  it('refuses two providers of one service', () => {
    expect(() => orderCapabilities([named('a', ['jobs'], []), named('b', ['jobs'], [])]))
      .toThrow('service "jobs" is provided by both a and b');
  });

  it('orders after an optional provider when there is one, and accepts none', () => {
    const order = orderCapabilities([named('diagnostics', [], [], ['readCache']), named('cache', ['readCache'], [])]).map((c) => c.name);
    expect(order).toEqual(['cache', 'diagnostics']);
    expect(orderCapabilities([named('diagnostics', [], [], ['readCache'])]).map((c) => c.name)).toEqual(['diagnostics']);
  });

  it('orders the runtime\'s own capabilities, each after what it requires', () => {
    const order = orderCapabilities(CAPABILITIES);
    const started = new Set<string>();
    for (const capability of order) {
      for (const name of capability.requires) expect(started.has(name), `${capability.name} requires ${name}`).toBe(true);
      capability.provides.forEach((name) => started.add(name));
    }
    expect(order).toHaveLength(CAPABILITIES.length);
  });

  it('types init with what the capability declared', () => {
    const capability = defineCapability({
      name: 'probe', provides: [], requires: ['auth'],
      async init(ctx) {
        // @ts-expect-error jobs is not required, so it is not there to read
        void ctx.services.jobs;
        void ctx.services.auth;
      },
    });
    expect(capability.requires).toEqual(['auth']);
  });
});
