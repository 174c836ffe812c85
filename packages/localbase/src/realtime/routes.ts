// Realtime's REST broadcast endpoints (decision 041): the batch one realtime-js's send() falls back to before a
// channel is joined, and the single one of channel.httpSend(). Both answer 202 with an empty body. A private message
// the caller may not send is skipped by the batch one and refused by the single one (decision 173).
import { Hono } from 'hono';
import type { Context } from 'hono';
import { RateLimiter } from '../auth/ratelimit.ts';
import { isConnectionFailure, isPoolTimeout } from '../db/types.ts';
import { clientIp, rateLimitKey } from '../http/ip.ts';
import type { RealtimeServer } from './server.ts';
import { RealtimeTokenError, type Claims } from './tokens.ts';

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Most messages one batch request may carry. */
export const MAX_BATCH_MESSAGES = 100;
/** REST messages per second per client address (upstream's max_events_per_second is 100, per project). */
export const REST_MESSAGES_PER_SECOND = 100;

interface BatchMessage {
  topic: string;
  event: string;
  payload: Record<string, unknown>;
  private: boolean;
}

/** Ecto's boolean cast: true/false and their string forms "true"/"false"/"1"/"0". */
function castBoolean(v: unknown): boolean | undefined {
  if (v === true || v === 'true' || v === '1') return true;
  if (v === false || v === 'false' || v === '0') return false;
  return undefined;
}

/**
 * The batch body as Realtime's BatchBroadcast changeset takes it (lib/realtime/tenants/batch_broadcast.ex): messages
 * required (a list of 1 to MAX_BATCH_MESSAGES objects), each with a non-blank string topic and event and an object
 * payload, private a boolean. Errors have the changeset's shape, one object per message ({} for a valid one).
 */
function checkBatch(body: unknown): { messages: BatchMessage[] } | { errors: Record<string, unknown> } {
  const list = isObject(body) ? body.messages : undefined;
  if (list === undefined || list === null || (Array.isArray(list) && list.length === 0)) return { errors: { messages: ["can't be blank"] } };
  if (!Array.isArray(list) || !list.every(isObject)) return { errors: { messages: ['is invalid'] } };
  if (list.length > MAX_BATCH_MESSAGES) return { errors: { messages: [`should have at most ${MAX_BATCH_MESSAGES} item(s)`] } };
  let failed = false;
  const messages: BatchMessage[] = [];
  const errors = list.map((m) => {
    const e: Record<string, string[]> = {};
    for (const field of ['topic', 'event'] as const) {
      const v = m[field];
      if (v === undefined || v === null || (typeof v === 'string' && v.trim() === '')) e[field] = ["can't be blank"];
      else if (typeof v !== 'string') e[field] = ['is invalid'];
    }
    if (m.payload === undefined || m.payload === null) e.payload = ["can't be blank"];
    else if (!isObject(m.payload)) e.payload = ['is invalid'];
    const isPrivate = m.private === undefined || m.private === null ? false : castBoolean(m.private);
    if (isPrivate === undefined) e.private = ['is invalid'];
    if (Object.keys(e).length > 0) failed = true;
    else messages.push({ topic: m.topic as string, event: m.event as string, payload: m.payload as Record<string, unknown>, private: isPrivate! });
    return e;
  });
  return failed ? { errors: { messages: errors } } : { messages };
}

export function realtimeRoutes(realtime: RealtimeServer): Hono {
  const app = new Hono();
  const limiter = new RateLimiter(REST_MESSAGES_PER_SECOND, 1);
  /**
   * Counts `n` messages for the caller's address, or (counting none) a 429 with Realtime's message when they do not
   * fit in the current second: check_rate_limit of batch_broadcast.ex / single_broadcast.ex.
   */
  const overLimit = (c: Context, n: number): Response | undefined => {
    const key = rateLimitKey(clientIp(c));
    const left = limiter.available(key);
    if (left > 0 && n <= left) {
      for (let i = 0; i < n; i++) limiter.take(key);
      return undefined;
    }
    c.header('Retry-After', String(Math.max(1, limiter.retryAfter(key))));
    const message = left <= 0 ? 'You have exceeded your rate limit' : 'Too many messages to broadcast, please reduce the batch size';
    return c.json({ message }, 429);
  };

  // The caller: the bearer token, else the apikey (the apikey itself was checked by the room's apikey guard).
  const caller = async (c: Context): Promise<Claims | Response> => {
    const auth = c.req.header('authorization');
    const bearer = auth?.match(/^Bearer\s+(.+)$/i)?.[1];
    try {
      if (bearer && !bearer.startsWith('sb_')) return await realtime.tokens.accessToken(bearer);
      return await realtime.tokens.apiKey(c.req.header('apikey') ?? c.req.query('apikey'));
    } catch (err) {
      if (err instanceof RealtimeTokenError) return c.json({ message: 'Unauthorized' }, 401);
      throw err;
    }
  };
  /** The database could not be reached, or no pooled connection was free in time. */
  const unreachable = (err: unknown) => isConnectionFailure(err) || isPoolTimeout(err);
  // Private messages are sent only when realtime.messages' policies let the caller write to the topic. The batch
  // endpoint skips the others, also when the check could not run (the database out of reach), as upstream.
  const maySend = (claims: Claims, topic: string, isPrivate: boolean) =>
    realtime.mayWrite(claims, topic, isPrivate, 'broadcast').catch((err: unknown) => {
      if (unreachable(err)) return false;
      throw err;
    });

  app.post('/api/broadcast', async (c) => {
    const claims = await caller(c);
    if (claims instanceof Response) return claims;
    const body: unknown = await c.req.json().catch(() => undefined);
    const checked = checkBatch(body);
    if ('errors' in checked) return c.json({ errors: checked.errors }, 422);
    const { messages } = checked;
    const limited = overLimit(c, messages.length);
    if (limited) return limited;
    for (const m of messages) {
      if (!(await maySend(claims, m.topic, m.private))) continue; // skipped silently, still 202, as upstream
      realtime.broadcastFromRest(m.topic, m.private, m.event, { json: m.payload });
    }
    return c.body(null, 202);
  });

  app.post('/api/broadcast/:topic/events/:event', async (c) => {
    const claims = await caller(c);
    if (claims instanceof Response) return claims;
    const topic = c.req.param('topic');
    const event = c.req.param('event');
    const isPrivate = c.req.query('private') === 'true';
    const limited = overLimit(c, 1);
    if (limited) return limited;
    const type = c.req.header('content-type') ?? '';
    let payload: { json: unknown } | { bytes: Uint8Array };
    if (type.startsWith('application/octet-stream')) payload = { bytes: new Uint8Array(await c.req.arrayBuffer()) };
    else {
      // Phoenix's JSON parser: an empty body is {}, a value that is not an object comes as {"_json": value}, and the
      // controller sends that map (decision 186).
      const text = await c.req.text();
      let json: unknown;
      try {
        json = text === '' ? {} : JSON.parse(text);
      } catch {
        return c.json({ error: 'The body must be a JSON value' }, 422);
      }
      payload = { json: isObject(json) ? json : { _json: json } };
    }
    // The single endpoint tells why a private message was not sent, with upstream's status and message.
    let verdict;
    try {
      verdict = await realtime.writeVerdict(claims, topic, isPrivate, 'broadcast');
    } catch (err) {
      if (isPoolTimeout(err)) return c.json({ message: 'Connection pool exhausted' }, 429);
      if (isConnectionFailure(err)) return c.json({ message: 'Tenant database unavailable' }, 422);
      throw err;
    }
    if (verdict === 'denied') return c.json({ message: 'Unauthorized' }, 403);
    if (verdict === 'policy_error') return c.json({ message: 'RLS policy error' }, 422);
    if (verdict === 'query_canceled') return c.json({ message: 'Query canceled' }, 422);
    realtime.broadcastFromRest(topic, isPrivate, event, payload);
    return c.body(null, 202);
  });

  return app;
}
