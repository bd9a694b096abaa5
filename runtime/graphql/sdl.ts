/** The GraphQL surface of CONTRACT section 4: model-generic operations over JSON. */
export const TYPE_DEFS = /* GraphQL */ `
scalar JSON

type Query {
  record(model: String!, id: ID!, include: [String!]): JSON
  records(model: String!, where: JSON, orderBy: JSON, limit: Int, offset: Int, include: [String!]): [JSON!]!
  paginatedRecords(model: String!, where: JSON, orderBy: JSON, first: Int, after: String, include: [String!]): RecordPage!
  deletedRecords(model: String!, where: JSON, orderBy: JSON, limit: Int, offset: Int): [JSON!]!
  recordHistory(model: String!, id: ID!): [RecordEvent!]!
}

type RecordPage {
  items: [JSON!]!
  "Exact up to SVC_GRAPHQL_EXACT_COUNT_LIMIT (default 10000) matching rows; beyond it the planner's estimate."
  totalCount: Int!
  "True when totalCount is an estimate (more rows match than the exact-count bound)."
  totalCountIsEstimate: Boolean!
  pageInfo: PageInfo!
}

type PageInfo {
  hasNextPage: Boolean!
  endCursor: String
}

type RecordEvent {
  eventId: ID!
  eventType: String!
  version: Int!
  data: JSON
  actorId: ID
  occurredAt: String!
}

type Mutation {
  create(model: String!, data: JSON!): JSON!
  update(model: String!, id: ID!, data: JSON!): JSON!
  updateMany(model: String!, where: JSON!, data: JSON!): Int!
  "Soft delete: the record moves to deletedRecords."
  delete(model: String!, id: ID!): Boolean!
  restore(model: String!, id: ID!): JSON!
  hardDelete(model: String!, id: ID!): Boolean!
  enqueueJob(queue: String!, kind: String!, payload: JSON, idempotencyKey: String, maxAttempts: Int, priority: Int): EnqueuedJob!
}

type EnqueuedJob {
  id: ID!
}

type Subscription {
  """
  Committed changes of one model (or of every model the caller may read), in the caller's tenant,
  at least once and in commit order. With after (an eventId received before), the changes
  missed since then are replayed first.
  """
  modelChanges(model: String, after: ID): ModelChange!
}

type ModelChange {
  eventType: String!
  modelName: String!
  eventId: ID!
  recordId: ID
  tenantId: String
}
`;
