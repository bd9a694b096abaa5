/**
 * An instance in another process shares the tier; when it dies without a
 * word (SIGKILL), its presence entries expire and the survivors announce the
 * leaves.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, TEST_JWT_SECRET } from '../helpers/service.ts';
import { startRealtimeService } from './service.ts';
import { RtClient } from './client.ts';

const HEARTBEAT_MS = '100';
let survivor: Awaited<ReturnType<typeof startRealtimeService>>;
let child: ChildProcess | null = null;
const clients: RtClient[] = [];

function startChild(dir: string, databaseUrl: string): Promise<string> {
  child = spawn(process.execPath, ['--import', 'tsx', join(import.meta.dirname, 'fixtures', 'instance.ts'), dir], {
    cwd: REPO_ROOT,
    env: { ...process.env, DATABASE_URL: databaseUrl, JWT_SECRET: TEST_JWT_SECRET, SVC_REALTIME_HEARTBEAT_MS: HEARTBEAT_MS },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    let out = '';
    child!.stdout!.on('data', (chunk) => {
      out += chunk;
      const line = out.split('\n').find((l) => l.startsWith('{'));
      if (line) resolve(JSON.parse(line).url);
    });
    child!.once('exit', (code) => reject(new Error(`instance exited early (${code})`)));
  });
}

beforeAll(async () => {
  survivor = await startRealtimeService({ env: { SVC_REALTIME_HEARTBEAT_MS: HEARTBEAT_MS } });
});

afterAll(async () => {
  child?.kill('SIGKILL');
  for (const c of clients) c.close();
  await survivor?.close();
  await survivor?.drop();
});

describe('realtime: an instance in another process', () => {
  it('shares messages, then its users leave when it is killed', async () => {
    const url = await startChild(survivor.dir, survivor.database.url);
    const watcher = await RtClient.connect(survivor.url, await survivor.token({ userId: 'watcher', role: 'Viewer' }));
    const ghost = await RtClient.connect(url, await survivor.token({ userId: 'ghost', role: 'Viewer' }));
    clients.push(watcher, ghost);
    await watcher.subscribe('room:crash');
    await ghost.subscribe('room:crash');
    expect(await watcher.next((f) => f.op === 'join')).toEqual({ op: 'join', channel: 'room:crash', userId: 'ghost' });
    watcher.send({ op: 'publish', channel: 'room:crash', data: 'across processes' });
    expect((await ghost.next((f) => f.op === 'message')).data).toBe('across processes');

    child!.kill('SIGKILL');
    expect(await watcher.next((f) => f.op === 'leave', 5000)).toEqual({ op: 'leave', channel: 'room:crash', userId: 'ghost' });
    watcher.send({ op: 'presence', channel: 'room:crash' });
    expect((await watcher.next((f) => f.op === 'presence')).members.map((m: { userId: string }) => m.userId)).toEqual(['watcher']);
  });
});
