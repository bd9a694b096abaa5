/** A pass-through stream that hashes and counts what flows through it, and stops past a limit. */
import { createHash } from 'node:crypto';
import { Transform, type TransformCallback } from 'node:stream';
import { MediaTooLargeError, type StoredBytes } from './types.ts';

export class HashingLimit extends Transform {
  private readonly hash = createHash('sha256');
  private bytes = 0;

  constructor(private readonly maxBytes: number) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    this.bytes += chunk.length;
    if (this.bytes > this.maxBytes) {
      done(new MediaTooLargeError(this.maxBytes));
      return;
    }
    this.hash.update(chunk);
    done(null, chunk);
  }

  /** Valid once the stream has finished. */
  result(): StoredBytes {
    return { size: this.bytes, sha256: this.hash.digest('hex') };
  }
}
