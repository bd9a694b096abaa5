import { createRequire } from 'node:module';
import { defineConfig } from 'vitest/config';
import LongestFirst from './test/helpers/sequencer.ts';

const require = createRequire(import.meta.url);

export default defineConfig({
  resolve: {
    // One graphql: packages loaded by Node (graphql-ws, @graphql-tools) get graphql's
    // `main` (CommonJS); Vite would otherwise give our sources its `module` (index.mjs),
    // a second copy whose GraphQLError instances graphql-ws does not recognise.
    alias: [{ find: /^graphql$/, replacement: require.resolve('graphql') }],
  },
  test: {
    include: ['test/**/*.test.ts', 'runtime/**/*.test.ts', 'generator/**/*.test.ts'],
    exclude: ['**/node_modules/**', 'test/golden/**'],
    // ADR 025 decision 5: every statement the runtime sends is checked to be single-shard on
    // Citus, refused when it is not (runtime/db/distributed). On for `npm test` and .ci/run;
    // SVC_DISTRIBUTED_CHECK=0 (or report, with SVC_DISTRIBUTED_CHECK_REPORT) in the environment wins.
    env: { SVC_DISTRIBUTED_CHECK: process.env.SVC_DISTRIBUTED_CHECK ?? '1' },
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    maxWorkers: 3,
    // A worker process runs its test files one after another with one module registry:
    // the runtime, graphql and pg are imported once per process, not once per file.
    isolate: false,
    globalSetup: ['test/helpers/global-setup.ts'],
    sequence: { sequencer: LongestFirst },
    // Transformed modules kept on disk (keyed by content and config): each of the suite's
    // test processes would otherwise transform the runtime's modules again (~3 s each on 2 cores).
    experimental: { fsModuleCache: true },
  },
});
