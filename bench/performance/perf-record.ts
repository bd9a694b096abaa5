/**
 * `perf record` of this process over a measured window only (profile.ts,
 * PROFILE_PERF=FILE.data): perf starts with its events disabled and is
 * switched on and off through its control FIFOs, each switch acknowledged,
 * so the samples cover exactly the requests counted. Linux perf 5.9 or later.
 */
import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface PerfRecording {
  stop(): Promise<void>;
}

export async function recordPerf(file: string): Promise<PerfRecording> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-perf-'));
  const ctl = join(dir, 'ctl');
  const ack = join(dir, 'ack');
  execFileSync('mkfifo', [ctl, ack]);
  const perf = spawn('perf', ['record', '-F', '1999', '-g', '-p', String(process.pid), '-D', '-1', '--control', `fifo:${ctl},${ack}`, '-o', file], {
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const exited = new Promise<void>((done) => perf.once('exit', () => done()));
  // Each open waits for perf to open the other end.
  const control = await open(ctl, 'w');
  const acks = await open(ack, 'r');
  const send = async (command: string) => {
    await control.write(`${command}\n`);
    const buffer = Buffer.alloc(16);
    const { bytesRead } = await acks.read(buffer, 0, buffer.length, null);
    if (!buffer.subarray(0, bytesRead).toString().startsWith('ack')) throw new Error(`perf did not acknowledge ${command}`);
  };
  await send('enable');
  return {
    async stop() {
      await send('disable');
      perf.kill('SIGINT');
      await exited;
      await control.close();
      await acks.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
