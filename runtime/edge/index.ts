/** Edge middleware run before routing, in this order (see service/capabilities.ts EDGE). */
export { corsEdge, corsPolicy } from './cors.ts';
export { rateLimitEdge, rateLimit, clientAddress, isExempt } from './rate-limit.ts';
export { TokenBuckets } from './buckets.ts';
