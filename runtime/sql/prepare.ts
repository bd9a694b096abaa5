/**
 * Fixed statements on a hot path (the jobs' lease and complete, the feed's
 * pages, the projections' refresh) run as named prepared statements: they are
 * written with runtime/sql like any other statement, but compiled ONCE, at
 * module load (or when their shape is known). A per-call value is
 * a named slot (`arg('queues', 'text[]')`); `values(args)` lists a call's
 * values in the order `compile` numbered the placeholders, so no code
 * numbers one. A value that is not a slot is a constant of the statement.
 */
import { compile, sql, type Sql, type SqlCast, type SqlValue } from './index.ts';

class Slot {
  constructor(readonly name: string) {}
}

export interface Prepared<A> {
  readonly text: string;
  /** The statement's values for one call, in placeholder order. */
  values(args: A): unknown[];
}

/** Compiles `build(arg)` once; `arg(name, cast)` is the placeholder of the call's `args[name]`. */
export function prepare<A extends object>(
  build: (arg: (name: keyof A & string, cast?: SqlCast) => SqlValue) => Sql,
): Prepared<A> {
  const query = compile(build((name, cast) => sql.value(new Slot(name), cast)));
  const slots = query.values;
  return {
    text: query.text,
    values: (args) => slots.map((slot) => (slot instanceof Slot ? (args as Record<string, unknown>)[slot.name] : slot)),
  };
}
