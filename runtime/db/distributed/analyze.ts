/**
 * Which tenants one SQL statement touches, read from Postgres's own parse
 * tree (libpg-query): every reference to a distributed table (tables.ts) must
 * be pinned to a tenant by its query level, as Citus's router planner needs
 * for a single-shard statement:
 *
 * - `x.tenant_id = <value>`, `= any(<array>)` or `in (...)` in a WHERE or
 *   JOIN ... ON conjunct; the tenant-less (global) scope is `tenant_id = ''`
 *   (the sentinel of layout 3, ADR 025 decision 2) or `tenant_id is null` (a
 *   table not converted yet): one scope either way;
 * - `a.tenant_id = b.tenant_id` joins two references into one class (co-located);
 * - an INSERT's `tenant_id` column, from VALUES or from a pinned source of
 *   its SELECT (a CTE such as `created` carries the pin of its own insert).
 *
 * The result is the set of tenant values the statement touches and what is
 * wrong with it; values come from the bound parameters or from literals.
 */
import { placement } from './tables.ts';

/**
 * The tenant-less (global) scope: `''` on the tables of layout 3 (ADR 025
 * decision 2: TenantScope.GLOBAL stamps and pins it) and in projections,
 * `null` on a table not converted yet. Both read as this one value, so a
 * statement or a transaction that pins it both ways touches one tenant.
 */
export const NO_TENANT = null;
/** A tenant that is pinned by an expression whose value is not known here (a subquery, a function). */
export const SOME_TENANT = Symbol('some tenant');
export type Tenant = string | null | typeof SOME_TENANT;

export interface Problem {
  readonly kind: 'unpinned' | 'two-tenants' | 'moves-tenant';
  readonly table: string;
  readonly message: string;
}

export interface Analysis {
  readonly tenants: ReadonlySet<Tenant>;
  readonly problems: readonly Problem[];
  /** Distributed tables the statement references. */
  readonly tables: readonly string[];
}

/*
 * libpg-query's parse tree is plain JSON whose node kinds are object keys
 * (`{SelectStmt: {...}}`): walked generically, so typed as `any` here only.
 */
type Ast = any;

/** One reference in a FROM list (a table, a CTE, a subquery), with its union-find slot. */
interface Source {
  readonly name: string;
  readonly distributed: boolean;
  readonly slot: number;
}

class Level {
  readonly sources = new Map<string, Source>();
  readonly ctes = new Map<string, number>();
  /** The slot of the level's own rows: its INSERT/UPDATE/DELETE target or first FROM item. */
  output: number | null = null;
  constructor(readonly parent: Level | null) {}

  cte(name: string): number | undefined {
    return this.ctes.get(name) ?? this.parent?.cte(name);
  }

  source(alias: string): Source | undefined {
    return this.sources.get(alias) ?? this.parent?.source(alias);
  }

  /** The one source an unqualified `tenant_id` can mean: the first one that has rows of a tenant. */
  defaultSource(): Source | undefined {
    for (const s of this.sources.values()) if (s.distributed || s.name === '') return s;
    const first = this.sources.values().next().value;
    return first ?? this.parent?.defaultSource();
  }
}

const TENANT_COLUMN = 'tenant_id';

/**
 * A bound or literal tenant value. `''` is the sentinel of layout 3 (ADR 025)
 * and null how a table not converted yet stores the global scope: both are
 * the one tenant-less scope.
 */
function tenantOf(v: unknown): Tenant {
  return v === null || v === undefined || v === '' ? NO_TENANT : String(v);
}

class Analyzer {
  private readonly parents: number[] = [];
  private readonly pins = new Map<number, Set<Tenant>>();
  private readonly refs: Source[] = [];
  private readonly problems: Problem[] = [];

  constructor(private readonly values: readonly unknown[] | undefined) {}

  private slot(): number {
    this.parents.push(this.parents.length);
    return this.parents.length - 1;
  }

  private find(slot: number): number {
    while (this.parents[slot] !== slot) slot = this.parents[slot] = this.parents[this.parents[slot]];
    return slot;
  }

  private union(a: number, b: number): void {
    const [ra, rb] = [this.find(a), this.find(b)];
    if (ra !== rb) this.parents[ra] = rb;
  }

  private pin(slot: number, tenants: Iterable<Tenant>): void {
    let set = this.pins.get(slot);
    if (!set) this.pins.set(slot, (set = new Set()));
    for (const t of tenants) set.add(t);
  }

  /** The tenants pinned on `slot`'s class. */
  pinned(slot: number): Set<Tenant> {
    const root = this.find(slot);
    const out = new Set<Tenant>();
    for (const [s, set] of this.pins) if (this.find(s) === root) for (const t of set) out.add(t);
    return out;
  }

  statement(node: Ast): void {
    const [kind, body] = Object.entries(node)[0] as [string, Ast];
    if (kind === 'SelectStmt' || kind === 'InsertStmt' || kind === 'UpdateStmt' || kind === 'DeleteStmt') {
      this.query(kind, body, null);
    }
    // Anything else (DDL, SET, LISTEN, transaction control) touches no row of a tenant.
  }

  /** One query level; returns it so a caller can read its output's pin. */
  private query(kind: string, body: Ast, parent: Level | null): Level {
    const level = new Level(parent);
    for (const cte of body.withClause?.ctes ?? []) {
      const c = cte.CommonTableExpr;
      const [innerKind, innerBody] = Object.entries(c.ctequery)[0] as [string, Ast];
      const inner = this.query(innerKind, innerBody, level);
      const out = this.slot();
      if (inner.output !== null) this.union(out, inner.output);
      level.ctes.set(c.ctename, out);
    }
    if (kind === 'SelectStmt') this.select(body, level);
    else if (kind === 'InsertStmt') this.insert(body, level);
    else if (kind === 'UpdateStmt') this.update(body, level);
    else this.remove(body, level);
    this.sublinks(body.returningClause, level);
    return level;
  }

  private select(body: Ast, level: Level): void {
    if (body.op && body.op !== 'SETOP_NONE') {
      // UNION/INTERSECT/EXCEPT: each arm is a query of its own.
      const left = this.query('SelectStmt', body.larg, level);
      this.query('SelectStmt', body.rarg, level);
      level.output = left.output;
      return;
    }
    for (const item of body.fromClause ?? []) this.from(item, level);
    this.quals(body.whereClause, level);
    this.sublinks(body.targetList, level);
    this.sublinks(body.havingClause, level);
    for (const row of body.valuesLists ?? []) this.sublinks(row, level);
  }

  private insert(body: Ast, level: Level): void {
    const target = this.table(body.relation, level);
    level.output = target.slot;
    const columns: string[] = (body.cols ?? []).map((c: Ast) => c.ResTarget.name);
    const at = columns.indexOf(TENANT_COLUMN);
    const select = body.selectStmt?.SelectStmt;
    if (!target.distributed) {
      if (select) this.query('SelectStmt', select, level);
      return;
    }
    if (at < 0) {
      this.problems.push({ kind: 'unpinned', table: target.name, message: `insert into ${target.name} writes no tenant_id` });
      if (select) this.query('SelectStmt', select, level);
      return;
    }
    if (select?.valuesLists) {
      for (const row of select.valuesLists) this.pin(target.slot, [this.value(row.List.items[at])]);
      this.select(select, level);
      return;
    }
    const source = this.query('SelectStmt', select, level);
    const expr = select.targetList?.[at]?.ResTarget?.val;
    this.pinFrom(target.slot, expr, source);
  }

  /** Pins `slot` with what the expression `expr` of `level` is: a value, or a pinned column. */
  private pinFrom(slot: number, expr: Ast, level: Level): void {
    const column = this.tenantRef(expr, level);
    if (column) this.union(slot, column.slot);
    else this.pin(slot, [this.value(expr)]);
  }

  private update(body: Ast, level: Level): void {
    const target = this.table(body.relation, level);
    level.output = target.slot;
    for (const item of body.fromClause ?? []) this.from(item, level);
    this.quals(body.whereClause, level);
    for (const t of body.targetList ?? []) {
      if (target.distributed && t.ResTarget?.name === TENANT_COLUMN) {
        this.problems.push({ kind: 'moves-tenant', table: target.name, message: `update of ${target.name} sets tenant_id (a distribution column never changes)` });
      }
      this.sublinks(t, level);
    }
  }

  private remove(body: Ast, level: Level): void {
    const target = this.table(body.relation, level);
    level.output = target.slot;
    for (const item of body.usingClause ?? []) this.from(item, level);
    this.quals(body.whereClause, level);
  }

  /** A FROM item: a table or CTE, a join of two items, a subquery. */
  private from(item: Ast, level: Level): void {
    if (item.RangeVar) {
      const source = this.table(item.RangeVar, level);
      level.output ??= source.slot;
    } else if (item.JoinExpr) {
      this.from(item.JoinExpr.larg, level);
      this.from(item.JoinExpr.rarg, level);
      this.quals(item.JoinExpr.quals, level);
    } else if (item.RangeSubselect) {
      const sub = item.RangeSubselect;
      const inner = this.query('SelectStmt', sub.subquery.SelectStmt, level);
      const slot = this.slot();
      if (inner.output !== null) this.union(slot, inner.output);
      const alias = sub.alias?.aliasname ?? '';
      this.pinValues(slot, sub);
      level.sources.set(alias, { name: alias, distributed: false, slot });
      level.output ??= slot;
    } else {
      // A function in FROM (unnest, generate_series, jsonb_to_recordset): rows of no table.
      this.sublinks(item, level);
    }
  }

  /** `(values (...), ...) as v(..., tenant_id, ...)`: the rows' tenants pin the subquery's slot. */
  private pinValues(slot: number, sub: Ast): void {
    const rows: Ast[] | undefined = sub.subquery.SelectStmt.valuesLists;
    const at = (sub.alias?.colnames ?? []).findIndex((c: Ast) => c.String?.sval === TENANT_COLUMN);
    if (rows && at >= 0) this.pin(slot, rows.map((row) => this.value(row.List.items[at])));
  }

  private table(range: Ast, level: Level): Source {
    const name: string = range.relname;
    const alias: string = range.alias?.aliasname ?? name;
    const cte = range.schemaname ? undefined : level.cte(name);
    let source: Source;
    if (cte !== undefined) {
      source = { name: '', distributed: false, slot: this.slot() };
      this.union(source.slot, cte);
    } else {
      source = { name, distributed: placement(name, range.schemaname) === 'distributed', slot: this.slot() };
      if (source.distributed) this.refs.push(source);
    }
    level.sources.set(alias, source);
    return source;
  }

  /** A WHERE or ON clause: its top-level conjuncts pin tenants; anything under OR/NOT only walks subqueries. */
  private quals(node: Ast, level: Level): void {
    if (!node) return;
    if (node.BoolExpr?.boolop === 'AND_EXPR') {
      for (const arg of node.BoolExpr.args) this.quals(arg, level);
      return;
    }
    this.conjunct(node, level);
    this.sublinks(node, level);
  }

  private conjunct(node: Ast, level: Level): void {
    if (node.NullTest?.nulltesttype === 'IS_NULL') {
      const column = this.tenantRef(node.NullTest.arg, level);
      if (column) this.pin(column.slot, [NO_TENANT]);
      return;
    }
    const e = node.A_Expr;
    if (!e) return;
    const op = e.name?.[0]?.String?.sval;
    const left = this.tenantRef(e.lexpr, level);
    const right = this.tenantRef(e.rexpr, level);
    if ((e.kind === 'AEXPR_OP' && op === '=') || e.kind === 'AEXPR_NOT_DISTINCT') {
      if (left && right) this.union(left.slot, right.slot);
      else if (left) this.pin(left.slot, [this.value(e.rexpr)]);
      else if (right) this.pin(right.slot, [this.value(e.lexpr)]);
    } else if (left && e.kind === 'AEXPR_OP_ANY' && op === '=') {
      this.pin(left.slot, this.arrayValues(e.rexpr));
    } else if (left && e.kind === 'AEXPR_IN' && op === '=') {
      this.pin(left.slot, (e.rexpr.List?.items ?? [e.rexpr]).map((v: Ast) => this.value(v)));
    }
  }

  /** The source a `tenant_id` column reference belongs to, or undefined for any other expression. */
  private tenantRef(expr: Ast, level: Level): Source | undefined {
    const node = expr?.TypeCast ? expr.TypeCast.arg : expr;
    const fields: Ast[] | undefined = node?.ColumnRef?.fields;
    if (!fields || fields[fields.length - 1]?.String?.sval !== TENANT_COLUMN) return undefined;
    if (fields.length === 1) return level.defaultSource();
    return level.source(fields[fields.length - 2].String.sval);
  }

  /** A literal or bound value; anything else (a subquery, a function) pins some tenant not known here. */
  private value(expr: Ast): Tenant {
    const node = expr?.TypeCast ? expr.TypeCast.arg : expr;
    if (node?.A_Const) {
      const c = node.A_Const;
      if (c.isnull) return NO_TENANT;
      // The parse tree omits an empty string's value: `''` is `{sval: {}}`.
      if (c.sval) return tenantOf(c.sval.sval ?? '');
      return tenantOf(String(c.ival?.ival ?? 0));
    }
    if (node?.ParamRef && this.values) return tenantOf(this.values[node.ParamRef.number - 1]);
    return SOME_TENANT;
  }

  /** `= any($n)`: every element of the bound array. */
  private arrayValues(expr: Ast): Tenant[] {
    const node = expr?.TypeCast ? expr.TypeCast.arg : expr;
    if (node?.ParamRef && this.values) {
      const v = this.values[node.ParamRef.number - 1];
      if (Array.isArray(v)) return v.map(tenantOf);
    }
    if (node?.A_ArrayExpr) return (node.A_ArrayExpr.elements ?? []).map((x: Ast) => this.value(x));
    return [SOME_TENANT];
  }

  /** Subqueries anywhere under `node` (EXISTS, IN (select ...), scalar subqueries): each a level of its own. */
  private sublinks(node: Ast, level: Level): void {
    if (node === null || typeof node !== 'object') return;
    if (Array.isArray(node)) {
      for (const item of node) this.sublinks(item, level);
      return;
    }
    if (node.SubLink) {
      this.sublinks(node.SubLink.testexpr, level);
      this.query('SelectStmt', node.SubLink.subselect.SelectStmt, level);
      return;
    }
    for (const value of Object.values(node)) this.sublinks(value, level);
  }

  result(): Analysis {
    const tenants = new Set<Tenant>();
    const tables = new Set<string>();
    for (const ref of this.refs) {
      tables.add(ref.name);
      const pinned = this.pinned(ref.slot);
      if (pinned.size === 0) {
        this.problems.push({ kind: 'unpinned', table: ref.name, message: `${ref.name} is read or written without a tenant_id filter (every shard)` });
      }
      for (const t of pinned) tenants.add(t);
    }
    const known = [...tenants].filter((t) => t !== SOME_TENANT);
    if (known.length > 1) {
      this.problems.push({ kind: 'two-tenants', table: [...tables].join(', '), message: `one statement touches ${known.length} tenants` });
    }
    const problems = [...new Map(this.problems.map((p) => [`${p.kind} ${p.table}`, p])).values()];
    return { tenants, problems, tables: [...tables] };
  }
}

/** Analyses a parsed statement (one `stmts[i].stmt` of libpg-query) with its bound values. */
export function analyzeStatement(stmt: Ast, values: readonly unknown[] | undefined): Analysis {
  const analyzer = new Analyzer(values);
  analyzer.statement(stmt);
  return analyzer.result();
}
