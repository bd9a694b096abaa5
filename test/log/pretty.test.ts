/** SVC_LOG_FORMAT=pretty: the same redacted records, one readable line each. */
import { describe, expect, it } from 'vitest';
import { createLogger, formatLine } from '../../runtime/log/index.ts';

function capture() {
  const lines: string[] = [];
  return { lines, stream: { write: (text: string) => void lines.push(text) } };
}

describe('pretty logs', () => {
  it('writes time, level, message and fields, without JSON', () => {
    const { lines, stream } = capture();
    const log = createLogger('info', 'svc-gen', stream, 'pretty');
    log.info({ port: 3000, database: 'embedded' }, 'svc-gen server listening');
    log.debug('not at info');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: svc-gen server listening {"port":3000,"database":"embedded"}\n$/);
  });

  it('redacts as the JSON format does', () => {
    const { lines, stream } = capture();
    createLogger('info', 'svc-gen', stream, 'pretty').warn({ password: 'hunter2', user: { token: 't0k3n' } }, 'careful');
    expect(lines[0]).toContain('{"password":"[redacted]","user":{"token":"[redacted]"}}');
    expect(lines[0]).not.toContain('hunter2');
    expect(lines[0]).not.toContain('t0k3n');
  });

  it('shows an error with its stack, indented', () => {
    const { lines, stream } = capture();
    createLogger('info', 'svc-gen', stream, 'pretty').error({ err: new Error('boom') }, 'request failed');
    expect(lines[0]).toMatch(/ERROR: request failed[^\n]*\n[\s\S]*\n {4,}Error: boom\n {5,}at /);
  });

  it('passes a line that is not JSON through, and colours only when asked', () => {
    expect(formatLine('plain text')).toBe('plain text\n');
    expect(formatLine(JSON.stringify({ level: 40, time: 0, msg: 'm' }))).not.toContain('\x1b[');
    expect(formatLine(JSON.stringify({ level: 40, time: 0, msg: 'm' }), true)).toContain('\x1b[33mWARN\x1b[39m');
  });
});
