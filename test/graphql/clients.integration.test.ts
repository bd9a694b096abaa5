/**
 * Real GraphQL clients against a real server, with their defaults: Apollo
 * Client 4 (HttpLink), urql (@urql/core, which sends queries as GET),
 * graphql-request and graphql-ws. Each runs a query and a mutation, sees every
 * invalid field of a write, and sees a 401 as an UNAUTHORIZED GraphQL error.
 */
import { ApolloClient, CombinedGraphQLErrors, HttpLink, InMemoryCache, gql as apolloGql } from '@apollo/client';
import { cacheExchange, Client as UrqlClient, fetchExchange } from '@urql/core';
import { ClientError, GraphQLClient } from 'graphql-request';
import { createClient as createWsClient } from 'graphql-ws';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestService } from '../helpers/service.ts';
import { startRecordsService } from '../records/helpers.ts';

let service: TestService;
let token: string;
let endpoint: string;

beforeAll(async () => {
  service = await startRecordsService();
  token = await service.token({ role: 'Manager' });
  endpoint = `${service.url}/graphql`;
});
afterAll(() => service?.close());

const RECORDS = 'query Companies($where: JSON) { records(model: "Company", where: $where) }';
const CREATE = 'mutation Create($data: JSON!) { create(model: "Company", data: $data) }';
const BAD_DATA = { name: 'x', email: 'nope', employees: -5 };
const BAD_FIELDS = ['name', 'email', 'employees'];

/** Every request the client sends: the method, and the Accept header it chose. */
function recording(sent: Array<{ method: string; accept: string | null }>): typeof fetch {
  return (input, init) => {
    sent.push({ method: init?.method ?? 'GET', accept: new Headers(init?.headers).get('accept') });
    return fetch(input, init);
  };
}

describe('Apollo Client', () => {
  const apollo = (bearer: string | null, sent: Array<{ method: string; accept: string | null }> = []) => new ApolloClient({
    link: new HttpLink({ uri: endpoint, headers: bearer ? { authorization: `Bearer ${bearer}` } : {}, fetch: recording(sent) }),
    cache: new InMemoryCache(),
  });

  it('creates and queries', async () => {
    const sent: Array<{ method: string; accept: string | null }> = [];
    const client = apollo(token, sent);
    const created = await client.mutate({ mutation: apolloGql(CREATE), variables: { data: { name: 'Apollo Co' } } });
    expect((created.data as any).create.name).toBe('Apollo Co');
    const read = await client.query({ query: apolloGql(RECORDS), variables: { where: { name: 'Apollo Co' } }, fetchPolicy: 'no-cache' });
    expect((read.data as any).records).toHaveLength(1);
    expect(sent[0].accept).toContain('application/graphql-response+json');
  });

  it('sees every invalid field, and a 401 as UNAUTHORIZED', async () => {
    const invalid = await apollo(token).mutate({ mutation: apolloGql(CREATE), variables: { data: BAD_DATA } }).catch((e: unknown) => e);
    expect(CombinedGraphQLErrors.is(invalid)).toBe(true);
    expect((invalid as CombinedGraphQLErrors).errors.map((e) => e.extensions?.field)).toEqual(BAD_FIELDS);
    const anonymous = await apollo(null).query({ query: apolloGql(RECORDS) }).catch((e: unknown) => e);
    expect(CombinedGraphQLErrors.is(anonymous)).toBe(true);
    expect((anonymous as CombinedGraphQLErrors).errors[0].extensions?.code).toBe('UNAUTHORIZED');
  });
});

describe('urql (defaults)', () => {
  const urql = (bearer: string | null, sent: Array<{ method: string; accept: string | null }>) => new UrqlClient({
    url: endpoint,
    exchanges: [cacheExchange, fetchExchange],
    fetch: recording(sent),
    fetchOptions: bearer ? { headers: { authorization: `Bearer ${bearer}` } } : {},
  });

  it('sends queries as GET and gets data, mutations as POST', async () => {
    const sent: Array<{ method: string; accept: string | null }> = [];
    const client = urql(token, sent);
    const created = await client.mutation(CREATE, { data: { name: 'Urql Co' } }).toPromise();
    expect(created.error).toBeUndefined();
    expect(created.data.create.name).toBe('Urql Co');
    const read = await client.query(RECORDS, { where: { name: 'Urql Co' } }).toPromise();
    expect(read.error).toBeUndefined();
    expect(read.data.records.map((r: any) => r.name)).toEqual(['Urql Co']);
    expect(sent.map((s) => s.method)).toEqual(['POST', 'GET']);
  });

  it('sees every invalid field, and a 401 as UNAUTHORIZED', async () => {
    const invalid = await urql(token, []).mutation(CREATE, { data: BAD_DATA }).toPromise();
    // urql sends variables with sorted keys; errors follow the order of the input.
    expect(invalid.error!.graphQLErrors.map((e) => e.extensions.field)).toEqual([...BAD_FIELDS].sort());
    const anonymous = await urql(null, []).query(RECORDS, {}).toPromise();
    expect(anonymous.error!.graphQLErrors[0].extensions.code).toBe('UNAUTHORIZED');
    expect(anonymous.error!.response.status).toBe(401);
  });
});

describe('graphql-request', () => {
  it('creates and queries', async () => {
    const client = new GraphQLClient(endpoint, { headers: { authorization: `Bearer ${token}` } });
    const created = await client.request<any>(CREATE, { data: { name: 'Request Co' } });
    expect(created.create.name).toBe('Request Co');
    const read = await client.request<any>(RECORDS, { where: { name: 'Request Co' } });
    expect(read.records).toHaveLength(1);
  });

  it('sees every invalid field, and a 401 as UNAUTHORIZED', async () => {
    const invalid = await new GraphQLClient(endpoint, { headers: { authorization: `Bearer ${token}` } })
      .request(CREATE, { data: BAD_DATA }).catch((e: unknown) => e);
    expect(invalid).toBeInstanceOf(ClientError);
    expect((invalid as ClientError).response.errors!.map((e) => e.extensions?.field)).toEqual(BAD_FIELDS);
    const anonymous = await new GraphQLClient(endpoint).request(RECORDS).catch((e: unknown) => e);
    expect((anonymous as ClientError).response.status).toBe(401);
    expect((anonymous as ClientError).response.errors![0].extensions?.code).toBe('UNAUTHORIZED');
  });
});

describe('graphql-ws', () => {
  it('receives the change of a record created over HTTP', async () => {
    const writer = new GraphQLClient(endpoint, { headers: { authorization: `Bearer ${token}` } });
    // Resume after a known event, so that a change committed before the server registered the
    // subscription is replayed rather than missed: no waiting for the subscription to be live.
    const anchor = await writer.request<any>(CREATE, { data: { name: 'Ws Anchor' } });
    const history = await writer.request<any>('query($id: ID!) { recordHistory(model: "Company", id: $id) { eventId } }', { id: anchor.create.id });
    const client = createWsClient({ url: `${endpoint.replace(/^http/, 'ws')}/ws`, webSocketImpl: WebSocket, connectionParams: { token }, retryAttempts: 0 });
    const received = new Promise<any>((resolve, reject) => {
      const stop = client.subscribe({
        query: 'subscription($after: ID) { modelChanges(model: "Company", after: $after) { eventType modelName recordId } }',
        variables: { after: history.recordHistory[0].eventId },
      }, {
        next: (message) => {
          stop();
          resolve(message);
        },
        error: reject,
        complete: () => undefined,
      });
    });
    const { create } = await writer.request<any>(CREATE, { data: { name: 'Ws Co' } });
    const message = await received;
    expect(message.data.modelChanges).toEqual({ eventType: 'Created', modelName: 'Company', recordId: create.id });
    await client.dispose();
  });

  it('is refused without a token (4403)', async () => {
    const client = createWsClient({ url: `${endpoint.replace(/^http/, 'ws')}/ws`, webSocketImpl: WebSocket, retryAttempts: 0, lazy: false, onNonLazyError: () => undefined });
    const code = await new Promise<number>((resolve) => client.on('closed', (event: any) => resolve(event.code)));
    expect(code).toBe(4403);
    await client.dispose();
  });
});
