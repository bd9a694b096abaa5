/**
 * After-commit hooks: `afterCommit(t, fn)` runs `fn` once the transaction `t`
 * belongs to commits, and never when it rolls back. Work that must only
 * follow committed data (waking the local feed reader, the workflow runners)
 * registers here instead of being called by hand after each transaction.
 *
 * A hook registered in a nested transaction (a savepoint) moves to the
 * enclosing one when the savepoint is released and is dropped when it rolls
 * back. Hooks are wake-ups: synchronous, run in registration order right
 * after COMMIT, before the transaction's promise settles; a hook that throws
 * does not stop the others (its error is reported as a process warning).
 * pg-promise's `transact` event (installed by `createPgp`) drives them.
 */
import type { ITaskContext } from 'pg-promise';

type Hook = () => void;

const pending = new WeakMap<ITaskContext, Hook[]>();

/** The nearest transaction at or above `ctx`, or null when none encloses it. */
function transactionOf(ctx: ITaskContext | null): ITaskContext | null {
  for (let c = ctx; c; c = c.parent) if (c.isTX) return c;
  return null;
}

/** Runs `fn` once the transaction `t` runs in commits; never if it rolls back. Outside a transaction: a bug, thrown. */
export function afterCommit(t: { readonly ctx: ITaskContext }, fn: Hook): void {
  const tx = transactionOf(t.ctx);
  if (!tx || tx.finish) throw new Error('afterCommit needs an open transaction');
  const hooks = pending.get(tx);
  if (hooks) hooks.push(fn);
  else pending.set(tx, [fn]);
}

/** pg-promise's `transact` event: a transaction started or finished. */
export function transactionEnded(event: { readonly ctx: ITaskContext }): void {
  const ctx = event.ctx;
  if (!ctx.finish) return;
  const hooks = pending.get(ctx);
  if (!hooks) return;
  pending.delete(ctx);
  if (!ctx.success) return;
  if ((ctx.txLevel ?? 0) > 0) {
    // A released savepoint: its hooks wait for the enclosing transaction's commit.
    const outer = transactionOf(ctx.parent);
    if (outer) {
      pending.set(outer, [...(pending.get(outer) ?? []), ...hooks]);
      return;
    }
  }
  for (const hook of hooks) {
    try {
      hook();
    } catch (error) {
      process.emitWarning(error instanceof Error ? error : new Error(String(error)), 'AfterCommitHookWarning');
    }
  }
}
