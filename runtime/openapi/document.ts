/**
 * One OpenAPI 3.1 document, assembled from contributions: each capability
 * adds the paths it serves (and any shared schemas) with `add()`. The document
 * is rendered on request, so a capability initialised later still appears.
 */

/**
 * A JSON Schema (2020-12, the dialect of OpenAPI 3.1). The document sets no
 * `jsonSchemaDialect`: its default, the OAS base dialect, is 2020-12 with
 * OpenAPI's vocabulary, and Swagger UI shows every reader a warning for any
 * other value.
 */
export type Schema = Record<string, unknown>;

export interface Operation {
  readonly summary: string;
  readonly tags: readonly string[];
  readonly description?: string;
  /** Security scheme names (`bearer`, `workerToken`, `metricsToken`); empty = anonymous. */
  readonly security?: readonly string[];
  readonly parameters?: ReadonlyArray<Record<string, unknown>>;
  readonly requestBody?: Schema;
  /** Status code -> JSON body schema (null: no body, or not JSON: see `content`). */
  readonly responses: Readonly<Record<string, { description: string; schema?: Schema | null; content?: string }>>;
}

export type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';

/** Path (OpenAPI form, `/jobs/{id}`) -> method -> operation. */
export type PathsContribution = Readonly<Record<string, Partial<Record<Method, Operation>>>>;

export interface OpenApiDocument {
  /** Adds paths (and shared component schemas). A path+method added twice is a bug: it throws. */
  add(paths: PathsContribution, schemas?: Readonly<Record<string, Schema>>): void;
  /** The OpenAPI 3.1 document. */
  render(info: { title: string; version: string }): Record<string, unknown>;
}

const SECURITY_SCHEMES = {
  bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'An access token from POST /auth/login.' },
  workerToken: { type: 'apiKey', in: 'header', name: 'X-Worker-Token', description: 'A worker token from POST /jobs/workers.' },
  metricsToken: { type: 'http', scheme: 'bearer', description: 'SVC_METRICS_TOKEN (unset: loopback clients only).' },
};

export function createOpenApiDocument(): OpenApiDocument {
  const paths = new Map<string, Map<Method, Operation>>();
  const schemas = new Map<string, Schema>();
  return {
    add(contribution, shared = {}) {
      for (const [path, methods] of Object.entries(contribution)) {
        let entry = paths.get(path);
        if (!entry) paths.set(path, (entry = new Map()));
        for (const [method, operation] of Object.entries(methods) as Array<[Method, Operation]>) {
          if (entry.has(method)) throw new Error(`openapi: ${method.toUpperCase()} ${path} documented twice`);
          entry.set(method, operation);
        }
      }
      for (const [name, schema] of Object.entries(shared)) schemas.set(name, schema);
    },
    render(info) {
      const renderedPaths: Record<string, Record<string, unknown>> = {};
      for (const path of [...paths.keys()].sort()) {
        const methods: Record<string, unknown> = {};
        for (const [method, op] of paths.get(path)!) methods[method] = renderOperation(path, method, op);
        renderedPaths[path] = methods;
      }
      return {
        openapi: '3.1.0',
        info: { ...info, description: 'The REST routes of a svc-gen service (GraphQL is described by its own schema at POST /graphql).' },
        paths: renderedPaths,
        components: { schemas: Object.fromEntries([...schemas].sort(([a], [b]) => a.localeCompare(b))), securitySchemes: SECURITY_SCHEMES },
      };
    },
  };
}

function renderOperation(path: string, method: Method, op: Operation): Record<string, unknown> {
  const pathParameters = [...path.matchAll(/\{(\w+)\}/g)].map(([, name]) => ({
    name, in: 'path', required: true, schema: { type: 'string' },
  }));
  const responses: Record<string, unknown> = {};
  for (const [status, response] of Object.entries(op.responses)) {
    responses[status] = response.schema
      ? { description: response.description, content: { [response.content ?? 'application/json']: { schema: response.schema } } }
      : response.content
        ? { description: response.description, content: { [response.content]: { schema: { type: 'string' } } } }
        : { description: response.description };
  }
  return {
    operationId: `${method}${path.replace(/\{(\w+)\}/g, 'By_$1').replace(/[^A-Za-z0-9]+(.)?/g, (_, c: string | undefined) => (c ?? '').toUpperCase())}`,
    summary: op.summary,
    ...(op.description ? { description: op.description } : {}),
    tags: op.tags,
    security: (op.security ?? []).map((name) => ({ [name]: [] })),
    parameters: [...pathParameters, ...(op.parameters ?? [])],
    ...(op.requestBody ? { requestBody: { required: true, content: { 'application/json': { schema: op.requestBody } } } } : {}),
    responses,
  };
}
