import { dropStaleTestDatabases } from './db.ts';
import { dropStaleFixtureBuilds } from './fixtures.ts';
import { dropStaleTemplates } from './template.ts';

export default async function setup(): Promise<void> {
  await dropStaleTestDatabases();
  await dropStaleTemplates();
  dropStaleFixtureBuilds();
}
