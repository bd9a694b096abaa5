/**
 * The runtime's capabilities in initialisation order, and the edge middleware
 * run before routing. A capability may use the services of those before it.
 * `audit` comes before every capability that writes audit entries (auth, jobs,
 * records, projections) and before their routes (its denied-attempts middleware).
 * `actions` needs records (its write trigger), jobs and feed.
 * `workflows` comes after records (it registers a write trigger) and jobs (its engine).
 */
import type Koa from 'koa';
import type { Config } from '../config/index.ts';
import type { Logger } from '../log/index.ts';
import type { Capability } from './types.ts';
import { core } from '../core/index.ts';
import { events } from '../events/index.ts';
import { audit } from '../audit/index.ts';
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

/** Null: the edge is not configured (no middleware on the path). */
export type EdgeFactory = (config: Config, log: Logger) => Koa.Middleware | null;

// CORS first, so that a 429 still carries the headers a browser needs to read it.
export const EDGE: readonly EdgeFactory[] = [corsEdge, rateLimitEdge];

// metrics and openapi early: later capabilities report into ctx.services.metrics and
// document their routes with ctx.services.openapi.add().
export const CAPABILITIES: readonly Capability[] = [
  events, feed, core, metrics, openapi, audit, auth, realtime, jobs, media, records, actions, workflows, graphql, projections, publicRead, diagnostics,
];
