/**
 * Longest files first. Vitest orders files by the durations it cached on the
 * last run, but a fresh clone (CI) has no cache and falls back to file size:
 * the package test (npm pack, two installs, a build and a start: about 4 of
 * the suite's 8 minutes) then starts late and alone at the end. Files named
 * here start first, in this order; the rest keep vitest's order.
 */
import { BaseSequencer, type TestSpecification } from 'vitest/node';

const FIRST = [
  'test/package/pack.integration.test.ts',
  'test/cli/start.integration.test.ts',
  'test/cli/build.test.ts',
  'test/cli/dev.integration.test.ts',
  'test/generator/client.test.ts',
  'test/readme/readme.integration.test.ts',
  'test/graphql/ide.integration.test.ts',
  'test/openapi/pages.integration.test.ts',
];

const rank = (spec: TestSpecification): number => {
  const index = FIRST.findIndex((path) => spec.moduleId.endsWith(path));
  return index === -1 ? FIRST.length : index;
};

export default class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    // Array.prototype.sort is stable: files of equal rank keep vitest's order.
    return [...sorted].sort((a, b) => rank(a) - rank(b));
  }
}
