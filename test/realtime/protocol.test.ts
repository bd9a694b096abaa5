import { describe, expect, it } from 'vitest';
import { FrameError, frames, parseFrame } from '../../runtime/realtime/protocol.ts';
import { rawMember } from '../../runtime/realtime/raw-json.ts';
import { decode, encode } from '../../runtime/realtime/transport.ts';

const code = (text: string) => {
  const parsed = parseFrame(text);
  return parsed instanceof FrameError ? parsed.code : null;
};

describe('realtime protocol: parsing client frames', () => {
  it('accepts the five ops', () => {
    expect(parseFrame('{"op":"subscribe","channel":"room:1"}')).toEqual({ op: 'subscribe', channel: 'room:1' });
    expect(parseFrame('{"op":"unsubscribe","channel":"a"}')).toEqual({ op: 'unsubscribe', channel: 'a' });
    expect(parseFrame('{"op":"presence","channel":"a"}')).toEqual({ op: 'presence', channel: 'a' });
    expect(parseFrame('{"op":"ping"}')).toEqual({ op: 'ping' });
    expect(parseFrame('{"op":"publish","channel":"a","data":{"x":1}}')).toEqual({ op: 'publish', channel: 'a', raw: '{"x":1}' });
  });

  it('names each malformed frame with a code', () => {
    expect(code('{"op":"subscribe"')).toBe('malformed_json');
    expect(code('[1,2]')).toBe('invalid_frame');
    expect(code('null')).toBe('invalid_frame');
    expect(code('{"op":"dance","channel":"a"}')).toBe('unknown_op');
    expect(code('{"channel":"a"}')).toBe('unknown_op');
    expect(code('{"op":"subscribe"}')).toBe('missing_channel');
    expect(code('{"op":"subscribe","channel":""}')).toBe('missing_channel');
    expect(code('{"op":"subscribe","channel":42}')).toBe('invalid_channel');
    expect(code(`{"op":"subscribe","channel":"${'x'.repeat(201)}"}`)).toBe('invalid_channel');
    expect(code('{"op":"subscribe","channel":"a\\nb"}')).toBe('invalid_channel');
    expect(code('{"op":"publish","channel":"a"}')).toBe('missing_data');
  });

  it('treats an explicit null as data', () => {
    expect(parseFrame('{"op":"publish","channel":"a","data":null}')).toEqual({ op: 'publish', channel: 'a', raw: 'null' });
  });
});

describe('realtime protocol: payloads stay opaque', () => {
  it('keeps the exact source text of data', () => {
    const text = '{ "op" : "publish", "data" : {"big": 12345678901234567890, "f": 1.0, "s": "}\\"]" , "a":[1, {"b":[]}]} , "channel":"c"}';
    expect(rawMember(text, 'data')).toBe('{"big": 12345678901234567890, "f": 1.0, "s": "}\\"]" , "a":[1, {"b":[]}]}');
    expect(rawMember('{"data":-1.50e+3}', 'data')).toBe('-1.50e+3');
    expect(rawMember('{"data":"x\\\\","y":1}', 'data')).toBe('"x\\\\"');
    expect(rawMember('{"data":1,"data":[true]}', 'data')).toBe('[true]');
    expect(rawMember('{"d\\u0061ta":false}', 'data')).toBe('false');
    expect(rawMember('{"other":1}', 'data')).toBeUndefined();
  });

  it('renders a message frame around the raw payload', () => {
    const frame = frames.message('room:1', '{"n":1.0}', 'u1');
    expect(frame).toBe('{"op":"message","channel":"room:1","data":{"n":1.0},"from":"u1"}');
    expect(JSON.parse(frames.message('c', 'null', null))).toEqual({ op: 'message', channel: 'c', data: null, from: null });
  });

  it('round-trips envelopes between instances', () => {
    const message = { kind: 'message', origin: 'i1', tenant: null, channel: 'c', raw: '{"a":1.0}', from: 'u' } as const;
    expect(decode(encode(message))).toEqual(message);
    const join = { kind: 'join', origin: 'i1', tenant: 't', channel: 'c', userId: 'u' } as const;
    expect(decode(encode(join))).toEqual(join);
    expect(decode('not json')).toBeNull();
  });
});
