/**
 * SQL fragments (ADR 016): one way to build a statement. A fragment is SQL
 * text with the values it binds kept beside it, never in it; fragments nest,
 * and `compile` numbers the placeholders once, in text order, so no code does
 * placeholder arithmetic and a seam between capabilities is a fragment, not
 * a string plus an offset.
 *
 *   sql`select ${cols} from ${sql.ident('svc_events')} where id = ${sql.value(id, 'text')}`
 *
 * Identifiers are quoted by `sql.ident` only; `sql.raw` is for constants of
 * our own code (never input). A fragment can be marked as rendering a scope
 * (`sql.scoped`): `compile(fragment, { scope })` refuses a statement that
 * never included its scope's mark (TenantScope.predicate/stamp use it).
 */

/** The casts a value may carry: Postgres never has to guess a placeholder's type. */
export type SqlCast =
  | 'text' | 'double precision' | 'boolean' | 'timestamptz' | 'jsonb' | 'int' | 'bigint'
  | 'text[]' | 'double precision[]' | 'boolean[]' | 'timestamptz[]' | 'jsonb[]' | 'int[]' | 'bigint[]';

/** A bound value: compiled to `$n` (or `$n::cast`). */
export class SqlValue {
  constructor(readonly value: unknown, readonly cast: SqlCast | undefined) {}
}

type Part = Sql | SqlValue;

/**
 * A fragment: `texts[0] parts[0] texts[1] ... texts[n]` (the shape of a
 * template literal). `mark` is the scope this fragment renders, if any.
 */
export class Sql {
  constructor(
    readonly texts: readonly string[],
    readonly parts: readonly Part[],
    readonly mark: object | null = null,
  ) {}
}

/** A compiled statement for pg-promise: sent with the extended protocol, values bound server-side. */
export interface Query {
  readonly text: string;
  readonly values: unknown[];
}

function part(item: unknown): Part {
  if (item instanceof Sql || item instanceof SqlValue) return item;
  throw new TypeError(`sql: interpolate a fragment or sql.value(...), not ${typeof item}`);
}

/** The tagged template: every interpolation is a fragment or a value. */
function tag(strings: TemplateStringsArray, ...items: unknown[]): Sql {
  for (let i = 0; i < items.length; i++) part(items[i]);
  return new Sql(strings, items as Part[]);
}

const NO_PARTS: readonly Part[] = [];
const EMPTY = new Sql([''], NO_PARTS);

/** A trusted constant of our own code, as SQL text. */
function raw(text: string): Sql {
  return new Sql([text], NO_PARTS);
}

const quote = (name: string) => `"${name.replace(/"/g, '""')}"`;

/** `"a"` or `"a"."b"`: the one place identifiers are quoted. */
function ident(...names: readonly string[]): Sql {
  return raw(names.map(quote).join('.'));
}

const ALIAS = /^[a-z_][a-z0-9_]*$/;

/** A table alias of our own code (`t`, `prior`): a lowercase word, written bare. */
function alias(name: string): Sql {
  if (!ALIAS.test(name)) throw new Error(`sql.alias: ${JSON.stringify(name)} is not a lowercase word`);
  return raw(name);
}

function value(v: unknown, cast?: SqlCast): SqlValue {
  return new SqlValue(v, cast);
}

/** `items` separated by `separator` (a constant such as `', '` or `' and '`). */
function join(items: readonly (Sql | SqlValue)[], separator: string): Sql {
  if (items.length === 0) return EMPTY;
  const texts = new Array<string>(items.length + 1).fill(separator);
  texts[0] = '';
  texts[items.length] = '';
  return new Sql(texts, items.map(part));
}

/** `fragment`, marked as the rendering of `scope` (see `compile`). */
function scoped(scope: object, fragment: Sql): Sql {
  return new Sql(fragment.texts, fragment.parts, scope);
}

/** The text of a fragment that binds no value (to hand a quoted name to a string-built helper). */
function text(fragment: Sql): string {
  const query = compile(fragment);
  if (query.values.length > 0) throw new Error('sql.text: the fragment binds values');
  return query.text;
}

export const sql = Object.assign(tag, { raw, ident, alias, value, join, scoped, text, empty: EMPTY });

export interface CompileOptions {
  /** The statement must include a fragment marked with this scope, or it is not compiled. */
  readonly scope?: object;
}

/** What one compile collects: the values in placeholder order, and whether the wanted scope was rendered. */
interface Output {
  readonly values: unknown[];
  readonly scope: object | undefined;
  scoped: boolean;
}

/** The text of `fragment`, pushing its values to `out`. */
function render(fragment: Sql, out: Output): string {
  if (fragment.mark !== null && fragment.mark === out.scope) out.scoped = true;
  const { texts, parts } = fragment;
  let text = texts[0];
  for (let i = 0; i < parts.length; i++) {
    const item = parts[i];
    if (item instanceof SqlValue) {
      const n = out.values.push(item.value);
      text += item.cast === undefined ? `$${n}` : `$${n}::${item.cast}`;
    } else {
      text += render(item, out);
    }
    text += texts[i + 1];
  }
  return text;
}

/** Text with `$1..$n` in order and the values they bind. */
export function compile(fragment: Sql, options?: CompileOptions): Query {
  const out: Output = { values: [], scope: options?.scope, scoped: false };
  const text = render(fragment, out);
  if (out.scope !== undefined && !out.scoped) throw new Error('statement built without its scope');
  if (sites !== null && !sites.has(text)) remember(text);
  return { text, values: out.values };
}

/**
 * Where each statement text was first compiled, while traced (`compileSites`).
 * Under SVC_DISTRIBUTED_CHECK from the start, so that statements compiled
 * once at module load (runtime/sql/prepare.ts) have theirs too.
 */
let sites: Map<string, string> | null = ['1', 'report'].includes(process.env.SVC_DISTRIBUTED_CHECK?.trim() ?? '') ? new Map() : null;
const SITES_KEPT = 20_000;
const SITE_FRAME = /\/(runtime|worker|test|bench)\/(?!sql\/)/;

function remember(text: string): void {
  if (sites!.size >= SITES_KEPT) sites!.clear();
  const frames = (new Error().stack ?? '').split('\n').slice(2).map((line) => line.trim());
  const ours = frames.filter((frame) => SITE_FRAME.test(frame) && !frame.includes('node_modules'));
  sites!.set(text, ours.slice(0, 3).join(' < '));
}

/** `text` (a compiled statement's text with its values formatted in) comes from where `from` was compiled. */
export function sameSite(text: string, from: string): void {
  const site = sites?.get(from);
  if (site !== undefined) sites!.set(text, site);
}

/**
 * Starts remembering where each statement text is compiled, and returns the
 * lookup: a driver hook (SVC_DISTRIBUTED_CHECK) names a statement's call site
 * this way, since the driver sends it a few ticks after the caller's stack is gone.
 */
export function compileSites(): (text: string) => string | undefined {
  sites ??= new Map();
  return (text) => sites!.get(text);
}
