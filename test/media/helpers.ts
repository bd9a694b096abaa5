/**
 * Helpers of the media tests: a server with its own media folder (or an
 * s3rver bucket), multipart uploads over real HTTP, and s3rver on a free port.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { createHash } from 'node:crypto';
import S3rver from 's3rver';
import { startJobsService } from '../jobs/helpers.ts';
import type { TestService } from '../helpers/service.ts';
import type { Role } from '../../runtime/ir/types.ts';

export const sha256 = (bytes: Uint8Array | string) => createHash('sha256').update(bytes).digest('hex');

export interface MediaService extends TestService {
  readonly mediaDir: string;
}

export async function startMediaService(env: Record<string, string> = {}, fixture?: string): Promise<MediaService> {
  const mediaDir = mkdtempSync(join(tmpdir(), 'svc-media-'));
  const service = await startJobsService({ env: { SVC_MEDIA_DIR: mediaDir, ...env }, fixture });
  return Object.assign(service, { mediaDir }) as MediaService;
}

export interface User {
  readonly headers: Record<string, string>;
  readonly userId: string;
}

export async function userOf(service: TestService, role: Role, userId: string, tenantId: string | null = null): Promise<User> {
  const token = await service.token({ role, userId, tenantId });
  return { headers: { authorization: `Bearer ${token}` }, userId };
}

export async function upload(
  service: TestService, headers: Record<string, string>, bytes: Uint8Array | string,
  options: { filename?: string; type?: string; field?: string } = {},
) {
  const form = new FormData();
  form.append(options.field ?? 'file', new Blob([bytes], { type: options.type ?? 'application/octet-stream' }), options.filename ?? 'file.bin');
  const response = await fetch(`${service.url}/media`, { method: 'POST', headers, body: form });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : null, headers: response.headers };
}

export async function request(service: TestService, method: string, path: string, headers: Record<string, string>, body?: unknown) {
  const response = await fetch(`${service.url}${path}`, {
    method,
    headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const buffer = Buffer.from(await response.arrayBuffer());
  const type = response.headers.get('content-type') ?? '';
  return {
    status: response.status,
    headers: response.headers,
    bytes: buffer,
    body: type.includes('json') && buffer.length > 0 ? JSON.parse(buffer.toString('utf8')) : null,
  };
}

export interface S3Server {
  readonly endpoint: string;
  readonly bucket: string;
  readonly env: Record<string, string>;
  close(): Promise<void>;
}

/** A real S3-compatible server over HTTP on 127.0.0.1 (fixed credentials S3RVER/S3RVER). */
export async function startS3rver(bucket = 'media-test'): Promise<S3Server> {
  const directory = mkdtempSync(join(tmpdir(), 'svc-s3rver-'));
  const server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory, configureBuckets: [{ name: bucket }] });
  const address = (await server.run()) as AddressInfo;
  const endpoint = `http://127.0.0.1:${address.port}`;
  return {
    endpoint,
    bucket,
    env: {
      SVC_MEDIA_DRIVER: 's3',
      SVC_MEDIA_S3_BUCKET: bucket,
      SVC_MEDIA_S3_ENDPOINT: endpoint,
      SVC_MEDIA_S3_REGION: 'us-east-1',
      SVC_MEDIA_S3_FORCE_PATH_STYLE: 'true',
      AWS_ACCESS_KEY_ID: 'S3RVER',
      AWS_SECRET_ACCESS_KEY: 'S3RVER',
    },
    close: () => server.close(),
  };
}
