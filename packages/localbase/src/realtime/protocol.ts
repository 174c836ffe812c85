// The Phoenix channel frames realtime-js speaks (decision 041): vsn 1.0.0 JSON objects, vsn 2.0.0 JSON arrays, and
// vsn 2.0.0's binary user-broadcast frames (kind 3 from clients, kind 4 to clients).

export type Vsn = '1.0.0' | '2.0.0';
export const SUPPORTED_VSN: readonly Vsn[] = ['1.0.0', '2.0.0'];

export interface Message {
  join_ref: string | null;
  ref: string | null;
  topic: string;
  event: string;
  payload: Record<string, unknown>;
}

/** A broadcast from a client's binary frame (kind 3): the payload bytes as sent, JSON (1) or raw (0). */
export interface BinaryBroadcastPush {
  join_ref: string | null;
  ref: string | null;
  topic: string;
  userEvent: string;
  metadata: Record<string, unknown> | undefined;
  encoding: 0 | 1;
  payload: Uint8Array;
}

const KIND_USER_BROADCAST_PUSH = 3;
const KIND_USER_BROADCAST = 4;

export class FrameError extends Error {}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const refOf = (v: unknown): string | null => (typeof v === 'string' ? v : typeof v === 'number' ? String(v) : null);

/** A text frame: an object (1.0.0) or a 5-element array (2.0.0). */
export function decodeText(text: string, vsn: Vsn): Message {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    throw new FrameError('frame is not JSON');
  }
  let joinRef: unknown, ref: unknown, topic: unknown, event: unknown, payload: unknown;
  if (vsn === '2.0.0') {
    if (!Array.isArray(raw) || raw.length !== 5) throw new FrameError('frame is not a [join_ref, ref, topic, event, payload] array');
    [joinRef, ref, topic, event, payload] = raw as unknown[];
  } else {
    if (!isObject(raw)) throw new FrameError('frame is not a JSON object');
    ({ join_ref: joinRef, ref, topic, event, payload } = raw);
  }
  if (typeof topic !== 'string' || typeof event !== 'string') throw new FrameError('frame has no topic or event');
  return { join_ref: refOf(joinRef), ref: refOf(ref), topic, event, payload: isObject(payload) ? payload : {} };
}

/** A binary frame from a 2.0.0 client: only kind 3 (user broadcast push) exists. */
export function decodeBinary(buf: Uint8Array): BinaryBroadcastPush {
  if (buf.length < 7 || buf[0] !== KIND_USER_BROADCAST_PUSH) throw new FrameError('unknown binary frame kind');
  const [joinRefLen, refLen, topicLen, eventLen, metaLen, encoding] = [buf[1]!, buf[2]!, buf[3]!, buf[4]!, buf[5]!, buf[6]!];
  if (encoding !== 0 && encoding !== 1) throw new FrameError('unknown payload encoding');
  let at = 7;
  const dec = new TextDecoder('utf-8', { fatal: true });
  const take = (n: number): Uint8Array => {
    if (at + n > buf.length) throw new FrameError('binary frame is shorter than its header says');
    const part = buf.subarray(at, at + n);
    at += n;
    return part;
  };
  try {
    const joinRef = dec.decode(take(joinRefLen));
    const ref = dec.decode(take(refLen));
    const topic = dec.decode(take(topicLen));
    const userEvent = dec.decode(take(eventLen));
    const metaText = dec.decode(take(metaLen));
    let metadata: Record<string, unknown> | undefined;
    if (metaText) {
      const m: unknown = JSON.parse(metaText);
      if (!isObject(m)) throw new FrameError('metadata is not a JSON object');
      metadata = m;
    }
    return {
      join_ref: joinRef || null,
      ref: ref || null,
      topic,
      userEvent,
      metadata,
      encoding,
      payload: buf.subarray(at),
    };
  } catch (err) {
    if (err instanceof FrameError) throw err;
    throw new FrameError('binary frame is not valid UTF-8 / JSON');
  }
}

export function encodeText(msg: Message, vsn: Vsn): string {
  // The 1.0.0 serializer never sends join_ref.
  if (vsn === '1.0.0') return stringifyJson({ topic: msg.topic, event: msg.event, payload: msg.payload, ref: msg.ref });
  return stringifyJson([msg.join_ref, msg.ref, msg.topic, msg.event, msg.payload]);
}

/**
 * A `postgres_changes` frame, `{ ids, data }` with `data` already written as JSON: the same text as encodeText of
 * `{ join_ref: null, ref: null, topic, event: 'postgres_changes', payload: { ids, data } }`, built without
 * serialising the data again for each channel.
 */
export function encodeChangeFrame(topic: string, ids: number[], dataJson: string, vsn: Vsn): string {
  const payload = `{"ids":${JSON.stringify(ids)},"data":${dataJson}}`;
  if (vsn === '1.0.0') return `{"topic":${JSON.stringify(topic)},"event":"postgres_changes","payload":${payload},"ref":null}`;
  return `[null,null,${JSON.stringify(topic)},"postgres_changes",${payload}]`;
}

type Piece = { text: string } | { value: unknown };

/**
 * JSON.stringify's text at any depth. JSON.stringify recurses, and a value nested some thousands of levels deep
 * (JSON.parse reads it without limit, and a client may send one) overflows the stack; upstream's encoder has no such
 * limit, so such a value is written out with a work list of its own instead (ADR 166).
 */
export function stringifyJson(value: unknown): string {
  try {
    return JSON.stringify(value);
  } catch (err) {
    if (!(err instanceof RangeError)) throw err;
  }
  const out: string[] = [];
  const prepared = (v: unknown): unknown =>
    v !== null && typeof v === 'object' && typeof (v as { toJSON?: unknown }).toJSON === 'function' ? (v as { toJSON: () => unknown }).toJSON() : v;
  const todo: Piece[] = [{ value: prepared(value) }];
  const absent = (v: unknown): boolean => v === undefined || typeof v === 'function' || typeof v === 'symbol';
  while (todo.length > 0) {
    const piece = todo.pop()!;
    if ('text' in piece) {
      out.push(piece.text);
      continue;
    }
    const v = piece.value;
    if (v === null || typeof v !== 'object') {
      out.push(absent(v) ? 'null' : JSON.stringify(v));
      continue;
    }
    const parts: Piece[] = [];
    if (Array.isArray(v)) {
      parts.push({ text: '[' });
      v.forEach((item, i) => {
        if (i > 0) parts.push({ text: ',' });
        parts.push({ value: prepared(item) });
      });
      parts.push({ text: ']' });
    } else {
      parts.push({ text: '{' });
      for (const [k, raw] of Object.entries(v)) {
        const item = prepared(raw);
        if (absent(item)) continue;
        parts.push({ text: `${parts.length > 1 ? ',' : ''}${JSON.stringify(k)}:` }, { value: item });
      }
      parts.push({ text: '}' });
    }
    for (let i = parts.length - 1; i >= 0; i--) todo.push(parts[i]!);
  }
  return out.join('');
}

/** Kind 4, the binary broadcast 2.0.0 clients decode. Null when a field is longer than its one-byte length allows. */
export function encodeBinaryBroadcast(
  topic: string,
  userEvent: string,
  encoding: 0 | 1,
  payload: Uint8Array,
  metadata?: Record<string, unknown>,
): Buffer | null {
  const t = Buffer.from(topic, 'utf8');
  const e = Buffer.from(userEvent, 'utf8');
  const m = metadata && Object.keys(metadata).length > 0 ? Buffer.from(JSON.stringify(metadata), 'utf8') : Buffer.alloc(0);
  if (t.length > 255 || e.length > 255 || m.length > 255) return null;
  const head = Buffer.from([KIND_USER_BROADCAST, t.length, e.length, m.length, encoding]);
  return Buffer.concat([head, t, e, m, payload]);
}
