/**
 * `include`: embeds related records, one query per relation for the whole
 * page (never one per row). Related rows obey the same tenant scope and
 * soft-delete rule, and the caller must be allowed to read their model.
 */
import type { Caller } from './access.ts';
import type { RecordsDeps, Runner } from './deps.ts';
import { invalid } from './errors.ts';
import type { ModelInfo, RelationInfo } from './model.ts';
import type { Row } from './row.ts';
import { scopedQuery } from './sql.ts';
import { sql } from '../sql/index.ts';

interface Plan {
  readonly relation: RelationInfo;
  readonly target: ModelInfo;
}

/** Checks the names before any query runs, so a bad include costs nothing. */
export function planIncludes(deps: RecordsDeps, info: ModelInfo, include: unknown, caller: Caller): Plan[] {
  if (include === null || include === undefined) return [];
  if (!Array.isArray(include)) throw invalid('include', 'include must be a list of relation names');
  const seen = new Set<string>();
  return include.flatMap((name) => {
    const relation = typeof name === 'string' ? info.relations.get(name) : undefined;
    if (!relation) throw invalid('include', `${String(name)} is not a relation of ${info.name}`);
    if (seen.has(relation.name)) return [];
    seen.add(relation.name);
    return [{ relation, target: deps.model(relation.target, 'read', caller) }];
  });
}

function related(deps: RecordsDeps, runner: Runner, plan: Plan, keyColumn: string, keys: string[], caller: Caller) {
  const statement = sql`select ${plan.target.selectList} from ${plan.target.table} t
    where t.${sql.ident(keyColumn)} = any(${sql.value(keys, 'text[]')}) and t."deleted_at" is null and ${caller.scope.predicate()}
    order by t."id"`;
  return deps.rows<Row>(runner, scopedQuery(caller.scope, statement));
}

async function loadOne(deps: RecordsDeps, runner: Runner, rows: Row[], plan: Plan, caller: Caller): Promise<void> {
  const { relation } = plan;
  if (relation.kind === 'belongsTo') {
    const keys = [...new Set(rows.map((r) => r[relation.foreignKeyName]).filter((v): v is string => typeof v === 'string'))];
    const found = keys.length === 0 ? [] : await related(deps, runner, plan, 'id', keys, caller);
    const byId = new Map(found.map((r) => [r.id as string, r]));
    for (const row of rows) row[relation.name] = byId.get(row[relation.foreignKeyName] as string) ?? null;
    return;
  }
  const found = await related(deps, runner, plan, relation.foreignKey, rows.map((r) => r.id as string), caller);
  const groups = new Map<unknown, Row[]>();
  for (const r of found) {
    const key = r[relation.foreignKeyName];
    let group = groups.get(key);
    if (!group) groups.set(key, (group = []));
    group.push(r);
  }
  for (const row of rows) row[relation.name] = groups.get(row.id) ?? [];
}

/** Sequential on purpose: one connection at a time (embedded mode has only one). */
export async function loadIncludes(deps: RecordsDeps, runner: Runner, rows: Row[], plans: Plan[], caller: Caller) {
  if (rows.length === 0) return;
  for (const plan of plans) await loadOne(deps, runner, rows, plan, caller);
}
