import { dropStaleTestDatabases } from './db.ts';

export default async function setup(): Promise<void> {
  await dropStaleTestDatabases();
}
