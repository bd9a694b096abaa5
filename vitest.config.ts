import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'runtime/**/*.test.ts', 'generator/**/*.test.ts'],
    exclude: ['**/node_modules/**', 'test/golden/**'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    maxWorkers: 3,
    globalSetup: ['test/helpers/global-setup.ts'],
  },
});
