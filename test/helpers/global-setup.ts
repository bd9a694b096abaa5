import { dropStaleTestDatabases } from './db.ts';
import { dropStaleFixtureBuilds } from './fixtures.ts';
import { dropStaleTemplates } from './template.ts';

export default async function setup(): Promise<void> {
  await dropStaleTestDatabases();
  // Several checkouts testing at once (git worktrees) keep each other's templates.
  if (process.env.SVC_TEST_KEEP_TEMPLATES !== '1') await dropStaleTemplates();
  dropStaleFixtureBuilds();
}
