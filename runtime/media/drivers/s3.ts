/**
 * Media in any S3-compatible store (AWS S3, Cloudflare R2, MinIO, s3rver),
 * through the official AWS SDK. Uploads stream through lib-storage's Upload
 * (multipart past one part), hashed on the way; reads pass a Range through to
 * GetObject; presigned PUTs let clients upload directly.
 */
import { pipeline } from 'node:stream/promises';
import type { Readable } from 'node:stream';
import {
  CopyObjectCommand, DeleteObjectCommand, GetObjectCommand, HeadObjectCommand, PutObjectCommand, S3Client,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import type { MediaConfig } from '../../config/index.ts';
import { HashingLimit } from './hashing.ts';
import type { ByteRange, PresignInput, StorageDriver, StoredBytes } from './types.ts';

const PART_BYTES = 5 * 1024 * 1024;

export function s3Client(config: MediaConfig['s3']): S3Client {
  return new S3Client({
    region: config.region,
    endpoint: config.endpoint ?? undefined,
    forcePathStyle: config.forcePathStyle,
    credentials: config.credentials ?? undefined,
    // Checksums only where S3 requires them: R2, MinIO and s3rver do not all
    // accept the CRC32 trailers newer SDKs add by default.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
}

export function s3Driver(client: S3Client, bucket: string): StorageDriver {
  return {
    name: 's3',
    async put(key: string, body: Readable, maxBytes: number): Promise<StoredBytes> {
      const counter = new HashingLimit(maxBytes);
      const upload = new Upload({
        client,
        params: { Bucket: bucket, Key: key, Body: counter },
        partSize: PART_BYTES,
        queueSize: 1,
        // Not every S3-compatible store has AbortMultipartUpload (s3rver does not):
        // the parts of an upload cut off are left to the bucket's lifecycle rule
        // (docs/media.md), and a failed upload never becomes an object.
        leavePartsOnError: true,
      });
      const done = upload.done();
      try {
        await Promise.all([pipeline(body, counter), done]);
      } catch (error) {
        await done.catch(() => undefined);
        throw error;
      }
      return counter.result();
    },
    async get(key: string, range?: ByteRange): Promise<Readable | null> {
      try {
        const reply = await client.send(new GetObjectCommand({
          Bucket: bucket, Key: key, Range: range ? `bytes=${range.start}-${range.end}` : undefined,
        }));
        return reply.Body as Readable;
      } catch (error) {
        if (isMissing(error)) return null;
        throw error;
      }
    },
    async head(key: string) {
      try {
        const reply = await client.send(new HeadObjectCommand({ Bucket: bucket, Key: key }));
        return { size: reply.ContentLength ?? 0 };
      } catch (error) {
        if (isMissing(error)) return null;
        throw error;
      }
    },
    async delete(key: string) {
      await client.send(new DeleteObjectCommand({ Bucket: bucket, Key: key }));
    },
    // One CopyObject (up to 5 GiB, far past any SVC_MEDIA_MAX_BYTES in use): a
    // PUT landing meanwhile changes `from`, never the copy.
    async move(from: string, to: string) {
      try {
        await client.send(new CopyObjectCommand({ Bucket: bucket, Key: to, CopySource: encodeURI(`${bucket}/${from}`) }));
      } catch (error) {
        if (isMissing(error)) return false;
        throw error;
      }
      await client.send(new DeleteObjectCommand({ Bucket: bucket, Key: from }));
      return true;
    },
    // Keys passed here are unique per upload and written by no URL (a POST
    // /media staging key, a commit key), so the object is kept as is: copying
    // it under a content key would cost a second write of every byte.
    promote: async (stagedKey: string) => stagedKey,
    async presignPut(key: string, input: PresignInput) {
      const command = new PutObjectCommand({ Bucket: bucket, Key: key, ContentType: input.contentType });
      // SigV4 presigned URLs live at most 7 days.
      const url = await getSignedUrl(client, command, { expiresIn: Math.min(input.expiresInSecs, 7 * 86_400) });
      return { url, headers: { 'content-type': input.contentType } };
    },
  };
}

function isMissing(error: unknown): boolean {
  const e = error as { name?: string; $metadata?: { httpStatusCode?: number } };
  return e?.name === 'NoSuchKey' || e?.name === 'NotFound' || e?.$metadata?.httpStatusCode === 404;
}
