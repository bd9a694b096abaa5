/**
 * The runtime's capabilities in initialisation order, and the edge middleware
 * run before routing. A capability may use the services of those before it.
 */
import type Koa from 'koa';
import type { Config } from '../config/index.ts';
import type { Logger } from '../log/index.ts';
import type { Capability } from './types.ts';
import { core } from '../core/index.ts';
import { events } from '../events/index.ts';
import { auth } from '../auth/index.ts';
import { corsEdge, rateLimitEdge } from '../edge/index.ts';
import { realtime } from '../realtime/index.ts';
import { jobs } from '../jobs/index.ts';
import { records } from '../records/index.ts';
import { graphql } from '../graphql/index.ts';
import { projections } from '../projections/index.ts';
import { publicRead } from '../public/index.ts';
import { diagnostics } from '../diagnostics/index.ts';

export type EdgeFactory = (config: Config, log: Logger) => Koa.Middleware;

// CORS first, so that a 429 still carries the headers a browser needs to read it.
export const EDGE: readonly EdgeFactory[] = [corsEdge, rateLimitEdge];

export const CAPABILITIES: readonly Capability[] = [events, core, auth, realtime, jobs, records, graphql, projections, publicRead, diagnostics];
