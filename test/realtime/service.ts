/**
 * Test services for the realtime tests, on databases named `svc_rt_*`:
 * global-setup drops every `svc_t_*` database, which would pull the database
 * from under a realtime test when another test run starts meanwhile.
 */
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { DEFAULT_FIXTURE } from '../helpers/fixtures.ts';
import { startTestService, type TestService, type TestServiceOptions } from '../helpers/service.ts';

export async function startRealtimeService(options: TestServiceOptions = {}): Promise<TestService & { drop(): Promise<void> }> {
  const database: TestDatabase = options.database ?? (await createTestDatabase('svc_rt', { fixture: options.fixture ?? DEFAULT_FIXTURE }));
  const service = await startTestService({ ...options, database });
  return { ...service, drop: () => (options.database ? Promise.resolve() : database.drop()) };
}
