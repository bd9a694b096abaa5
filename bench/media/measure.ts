/**
 * Memory of a streamed upload: a real server in a child process (`svc-gen
 * start`), a FILE_MIB upload sent in 64 KiB chunks, and the child's RSS read
 * from /proc every 10 ms. The growth is the peak during the upload (and the
 * download of the same bytes) minus the RSS settled after a warm-up, twice:
 * cold (after three 1 MiB uploads) and steady (after three uploads a fifth of
 * the size). A server holding the file would grow by the file's size; a
 * streaming one grows by its buffers plus, cold, the socket buffers the
 * collector has not reclaimed yet (the same for 50 or 150 MiB).
 */
import { readFileSync, mkdtempSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildFixture, mintToken, TEST_JWT_SECRET } from '../../test/helpers/service.ts';
import { createTestDatabase } from '../../test/helpers/db.ts';
import { freePort, spawnCli, waitForServer } from '../../test/helpers/cli.ts';
import { openDatabase } from '../../runtime/db/index.ts';
import { TokenSigner } from '../../runtime/auth/index.ts';

const MIB = 1024 * 1024;

export interface RssPhase {
  readonly baselineMiB: number;
  readonly uploadPeakMiB: number;
  readonly downloadPeakMiB: number;
  /** Peak during the upload minus the baseline. */
  readonly uploadGrowthMiB: number;
  readonly downloadGrowthMiB: number;
  readonly uploadMs: number;
  readonly status: number;
}

export interface RssReport {
  readonly fileMiB: number;
  /** After a warm-up of three 1 MiB uploads: includes the allocator's first high-water mark. */
  readonly cold: RssPhase;
  /** After a warm-up of three uploads a fifth of the size: what each further upload costs. */
  readonly steady: RssPhase;
}

const rssOf = (pid: number): number => {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Number(match[1]) * 1024 : 0;
};

/** Samples `pid`'s RSS until stopped; returns the peak. */
function sampler(pid: number) {
  let peak = rssOf(pid);
  const timer = setInterval(() => { peak = Math.max(peak, rssOf(pid)); }, 10);
  return { stop: () => { clearInterval(timer); return Math.max(peak, rssOf(pid)); } };
}

/** POSTs a multipart body of `bytes` file bytes, produced 64 KiB at a time (never held whole here either). */
function streamUpload(url: string, token: string, bytes: number): Promise<{ status: number; body: any }> {
  const boundary = 'benchboundary';
  const head = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`);
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  return new Promise((resolve, reject) => {
    const req = request(`${url}/media`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': `multipart/form-data; boundary=${boundary}`, 'content-length': String(head.length + bytes + tail.length) },
    }, (res) => {
      let text = '';
      res.on('data', (chunk) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode!, body: text ? JSON.parse(text) : null }));
    });
    req.on('error', reject);
    const chunk = Buffer.alloc(64 * 1024);
    let sent = 0;
    const pump = () => {
      while (sent < bytes) {
        const n = Math.min(chunk.length, bytes - sent);
        chunk.fill(sent % 251, 0, n);
        sent += n;
        if (!req.write(n === chunk.length ? chunk : chunk.subarray(0, n))) return void req.once('drain', pump);
      }
      req.end(tail);
    };
    req.write(head);
    pump();
  });
}

async function download(url: string, token: string, id: string): Promise<number> {
  const response = await fetch(`${url}/media/${id}`, { headers: { authorization: `Bearer ${token}` } });
  let total = 0;
  for await (const chunk of response.body!) total += (chunk as Uint8Array).length;
  return total;
}

const settle = async (pid: number) => {
  // Settled: the lowest of a few samples taken after the warm-up.
  let low = Infinity;
  for (let i = 0; i < 10; i++) {
    low = Math.min(low, rssOf(pid));
    await new Promise((r) => setTimeout(r, 50));
  }
  return low;
};

/**
 * `steadyTrials` > 1 repeats the steady phase and keeps, for upload and
 * download each, the trial that grew least: a server that holds the file grows
 * by its size in every trial, while the collector's timing on a loaded machine
 * (a test beside a full suite) varies from one trial to the next.
 */
export async function measureUploadRss(fileMiB = 50, steadyTrials = 1): Promise<RssReport> {
  const dir = await buildFixture('small');
  const database = await createTestDatabase('svcbench');
  const port = await freePort();
  const server = spawnCli(['start', dir], {
    env: {
      DATABASE_URL: database.url, PORT: String(port), HOST: '127.0.0.1', JWT_SECRET: TEST_JWT_SECRET, SVC_LOG_LEVEL: 'warn',
      SVC_MEDIA_DIR: mkdtempSync(join(tmpdir(), 'svc-media-bench-')), SVC_MEDIA_MAX_BYTES: String((fileMiB + 1) * MIB),
      SVC_ARGON2_MEMORY_KIB: '1024', SVC_ARGON2_TIME_COST: '1',
      // e.g. BENCH_NODE_OPTIONS=--max-semi-space-size=2 to see how much of the growth is uncollected garbage.
      NODE_OPTIONS: process.env.BENCH_NODE_OPTIONS,
    },
  });
  const opened = await openDatabase({ url: database.url, poolSize: 2 });
  try {
    const url = `http://127.0.0.1:${port}`;
    await waitForServer(server, `${url}/health`);
    const pid = server.child.pid!;
    const token = await mintToken(opened.db, new TokenSigner(TEST_JWT_SECRET, 3600), { role: 'Sales', userId: 'bench' });
    const phase = async (warmBytes: number): Promise<RssPhase> => {
      for (let i = 0; i < 3; i++) {
        const warm = await streamUpload(url, token, warmBytes + i);
        await download(url, token, warm.body.id);
      }
      const baseline = await settle(pid);
      const up = sampler(pid);
      const started = performance.now();
      const reply = await streamUpload(url, token, fileMiB * MIB);
      const uploadMs = performance.now() - started;
      const uploadPeak = up.stop();
      // The download's own growth: from where the process settled after the upload.
      const beforeDownload = await settle(pid);
      const down = sampler(pid);
      const received = await download(url, token, reply.body.id);
      const downloadPeak = down.stop();
      if (received !== fileMiB * MIB) throw new Error(`downloaded ${received} bytes, expected ${fileMiB * MIB}`);
      const mib = (bytes: number) => Math.round((bytes / MIB) * 10) / 10;
      return {
        status: reply.status, uploadMs: Math.round(uploadMs),
        baselineMiB: mib(baseline), uploadPeakMiB: mib(uploadPeak), downloadPeakMiB: mib(downloadPeak),
        uploadGrowthMiB: mib(uploadPeak - baseline), downloadGrowthMiB: mib(downloadPeak - beforeDownload),
      };
    };
    const cold = await phase(MIB);
    let steady = await phase(Math.ceil(fileMiB / 5) * MIB);
    for (let trial = 1; trial < steadyTrials; trial++) {
      const again = await phase(Math.ceil(fileMiB / 5) * MIB);
      steady = {
        ...(again.uploadGrowthMiB < steady.uploadGrowthMiB ? again : steady),
        downloadGrowthMiB: Math.min(again.downloadGrowthMiB, steady.downloadGrowthMiB),
        status: again.status === 201 ? steady.status : again.status,
      };
    }
    return { fileMiB, cold, steady };
  } finally {
    server.child.kill('SIGTERM');
    await server.exited();
    await opened.close();
    await database.drop();
  }
}
