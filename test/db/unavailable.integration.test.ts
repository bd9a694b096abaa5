/**
 * Which failures mean "the database cannot take the work now" (503 with
 * Retry-After) rather than a fault (runtime/db/unavailable.ts): a table, and
 * real errors from the real Postgres (out of connections, server gone).
 */
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { isDatabaseUnavailable } from '../../runtime/db/unavailable.ts';
import { createTestDatabase, queryOnce } from '../helpers/db.ts';

describe('isDatabaseUnavailable', () => {
  it.each([
    [{ code: '53300', message: 'sorry, too many clients already' }, true],
    [{ code: '57P01', message: 'terminating connection due to administrator command' }, true],
    [{ code: '57P03', message: 'the database system is starting up' }, true],
    [{ code: '08006', message: 'connection failure' }, true],
    [{ code: '53100', message: 'could not extend file: No space left on device' }, true],
    [{ code: 'ECONNREFUSED', message: 'connect ECONNREFUSED 127.0.0.1:5432' }, true],
    [new Error('Connection terminated unexpectedly'), true],
    [new Error('timeout exceeded when trying to connect'), true],
    [{ code: '23505', message: 'duplicate key value violates unique constraint' }, false],
    [{ code: '42P01', message: 'relation "x" does not exist' }, false],
    [{ code: '57014', message: 'canceling statement due to statement timeout' }, true],
    [{ code: '40001', message: 'could not serialize access' }, false],
    [new Error('boom'), false],
    [null, false],
    ['Connection terminated', false],
  ])('%j -> %s', (error, expected) => {
    expect(isDatabaseUnavailable(error)).toBe(expected);
  });

  it('recognises the real errors: a role out of connections, a connection the server ended', async () => {
    const database = await createTestDatabase();
    const role = `svc_limited_${Date.now()}`;
    try {
      await queryOnce(database.url, `create role ${role} login connection limit 0`);
      const url = new URL(database.url);
      url.username = role;
      const refused = await new pg.Client({ connectionString: url.toString() }).connect().then(() => null, (e: unknown) => e);
      expect(refused).toMatchObject({ code: '53300' });
      expect(isDatabaseUnavailable(refused)).toBe(true);

      const client = new pg.Client({ connectionString: database.url });
      await client.connect();
      client.on('error', () => undefined);
      const { rows: [{ pid }] } = await client.query<{ pid: number }>('select pg_backend_pid() as pid');
      await queryOnce(database.url, 'select pg_terminate_backend($1)', [pid]);
      const ended = await client.query('select 1').then(() => null, (e: unknown) => e);
      expect(isDatabaseUnavailable(ended)).toBe(true);
      await client.end().catch(() => undefined);
    } finally {
      await queryOnce(database.url, `drop role if exists ${role}`);
      await database.drop();
    }
  });
});
