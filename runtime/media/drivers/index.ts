/** The storage driver named by SVC_MEDIA_DRIVER. */
import type { MediaConfig } from '../../config/index.ts';
import { localDriver } from './local.ts';
import type { StorageDriver } from './types.ts';

export type { StorageDriver, StoredBytes, ByteRange, PresignedPut } from './types.ts';
export { MediaTooLargeError } from './types.ts';
export { localDriver } from './local.ts';

/** The S3 SDK (about a second to import) loads only when the s3 driver is chosen. */
export async function createDriver(config: MediaConfig): Promise<StorageDriver> {
  if (config.driver === 'local') return localDriver(config.dir);
  const { s3Client, s3Driver } = await import('./s3.ts');
  return s3Driver(s3Client(config.s3), config.s3.bucket!);
}
