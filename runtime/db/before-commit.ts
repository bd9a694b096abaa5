/**
 * Before-commit hooks: `beforeCommit(t, fn)` runs `fn(top)` in the outermost
 * transaction `t` belongs to, after its callback resolved and before its
 * COMMIT: the transaction's last statements. A hook registered twice for
 * the same transaction (same `key`) runs once. Hooks run in registration
 * order; one that throws fails the transaction (it rolls back), as any
 * statement of the callback would. The per-tenant feed position (ADR 025
 * decision 4) is stamped here, once per transaction, so that the head row
 * it locks is held from the last statement to the commit only.
 *
 * pg-promise has no such event: `installBeforeCommit` (the `extend` option
 * of `createPgp`) wraps the callback of every `tx` so that, for the
 * outermost transaction, its pending hooks run when the callback resolved.
 */
import type { ITaskContext } from 'pg-promise';
import type { Tx } from './types.ts';

type Hook = (top: Tx) => Promise<void>;

interface Registered {
  readonly state: unknown;
  readonly hook: Hook;
}

const pending = new WeakMap<ITaskContext, Map<unknown, Registered>>();

/** The outermost transaction at or above `ctx`, or null when none encloses it. */
function outermost(ctx: ITaskContext | null | undefined): ITaskContext | null {
  let found: ITaskContext | null = null;
  for (let c = ctx ?? null; c; c = c.parent) if (c.isTX) found = c;
  return found;
}

/**
 * Runs `fn(top, state)` as the last work of the transaction `t` runs in (the
 * outermost one, when `t` is a savepoint), once per `key` however often it is
 * registered; `state` is made by `init` at the first registration and
 * returned to every one (the hook's work list). Returns null, registering
 * nothing, when no transaction encloses `t` (an autocommit statement): the
 * caller then does the work at once.
 */
export function beforeCommit<S>(t: { readonly ctx?: ITaskContext }, key: unknown, init: () => S, fn: (top: Tx, state: S) => Promise<void>): S | null {
  const tx = outermost(t.ctx);
  if (!tx || tx.finish) return null;
  let hooks = pending.get(tx);
  if (!hooks) pending.set(tx, (hooks = new Map()));
  const known = hooks.get(key);
  if (known) return known.state as S;
  const state = init();
  hooks.set(key, { state, hook: (top) => fn(top, state) });
  return state;
}

async function runHooks(t: Tx): Promise<void> {
  const ctx = t.ctx;
  if (!ctx?.isTX || (ctx.txLevel ?? 0) > 0) return; // a savepoint: its hooks wait for the outermost commit
  for (;;) {
    const hooks = pending.get(ctx);
    if (!hooks || hooks.size === 0) return;
    pending.delete(ctx);
    for (const { hook } of hooks.values()) await hook(t);
  }
}

/** pg-promise's `extend` event: `tx` (and `txIf`, when it opens one) run the pending hooks before COMMIT. */
export function installBeforeCommit(obj: Record<string, unknown>): void {
  for (const method of ['tx', 'txIf'] as const) {
    const original = obj[method] as ((...args: unknown[]) => Promise<unknown>) | undefined;
    if (typeof original !== 'function') continue;
    obj[method] = function wrapped(this: unknown, ...args: unknown[]) {
      const last = args.length - 1;
      const cb = args[last];
      if (typeof cb === 'function') {
        args[last] = function withHooks(this: Tx, t: Tx) {
          return Promise.resolve(cb.call(t, t)).then(async (result: unknown) => {
            await runHooks(t);
            return result;
          });
        };
      }
      return original.apply(this, args);
    };
  }
}
