/**
 * The runtime's capabilities and the edge middleware run before routing. Each
 * capability declares what it provides and requires; start orders them from
 * those declarations (order.ts). This list only breaks ties: among
 * capabilities free to start, the earlier listed starts first.
 */
import type Koa from 'koa';
import type { Config } from '../config/index.ts';
import type { Logger } from '../log/index.ts';
import type { Capability } from './types.ts';
import { core } from './probes.ts';
import { events } from '../events/index.ts';
import { audit, auditRoutes } from '../audit/index.ts';
import { feed } from '../feed/index.ts';
import { auth } from '../auth/index.ts';
import { corsEdge, rateLimitEdge } from '../edge/index.ts';
import { realtime } from '../realtime/index.ts';
import { jobs } from '../jobs/index.ts';
import { media } from '../media/index.ts';
import { records } from '../records/index.ts';
import { actions } from '../actions/index.ts';
import { workflows } from '../workflows/index.ts';
import { graphql } from '../graphql/index.ts';
import { projections } from '../projections/index.ts';
import { publicRead } from '../public/index.ts';
import { diagnostics } from '../diagnostics/index.ts';
import { metrics } from '../metrics/index.ts';
import { openapi } from '../openapi/index.ts';
import { operatorConsole } from '../console/index.ts';

/** Null: the edge is not configured (no middleware on the path). */
export type EdgeFactory = (config: Config, log: Logger) => Koa.Middleware | null;

// CORS first, so that a 429 still carries the headers a browser needs to read it.
export const EDGE: readonly EdgeFactory[] = [corsEdge, rateLimitEdge];

export const CAPABILITIES: readonly Capability[] = [
  events, feed, core, metrics, openapi, audit, auth, auditRoutes, realtime, jobs, media, records, actions, workflows, graphql, projections, publicRead, diagnostics, operatorConsole,
];
