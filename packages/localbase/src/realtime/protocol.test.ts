import { describe, expect, it } from 'vitest';
import { decodeBinary, decodeText, encodeBinaryBroadcast, encodeChangeFrame, encodeText, FrameError, stringifyJson } from './protocol.ts';

/** A kind 3 frame as realtime-js builds it. */
function push(joinRef: string, ref: string, topic: string, event: string, meta: string, encoding: number, payload: Uint8Array): Uint8Array {
  const parts = [joinRef, ref, topic, event, meta].map((s) => Buffer.from(s));
  return Buffer.concat([Buffer.from([3, ...parts.map((p) => p.length), encoding]), ...parts, payload]);
}

describe('realtime frames', () => {
  it('decodes 2.0.0 arrays and 1.0.0 objects', () => {
    expect(decodeText('["1","2","realtime:a","phx_join",{"x":1}]', '2.0.0')).toEqual({
      join_ref: '1', ref: '2', topic: 'realtime:a', event: 'phx_join', payload: { x: 1 },
    });
    expect(decodeText('{"topic":"phoenix","event":"heartbeat","payload":{},"ref":"5"}', '1.0.0')).toEqual({
      join_ref: null, ref: '5', topic: 'phoenix', event: 'heartbeat', payload: {},
    });
  });

  it('refuses frames of the wrong shape', () => {
    expect(() => decodeText('{"topic":"a"}', '2.0.0')).toThrow(FrameError);
    expect(() => decodeText('[1,2,3]', '2.0.0')).toThrow(FrameError);
    expect(() => decodeText('not json', '1.0.0')).toThrow(FrameError);
    expect(() => decodeText('[null,null,5,"e",{}]', '2.0.0')).toThrow(FrameError);
  });

  it('encodes 1.0.0 without join_ref and 2.0.0 as an array', () => {
    const msg = { join_ref: '1', ref: null, topic: 't', event: 'e', payload: {} };
    expect(JSON.parse(encodeText(msg, '1.0.0'))).toEqual({ topic: 't', event: 'e', payload: {}, ref: null });
    expect(JSON.parse(encodeText(msg, '2.0.0'))).toEqual(['1', null, 't', 'e', {}]);
  });

  it('writes a postgres change frame around its data’s JSON exactly as the whole message would be encoded', () => {
    const topic = 'realtime:notes "ü" \\ \u2028 👋';
    const data = { schema: 'public', table: 'notes', type: 'UPDATE', record: { body: 'a"b\\c\n'.repeat(3), n: 1.5, none: null }, errors: null };
    for (const vsn of ['1.0.0', '2.0.0'] as const) {
      const whole = encodeText({ join_ref: null, ref: null, topic, event: 'postgres_changes', payload: { ids: [3, 1], data } }, vsn);
      expect(encodeChangeFrame(topic, [3, 1], stringifyJson(data), vsn)).toBe(whole);
    }
  });

  it('decodes a kind 3 broadcast push, multi-byte text included', () => {
    const body = Buffer.from(JSON.stringify({ s: 'é✓' }));
    const d = decodeBinary(push('1', '22', 'realtime:é', 'ëv', '{"persist":true}', 1, body));
    expect(d).toMatchObject({ join_ref: '1', ref: '22', topic: 'realtime:é', userEvent: 'ëv', metadata: { persist: true }, encoding: 1 });
    expect(Buffer.from(d.payload).toString()).toBe('{"s":"é✓"}');
  });

  it('refuses truncated, unknown or malformed binary frames', () => {
    expect(() => decodeBinary(new Uint8Array([4, 0, 0, 0, 0, 0, 1]))).toThrow(FrameError);
    expect(() => decodeBinary(new Uint8Array([3, 5, 0, 0, 0, 0, 1, 65]))).toThrow(FrameError);
    expect(() => decodeBinary(push('', '', 't', 'e', '', 7, new Uint8Array()))).toThrow(FrameError);
    expect(() => decodeBinary(push('', '', 't', 'e', '[1]', 1, new Uint8Array()))).toThrow(FrameError);
    expect(() => decodeBinary(new Uint8Array([3, 0, 0, 1, 0, 0, 1, 0xff]))).toThrow(FrameError);
  });

  it('encodes kind 4, and refuses fields longer than 255 bytes', () => {
    const buf = encodeBinaryBroadcast('realtime:a', 'ev', 0, new Uint8Array([9, 8]))!;
    expect([...buf]).toEqual([4, 10, 2, 0, 0, ...Buffer.from('realtime:a'), ...Buffer.from('ev'), 9, 8]);
    expect(encodeBinaryBroadcast('x'.repeat(256), 'e', 1, new Uint8Array())).toBeNull();
  });

  it('writes JSON at any depth, as JSON.stringify writes what it can (ADR 166)', () => {
    const levels = 50_000;
    const deep = (inner: string) => '{"a":['.repeat(levels) + inner + ']}'.repeat(levels);
    const text = deep('1,"x\\"y",null,true,{"k":-0.5,"é":[]}');
    expect(() => JSON.stringify(JSON.parse(text))).toThrow(RangeError);
    expect(stringifyJson(JSON.parse(text))).toBe(text);
    // what JSON.stringify leaves out or turns into null, and toJSON, the same way in the deep case
    const sample = { u: undefined, f: () => 1, d: new Date(0), arr: [undefined, () => 1, Symbol('s'), NaN], s: 'a"b', n: null };
    const wrapped = JSON.parse(deep('0')) as { a: unknown[] };
    let inner = wrapped;
    while (Array.isArray(inner.a) && typeof inner.a[0] === 'object') inner = inner.a[0] as { a: unknown[] };
    inner.a = [sample];
    expect(stringifyJson(wrapped)).toBe(deep(JSON.stringify(sample)));
    expect(stringifyJson(sample)).toBe(JSON.stringify(sample));
  });
});
