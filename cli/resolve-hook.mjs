// Node module hook: `svc-gen` and `svc-gen/*` resolve as a self-reference of
// this package (through its "exports"), from any folder. Run from the sources
// (a checkout), the `svc-gen-source` export condition selects the TypeScript
// files, so that the generated server and the CLI share one copy of the runtime.
//
// `svc-gen dev` imports each rebuild of a generated project as
// `server.ts?svc-dev=N`; relative imports of such a module carry the same
// `svc-dev=N`, so the rebuild's access table, resolvers and snapshot are
// loaded fresh while `svc-gen/*` (the runtime) stays the one loaded copy.
const PACKAGE_JSON = new URL('../package.json', import.meta.url).href;
const GENERATION = /[?&]svc-dev=(\d+)/;
let conditions = [];

export function initialize(data) {
  if (data?.sources) conditions = ['svc-gen-source'];
}

export async function resolve(specifier, context, nextResolve) {
  if (specifier === 'svc-gen' || specifier.startsWith('svc-gen/')) {
    return nextResolve(specifier, {
      ...context,
      parentURL: PACKAGE_JSON,
      conditions: [...conditions, ...(context.conditions ?? [])],
    });
  }
  const resolved = await nextResolve(specifier, context);
  const generation = context.parentURL ? GENERATION.exec(context.parentURL) : null;
  if (generation && /^\.{1,2}\//.test(specifier) && resolved.url.startsWith('file:') && !resolved.url.includes('/node_modules/')) {
    const url = new URL(resolved.url);
    url.searchParams.set('svc-dev', generation[1]);
    return { ...resolved, url: url.href };
  }
  return resolved;
}
