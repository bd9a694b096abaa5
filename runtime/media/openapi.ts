/** The media routes in the OpenAPI document (CONTRACT section 10). */
import type { PathsContribution, Schema } from '../openapi/index.ts';
import { bearer, errors, int, obj, op, str, timestamp, worker } from '../openapi/paths.ts';

const METADATA: Schema = obj({ id: str, filename: str, contentType: str, size: int, sha256: str, createdAt: timestamp });
const UPLOADED: Schema = { ...METADATA, properties: { ...(METADATA.properties as object), url: str }, required: [...(METADATA.required as string[]), 'url'] };
const tags = ['media'];

export const MEDIA_PATHS: PathsContribution = {
  '/media': { post: op({
    summary: 'Upload one file (multipart/form-data, streamed)', tags, security: [...bearer, ...worker],
    description: 'A user\'s JWT, or X-Worker-Token (with X-Job-Id and X-Lease-Id: the upload takes the tenant of the leased job).',
    responses: { 201: { description: 'stored', schema: UPLOADED }, ...errors(400, 401, 403, 409, 413, 415) },
  }), get: op({
    summary: 'Committed media of the caller\'s scope, newest first (keyset pages)', tags, security: bearer,
    parameters: [
      { name: 'after', in: 'query', schema: { type: 'string' }, description: 'the nextCursor of the previous page' },
      { name: 'limit', in: 'query', schema: { type: 'integer' }, description: '1..200, default 50 (clamped)' },
    ],
    responses: {
      200: { description: 'a page', schema: { type: 'object', required: ['items', 'nextCursor'], properties: {
        items: { type: 'array', items: { ...METADATA, properties: { ...(METADATA.properties as object), url: { type: 'string' } } } },
        nextCursor: { type: ['string', 'null'] },
      } } },
      ...errors(400, 401, 403),
    },
  }) },
  '/media/presign': { post: op({
    summary: 'Start a direct upload: a URL to PUT the bytes to', tags, security: bearer,
    requestBody: obj({ filename: str, contentType: str, size: int }),
    responses: {
      201: { description: 'where and how to PUT the bytes', schema: obj({
        id: str, uploadUrl: str, method: { const: 'PUT' }, headers: { type: 'object', additionalProperties: str }, expiresAt: timestamp,
      }) },
      ...errors(400, 401, 403, 413, 415),
    },
  }) },
  '/media/upload/{id}': { put: op({
    summary: 'The bytes of a presigned upload (local storage; the URL is signed and takes one body: 409 to another)', tags,
    responses: { 200: { description: 'received', schema: { type: 'object' } }, ...errors(400, 403, 404, 409, 413) },
  }) },
  '/media/commit': { post: op({
    summary: 'Commit a direct upload (its uploader only): the server hashes the bytes itself', tags, security: bearer,
    requestBody: obj({ id: str }),
    responses: { 201: { description: 'committed (a repeat returns the same metadata)', schema: UPLOADED }, ...errors(400, 401, 403, 404, 409, 410, 422) },
  }) },
  '/media/{id}/metadata': { get: op({
    summary: 'Metadata of a committed upload', tags, security: bearer,
    responses: { 200: { description: 'metadata', schema: METADATA }, ...errors(401, 403, 404) },
  }) },
  '/media/{id}': {
    get: op({
      summary: 'The bytes, with ETag, Range and Cache-Control', tags, security: bearer,
      description: 'Served with the stored content type (`application/octet-stream` below stands for it); 206 for a Range, 304 for a matching If-None-Match.',
      responses: {
        200: { description: 'the bytes', content: 'application/octet-stream' },
        206: { description: 'the requested range', content: 'application/octet-stream' },
        304: { description: 'not modified' },
        416: { description: 'range not satisfiable' },
        ...errors(401, 403, 404),
      },
    }),
    delete: op({
      summary: 'Delete an upload (its uploader, or an Admin or Manager of its tenant; 409 while a live record holds it)', tags, security: bearer,
      responses: { 204: { description: 'deleted' }, ...errors(401, 403, 404, 409) },
    }),
  },
};
