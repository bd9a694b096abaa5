/**
 * Statements that are not single-shard today and are allowed to stay so
 * until the change ADR 025 names lands. Each waiver names its reason; the
 * list shrinks as the layout (composite keys, the tenant sentinel) and the
 * per-tenant feed cursor arrive. A waiver matches one class of statement,
 * never a whole table.
 */
import type { Problem } from './analyze.ts';

interface Waiver {
  readonly reason: string;
  readonly kinds: readonly Problem['kind'][];
  /** The statement's class, by text (the runtime builds these from constants). */
  readonly match: RegExp;
}

const WAIVERS: readonly Waiver[] = [];

/** The reason a violation is allowed for now, or null. */
export function waiverOf(problem: Problem, text: string): string | null {
  for (const w of WAIVERS) if (w.kinds.includes(problem.kind) && w.match.test(text)) return w.reason;
  return null;
}
