/**
 * The executable schema (@graphql-tools' makeExecutableSchema): SDL of sdl.ts,
 * resolvers that call the records service with the request's caller, and the
 * JSON scalar.
 */
import { makeExecutableSchema } from '@graphql-tools/schema';
import { GraphQLScalarType, Kind, valueFromASTUntyped, type GraphQLResolveInfo, type GraphQLSchema } from 'graphql';
import { RecordError, type Caller, type RecordService } from '../records/index.ts';
import type { RuntimeStreams } from '../events/index.ts';
import { TYPE_DEFS } from './sdl.ts';
import type { ModelChanges } from './feed.ts';
import { enqueueJob } from './jobs.ts';
import type { JobQueue } from '../jobs/index.ts';

export interface GraphQLContext {
  readonly caller: Caller;
}

export interface SchemaServices {
  readonly records: RecordService;
  readonly feed: ModelChanges;
  /** `Job`, `WorkflowRun`: runtime streams whose history recordHistory serves beside the models'. */
  readonly streams: RuntimeStreams;
  /** The job queue (`enqueueJob`); the graphql capability requires the jobs one, so it is there at init. */
  readonly jobs: JobQueue | undefined;
}

export const JSONScalar = new GraphQLScalarType({
  name: 'JSON',
  description: 'Any JSON value.',
  serialize: (value) => value,
  parseValue: (value) => value,
  parseLiteral: (ast, variables) => (ast.kind === Kind.NULL ? null : valueFromASTUntyped(ast, variables)),
});

type Args = Record<string, any>;

/** Does the query ask for `name` under this field? (Fragments: assume yes.) */
function selects(info: GraphQLResolveInfo | undefined, name: string): boolean {
  if (!info) return true;
  return info.fieldNodes.some((node) =>
    node.selectionSet?.selections.some((s) => s.kind !== Kind.FIELD || s.name.value === name) ?? false);
}

/** A runtime stream's events as a record's history: NOT_FOUND when the caller may see none, as for a record. */
async function streamHistory(streams: RuntimeStreams, caller: Caller, streamType: string, id: string) {
  const events = await streams.history(caller, streamType, id);
  if (events.length === 0) throw new RecordError('NOT_FOUND', `${streamType} ${id} not found`);
  return events.map((e) => ({
    eventId: e.eventId, eventType: e.eventType, version: e.version, data: e.data, actorId: e.actorId, occurredAt: e.occurredAt,
  }));
}

export function createSchema(services: SchemaServices): GraphQLSchema {
  const { records, feed } = services;
  const resolvers = {
    JSON: JSONScalar,
    Query: {
      record: (_: unknown, a: Args, c: GraphQLContext) => records.get(c.caller, a.model, a.id, a.include),
      records: (_: unknown, a: Args, c: GraphQLContext) => records.list(c.caller, a.model, a),
      paginatedRecords: (_: unknown, a: Args, c: GraphQLContext, info?: GraphQLResolveInfo) =>
        records.page(c.caller, a.model, { ...a, withTotal: selects(info, 'totalCount') || selects(info, 'totalCountIsEstimate') }),
      deletedRecords: (_: unknown, a: Args, c: GraphQLContext) => records.deleted(c.caller, a.model, a),
      recordHistory: (_: unknown, a: Args, c: GraphQLContext) =>
        (services.streams.has(a.model) ? streamHistory(services.streams, c.caller, a.model, a.id) : records.history(c.caller, a.model, a.id)),
    },
    Mutation: {
      create: (_: unknown, a: Args, c: GraphQLContext) => records.create(c.caller, a.model, a.data),
      update: (_: unknown, a: Args, c: GraphQLContext) => records.update(c.caller, a.model, a.id, a.data),
      updateMany: (_: unknown, a: Args, c: GraphQLContext) => records.updateMany(c.caller, a.model, a.where, a.data),
      delete: (_: unknown, a: Args, c: GraphQLContext) => records.delete(c.caller, a.model, a.id),
      restore: (_: unknown, a: Args, c: GraphQLContext) => records.restore(c.caller, a.model, a.id),
      hardDelete: (_: unknown, a: Args, c: GraphQLContext) => records.hardDelete(c.caller, a.model, a.id),
      enqueueJob: (_: unknown, a: Args, c: GraphQLContext) => enqueueJob(services.jobs, c.caller, a),
    },
    Subscription: {
      modelChanges: {
        subscribe: (_: unknown, a: Args, c: GraphQLContext) => feed.subscribe(c.caller, a.model ?? null, a.after ?? null),
        // An error value (the subscriber fell behind) is thrown here, so the client gets it as an error payload.
        resolve: (change: unknown) => {
          if (change instanceof Error) throw change;
          return change;
        },
      },
    },
  };
  return makeExecutableSchema({ typeDefs: TYPE_DEFS, resolvers });
}
