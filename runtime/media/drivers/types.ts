/**
 * The storage driver: where media bytes live. Small on purpose: every rule
 * (tenancy, dedupe, limits, sweeping) lives above it, in runtime/media.
 */
import type { Readable } from 'node:stream';

export interface StoredBytes {
  readonly size: number;
  /** Hex SHA-256 of the bytes, computed while they were written. */
  readonly sha256: string;
}

/** Inclusive byte range, as HTTP `Range: bytes=start-end` says it. */
export interface ByteRange {
  readonly start: number;
  readonly end: number;
}

export interface PresignedPut {
  readonly url: string;
  /** Headers the client must send with its PUT. */
  readonly headers: Readonly<Record<string, string>>;
}

export interface PresignInput {
  readonly contentType: string;
  readonly size: number;
  readonly expiresInSecs: number;
}

export interface StorageDriver {
  readonly name: 'local' | 's3';
  /**
   * Streams `body` to `key`, hashing as it goes. More than `maxBytes` rejects
   * with MediaTooLargeError as soon as the limit is passed, and nothing stays stored.
   */
  put(key: string, body: Readable, maxBytes: number): Promise<StoredBytes>;
  /** The bytes of `key` (a range of them), or null when there is no such object. */
  get(key: string, range?: ByteRange): Promise<Readable | null>;
  head(key: string): Promise<{ size: number } | null>;
  /** Removes `key`; removing a missing key is not an error. */
  delete(key: string): Promise<void>;
  /**
   * Moves the object at `from` to `to`, replacing what `to` held; false when
   * there is nothing at `from`. Readers of `to` see the old or the new bytes,
   * never a mix (local: a rename; S3: CopyObject, then `from` is deleted).
   */
  move(from: string, to: string): Promise<boolean>;
  /**
   * Makes staged bytes permanent under their content key and returns the key
   * they now live under (the local driver renames; S3 keeps the object where
   * it is rather than copy it: callers pass a key no upload URL writes).
   */
  promote(stagedKey: string, contentKey: string): Promise<string>;
  /** A URL the client PUTs the bytes to; null when the server takes the upload itself (local). */
  presignPut(key: string, input: PresignInput): Promise<PresignedPut | null>;
  /**
   * Removes temporary files older than `before` that a crashed process left
   * mid-write; returns how many. Absent where a failed write leaves nothing (S3).
   */
  purgeTemporary?(before: Date): Promise<number>;
}

export class MediaTooLargeError extends Error {
  constructor(readonly maxBytes: number) {
    super(`media larger than ${maxBytes} bytes`);
    this.name = 'MediaTooLargeError';
  }
}
