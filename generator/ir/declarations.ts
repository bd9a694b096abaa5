/** Sorts the declared names into models, embedded blocks and enums; reports duplicates. */
import { diagnostic, type Diagnostic } from '../diagnostics.ts';
import type { RawAlias, RawInterface, RawSchema } from '../parse/index.ts';

export interface Declarations {
  readonly models: ReadonlyMap<string, RawInterface>;
  readonly embeds: ReadonlyMap<string, RawInterface>;
  readonly enums: ReadonlyMap<string, RawAlias & { readonly values: readonly string[] }>;
  /** Exported aliases that are not string-literal unions: usable by no field. */
  readonly otherAliases: ReadonlyMap<string, RawAlias>;
  /** The local name of `Media` imported from svc-gen/schema, or null. */
  readonly media: string | null;
}

export function collectDeclarations(raw: RawSchema, diagnostics: Diagnostic[]): Declarations {
  const seen = new Map<string, { what: string; line: number }>();
  const models = new Map<string, RawInterface>();
  const embeds = new Map<string, RawInterface>();
  const enums = new Map<string, RawAlias & { readonly values: readonly string[] }>();
  const otherAliases = new Map<string, RawAlias>();
  const claim = (name: string, what: string, at: { file: string; line: number }): boolean => {
    const first = seen.get(name);
    if (first) {
      diagnostics.push(diagnostic('DUPLICATE_DECLARATION', at, `duplicate ${what} ${name} (already declared as ${first.what} at ${at.file}:${first.line})`));
      return false;
    }
    seen.set(name, { what, line: at.line });
    return true;
  };
  for (const node of raw.interfaces) {
    const isModel = node.fields.some((f) => f.name === 'id');
    if (claim(node.name, isModel ? 'model' : 'embedded block', node.at)) (isModel ? models : embeds).set(node.name, node);
  }
  for (const alias of raw.aliases) {
    const { values } = alias;
    if (!claim(alias.name, values ? 'enum' : 'type', alias.at)) continue;
    if (values) enums.set(alias.name, { ...alias, values });
    else otherAliases.set(alias.name, alias);
  }
  const media = raw.schemaImports.Media ?? null;
  return { models, embeds, enums, otherAliases, media: media !== null && !seen.has(media) ? media : null };
}
