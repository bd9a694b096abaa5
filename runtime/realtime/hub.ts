/**
 * Local fan-out: which connections of this instance listen to which
 * (tenant, channel) scope. Knows nothing of other instances or Postgres.
 */
import type { Session } from './session.ts';

/** Two tenants' `room:1` are two different scopes. */
export function scopeKey(tenant: string | null, channel: string): string {
  return JSON.stringify([tenant, channel]);
}

export class Hub {
  readonly sessions = new Set<Session>();
  private readonly scopes = new Map<string, Set<Session>>();

  add(scope: string, session: Session): void {
    let set = this.scopes.get(scope);
    if (!set) this.scopes.set(scope, (set = new Set()));
    set.add(session);
  }

  remove(scope: string, session: Session): void {
    const set = this.scopes.get(scope);
    if (!set?.delete(session)) return;
    if (set.size === 0) this.scopes.delete(scope);
  }

  /** (tenant, channel) scopes with at least one local subscriber. */
  get scopeCount(): number {
    return this.scopes.size;
  }

  /** Sends `frame` to every local subscriber of `scope` except `except` (no self-echo). */
  deliver(scope: string, frame: string, except?: Session): void {
    const set = this.scopes.get(scope);
    if (!set) return;
    const data = Buffer.from(frame);
    for (const session of set) if (session !== except) session.send(data);
  }
}

/** Runs the tasks of one key one after another; different keys run concurrently. */
export class KeyedQueue {
  private readonly tails = new Map<string, Promise<unknown>>();

  run<T>(key: string, task: () => Promise<T>): Promise<T> {
    const next = (this.tails.get(key) ?? Promise.resolve()).then(task);
    const tail = next.catch(() => undefined);
    this.tails.set(key, tail);
    void tail.then(() => {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    });
    return next;
  }
}
