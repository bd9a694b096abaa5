/**
 * Is a built-in projection ready to be read? A projection being built (new,
 * or its definition changed: build.ts) answers its reads with 503
 * UNAVAILABLE and its progress, instead of holding the start back. Once
 * ready, an instance remembers it; until then each read looks its state row
 * up by primary key (another instance may be the one finishing the build).
 */
import type { Db } from '../db/index.ts';
import { SafeError } from '../http/errors.ts';
import { definitionOf, readStates, stateOf } from './build.ts';
import type { ProjectionState, TableProjection } from './types.ts';

/** What a client is told to wait before it asks again. */
const RETRY_AFTER_SECS = 5;

export interface Readiness {
  states(): Promise<ReadonlyMap<string, ProjectionState>>;
  assertReady(model: string): Promise<void>;
  markReady(name: string): void;
}

const READY: ProjectionState = { status: 'ready', build: null };

export function readiness(db: Db, tables: readonly TableProjection[]): Readiness {
  const ready = new Set<string>();
  const byModel = new Map(tables.map((p) => [p.model, p]));
  const states = async (wanted: readonly TableProjection[]) => {
    const unknown = wanted.filter((p) => !ready.has(p.name));
    const rows = unknown.length === 0 ? new Map() : await readStates(db, unknown.map((p) => p.name));
    const out = new Map<string, ProjectionState>();
    for (const p of wanted) {
      const state = ready.has(p.name) ? READY : stateOf(rows.get(p.name) ?? null, definitionOf(p));
      if (state.status === 'ready') ready.add(p.name);
      out.set(p.name, state);
    }
    return out;
  };
  return {
    states: () => states(tables),
    async assertReady(model) {
      const p = byModel.get(model);
      if (!p || ready.has(p.name)) return;
      const state = (await states([p])).get(p.name)!;
      if (state.status === 'ready') return;
      throw notReady(p, state);
    },
    markReady: (name) => void ready.add(name),
  };
}

function notReady(p: TableProjection, state: ProjectionState): SafeError {
  const build = state.build!;
  const progress = build.estimatedTotal ? ` (about ${Math.min(99, Math.floor((100 * build.done) / Math.max(1, build.estimatedTotal)))}% done)` : '';
  return new SafeError(503, 'UNAVAILABLE', `projection ${p.name} is not ready: it is being built${progress}; try again shortly`, {
    headers: { 'Retry-After': String(RETRY_AFTER_SECS) },
    body: { projection: p.name, status: state.status, build },
  });
}
