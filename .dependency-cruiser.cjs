/**
 * Import rules checked by `npm run depcheck` (part of `npm test`); the
 * decisions are in docs/adr/017-capability-wiring.md.
 *
 * Parsed with swc: dependency-cruiser 17 reads TypeScript through the
 * `typescript` package's JS API, which TypeScript 7 (the native compiler this
 * repository type-checks with) does not ship. swc keeps `import type`, so
 * type-only imports count as dependencies (tsPreCompilationDeps).
 */
const CAPABILITIES = [
  'actions', 'audit', 'auth', 'console', 'diagnostics', 'events', 'feed', 'graphql', 'jobs', 'media', 'metrics',
  'openapi', 'projections', 'public', 'realtime', 'records', 'workflows',
];
const CAPABILITY = `^runtime/(${CAPABILITIES.join('|')})/`;

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'No module reaches itself through its imports, type-only imports included.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'core-below-capabilities',
      comment: 'runtime/core holds the seam types every capability needs: it imports no capability.',
      severity: 'error',
      from: { path: '^runtime/core/' },
      to: { path: CAPABILITY },
    },
    {
      name: 'capabilities-below-service',
      comment: 'A capability never imports the layer that composes it (runtime/service).',
      severity: 'error',
      from: { path: CAPABILITY },
      to: { path: '^runtime/service/' },
    },
    {
      name: 'core-below-service',
      comment: 'Nor does the seam.',
      severity: 'error',
      from: { path: '^runtime/core/' },
      to: { path: '^runtime/service/' },
    },
    {
      name: 'runtime-not-generator',
      comment: 'The runtime boots from the snapshot alone; it never imports the generator.',
      severity: 'error',
      from: { path: '^runtime/' },
      to: { path: '^generator/' },
    },
    {
      name: 'worker-sdk-standalone',
      comment: 'The worker SDK (svc-gen/worker) runs in other processes: it imports nothing of the runtime.',
      severity: 'error',
      from: { path: '^worker/' },
      to: { path: '^runtime/' },
    },
  ],
  options: {
    parser: 'swc',
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(node_modules|dist|tmp|test/golden|fixtures)/' },
  },
};
