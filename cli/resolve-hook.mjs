// Node module hook: `svc-gen` and `svc-gen/*` resolve as a self-reference of
// this package (through its "exports"), from any folder.
const PACKAGE_JSON = new URL('../package.json', import.meta.url).href;

export async function resolve(specifier, context, nextResolve) {
  if (specifier === 'svc-gen' || specifier.startsWith('svc-gen/')) {
    return nextResolve(specifier, { ...context, parentURL: PACKAGE_JSON });
  }
  return nextResolve(specifier, context);
}
