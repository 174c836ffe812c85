// The Realtime room (decision 041): /realtime/v1/websocket, Phoenix channels as realtime-js speaks them — join,
// leave, heartbeat, access_token refresh, broadcast (self, ack) and presence — on the HTTP server of the other rooms.
import { randomBytes, randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket, type RawData } from 'ws';
import {
  decodeBinary,
  decodeText,
  encodeBinaryBroadcast,
  encodeChangeFrame,
  encodeText,
  FrameError,
  stringifyJson,
  SUPPORTED_VSN,
  type BinaryBroadcastPush,
  type Message,
  type Vsn,
} from './protocol.ts';
import { Fanout } from './fanout.ts';
import { RealtimeTokenError, type Claims, type RealtimeTokens } from './tokens.ts';
import type { ChannelAuthorization, Extension, ReadPolicies, WriteVerdict } from './authorization.ts';
import type { ChangeSubscriber, PostgresChanges, PreparedSubscriptions } from './changes.ts';
import { isDatabaseOutOfReach } from '../db/types.ts';

export const WEBSOCKET_PATH = '/realtime/v1/websocket';
/** Largest frame accepted from a client (bytes): a bigger one closes the socket with 1009 "message too big". */
export const MAX_FRAME_BYTES = 1024 * 1024;
/**
 * Bytes queued for a socket that is not reading them (beyond what the kernel buffers): past this, plus the largest
 * frame sent on the socket (ADR 167), the socket is dropped, as a client this far behind is stuck or hostile, and
 * queueing on would grow the server's memory without bound (N such members of a room hold N copies of every
 * message). realtime-js reconnects and joins again.
 */
export const MAX_BUFFERED_BYTES = 16 * 1024 * 1024;
/** A socket that sends nothing (not even a heartbeat, every 25 s from realtime-js) for this long is closed. */
export const IDLE_TIMEOUT_MS = 60_000;

/** Per-socket limits (upstream's defaults are per project; localbase counts per client connection). */
export interface RealtimeLimits {
  /** Channels one socket may have joined at once (upstream max_channels_per_client). */
  maxChannelsPerSocket: number;
  /** Joins per second on one socket; more closes the socket (upstream max_joins_per_second). */
  maxJoinsPerSecond: number;
  /** Messages per second on one socket; more shuts the channel down (upstream max_events_per_second). */
  maxEventsPerSecond: number;
}

export const DEFAULT_REALTIME_LIMITS: RealtimeLimits = { maxChannelsPerSocket: 100, maxJoinsPerSecond: 100, maxEventsPerSecond: 100 };

const SHUTDOWN_CODE = 1001; // "going away": the server closes a socket on purpose
const TOPIC_PREFIX = 'realtime:';
const MAX_TIMER_MS = 2 ** 31 - 1;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
/** Booleans of the join config arrive as booleans or "true"/"false" strings. */
const flag = (v: unknown): boolean => v === true || (typeof v === 'string' && v.toLowerCase() === 'true');

/** One broadcast on its way to the members of a channel. */
interface Broadcast {
  event: string;
  /** The JSON payload, or the raw bytes (encoding 0) of a binary one. */
  json?: unknown;
  bytes?: Uint8Array;
  /** The original binary frame's payload bytes when it came as JSON over a 2.0.0 socket (re-sent as kind 4). */
  jsonBytes?: Uint8Array;
}

type PresenceMeta = Record<string, unknown> & { phx_ref: string };

/** Members of one channel name: public and private names are separate. */
class Room {
  readonly members = new Set<Channel>();
  /** Broadcasts and presence diffs to the members, in order, a slice per event-loop turn (decision 163). */
  readonly fanout = new Fanout<Channel>();
  /** presence key → the metas tracked under it, one per member. */
  readonly presence = new Map<string, Map<Channel, PresenceMeta>>();
}

class Connection {
  readonly channels = new Map<string, Channel>();
  #joins: number[] = [];
  #events: number[] = [];
  #idle: ReturnType<typeof setTimeout> | undefined;
  /** Whether a malformed frame from this socket was logged already. */
  warnedMalformed = false;
  /** The largest frame sent on this socket (bytes; small text frames by length), which the far-behind bound allows for. */
  #largestFrame = 0;
  readonly ws: WebSocket;
  readonly vsn: Vsn;
  readonly apiKeyClaims: Claims;
  constructor(ws: WebSocket, vsn: Vsn, apiKeyClaims: Claims) {
    this.ws = ws;
    this.vsn = vsn;
    this.apiKeyClaims = apiKeyClaims;
    this.touch();
  }

  touch(): void {
    clearTimeout(this.#idle);
    this.#idle = setTimeout(() => this.ws.close(1000, 'idle timeout'), IDLE_TIMEOUT_MS);
    unref(this.#idle);
  }

  stopTimers(): void {
    clearTimeout(this.#idle);
  }

  send(msg: Message): void {
    this.sendRaw(encodeText(msg, this.vsn));
  }

  sendRaw(text: string): void {
    if (this.ws.readyState !== this.ws.OPEN) return;
    this.ws.send(text);
    // the string's length, unless it could be a frame near the bound: then its UTF-8 size (up to 3 bytes a unit)
    this.#dropIfFarBehind(text.length * 3 > MAX_BUFFERED_BYTES ? Buffer.byteLength(text) : text.length);
  }

  sendBinary(buf: Buffer): void {
    if (this.ws.readyState !== this.ws.OPEN) return;
    this.ws.send(buf, { binary: true });
    this.#dropIfFarBehind(buf.length);
  }

  /** A text frame already encoded in UTF-8 (one encoding for every member of a fan-out). */
  sendText(utf8: Buffer): void {
    if (this.ws.readyState !== this.ws.OPEN) return;
    this.ws.send(utf8, { binary: false });
    this.#dropIfFarBehind(utf8.length);
  }

  /**
   * A close frame would only queue behind the rest: the connection is cut (the client sees 1006). The bound grows by
   * the largest frame sent on the socket: a client reading along that was handed one frame larger than the bound
   * (the presence state of a room of many big metas) is behind by that frame, not stuck.
   */
  #dropIfFarBehind(frameBytes: number): void {
    if (frameBytes > this.#largestFrame) this.#largestFrame = frameBytes;
    if (this.ws.bufferedAmount > MAX_BUFFERED_BYTES + this.#largestFrame) this.ws.terminate();
  }

  reply(req: { topic: string; ref: string | null; join_ref: string | null }, status: 'ok' | 'error', response: Record<string, unknown> = {}): void {
    this.send({ join_ref: req.join_ref, ref: req.ref, topic: req.topic, event: 'phx_reply', payload: { status, response } });
  }

  /** Sliding one-second windows: true when the limit is exceeded. */
  tooMany(kind: 'joins' | 'events', limit: number): boolean {
    const now = Date.now();
    const list = (kind === 'joins' ? this.#joins : this.#events).filter((t) => now - t < 1000);
    list.push(now);
    if (kind === 'joins') this.#joins = list;
    else this.#events = list;
    return list.length > limit;
  }
}

interface ChannelInit {
  conn: Connection;
  topic: string;
  subTopic: string;
  joinRef: string;
  isPrivate: boolean;
  self: boolean;
  ack: boolean;
  presenceKey: string;
  presenceEnabled: boolean;
  claims: Claims;
  token: string | undefined;
}

class Channel implements ChangeSubscriber {
  readonly conn: Connection;
  readonly topic: string;
  readonly subTopic: string;
  readonly joinRef: string;
  readonly isPrivate: boolean;
  readonly self: boolean;
  readonly ack: boolean;
  readonly presenceKey: string;
  claims: Claims;
  token: string | undefined;
  presenceEnabled: boolean;
  presenceMeta: PresenceMeta | undefined;
  /** The join's `postgres_changes` bindings (re-checked with the new claims after a token refresh). */
  pgBindings: Record<string, unknown>[] = [];
  /** What a private channel's member may read (public channels: everything). */
  read: ReadPolicies = { broadcast: true, presence: true };
  /** Write permissions of a private channel, checked at the first send / track (and again after a token refresh). */
  readonly writes = new Map<Extension, Promise<boolean>>();
  #expiry: ReturnType<typeof setTimeout> | undefined;
  constructor(init: ChannelInit) {
    this.conn = init.conn;
    this.topic = init.topic;
    this.subTopic = init.subTopic;
    this.joinRef = init.joinRef;
    this.isPrivate = init.isPrivate;
    this.self = init.self;
    this.ack = init.ack;
    this.presenceKey = init.presenceKey;
    this.presenceEnabled = init.presenceEnabled;
    this.claims = init.claims;
    this.token = init.token;
  }

  get roomKey(): string {
    return roomKey(this.subTopic, this.isPrivate);
  }

  /** Still the socket's channel for its topic (not left, not replaced by a rejoin). */
  get current(): boolean {
    return this.conn.channels.get(this.topic) === this;
  }

  push(event: string, payload: Record<string, unknown>, joinRef: string | null = this.joinRef): void {
    this.conn.send({ join_ref: joinRef, ref: null, topic: this.topic, event, payload });
  }

  /** A change from the database: fan-out frames carry no join_ref; its data comes as JSON, written once per group. */
  pushChange(ids: number[], dataJson: string): void {
    this.conn.sendRaw(encodeChangeFrame(this.topic, ids, dataJson, this.conn.vsn));
  }

  system(extension: 'system' | 'postgres_changes', status: 'ok' | 'error', message: string): void {
    this.push('system', { extension, status, message, channel: this.subTopic });
  }

  /** Runs `onExpired` when the claims' exp passes (re-armed on every token refresh). */
  armExpiry(onExpired: () => void): void {
    clearTimeout(this.#expiry);
    const exp = this.claims.exp;
    if (typeof exp !== 'number') return;
    const wait = exp * 1000 - Date.now();
    this.#expiry = setTimeout(() => (wait > MAX_TIMER_MS ? this.armExpiry(onExpired) : onExpired()), Math.max(0, Math.min(wait, MAX_TIMER_MS)));
    unref(this.#expiry);
  }

  stopTimers(): void {
    clearTimeout(this.#expiry);
  }
}

/** Timers never keep the process alive (Node); typed loosely because the web app type-checks this file with DOM types. */
const unref = (t: unknown): void => (t as { unref?: () => void } | undefined)?.unref?.();

const roomKey = (subTopic: string, isPrivate: boolean): string => `${isPrivate ? 'private' : 'public'}:${subTopic}`;

const phxRef = (): string => randomBytes(9).toString('base64url');

export interface RealtimeOptions {
  tokens: RealtimeTokens;
  /** RLS checks of private channels; without it only the service role may use private channels. */
  authorization?: ChannelAuthorization;
  /** Postgres changes; without it, joins with postgres bindings get a system error. */
  changes?: PostgresChanges;
  limits?: Partial<RealtimeLimits>;
  quiet?: boolean;
}

export class RealtimeServer {
  readonly #tokens: RealtimeTokens;
  readonly #authorization: ChannelAuthorization | undefined;
  readonly #changes: PostgresChanges | undefined;
  readonly #limits: RealtimeLimits;
  readonly #quiet: boolean;
  readonly #wss = new WebSocketServer({ noServer: true, maxPayload: MAX_FRAME_BYTES, clientTracking: true });
  readonly #rooms = new Map<string, Room>();
  #closed = false;

  constructor(opts: RealtimeOptions) {
    this.#tokens = opts.tokens;
    this.#authorization = opts.authorization;
    this.#changes = opts.changes;
    this.#limits = { ...DEFAULT_REALTIME_LIMITS, ...opts.limits };
    this.#quiet = opts.quiet ?? false;
  }

  get tokens(): RealtimeTokens {
    return this.#tokens;
  }

  /** The HTTP server's 'upgrade' event. Only /realtime/v1/websocket upgrades; anything else is answered 404. */
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    const started = performance.now();
    const url = new URL(req.url ?? '/', 'http://localhost');
    const path = url.pathname.replace(/\/+$/, '');
    const log = (status: number) => {
      if (!this.#quiet) console.log(`GET ${path} ${status} ${(performance.now() - started).toFixed(1)}ms`);
    };
    const refuse = (status: number, body: Record<string, unknown>) => {
      log(status);
      const text = JSON.stringify(body);
      socket.end(
        `HTTP/1.1 ${status} ${status === 401 ? 'Unauthorized' : status === 404 ? 'Not Found' : status === 503 ? 'Service Unavailable' : 'Bad Request'}\r\n` +
          `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(text)}\r\nConnection: close\r\n\r\n${text}`,
      );
    };
    socket.on('error', () => socket.destroy());
    if (path !== WEBSOCKET_PATH) return refuse(404, { error: `No WebSocket endpoint at ${path}` });
    if (this.#closed) return refuse(503, { error: 'Realtime is restarting, please standby' });
    const vsn = (url.searchParams.get('vsn') ?? '1.0.0') as Vsn;
    if (!SUPPORTED_VSN.includes(vsn)) return refuse(400, { error: `Unsupported vsn ${vsn}: 1.0.0 and 2.0.0 are spoken` });
    const header = (name: string) => {
      const v = req.headers[name];
      return Array.isArray(v) ? v[0] : v;
    };
    const key = url.searchParams.get('apikey') ?? header('apikey') ?? header('x-api-key');
    this.#tokens.apiKey(key).then(
      (claims) => {
        if (this.#closed) return refuse(503, { error: 'Realtime is restarting, please standby' });
        this.#wss.handleUpgrade(req, socket, head, (ws) => {
          log(101);
          this.#open(ws, vsn, claims);
        });
      },
      (err: unknown) => {
        const message = err instanceof RealtimeTokenError ? err.message : 'Invalid API key';
        refuse(401, { error: message });
      },
    );
  }

  /** Every open socket is closed with 1001 "going away"; new upgrades are refused. */
  async close(): Promise<void> {
    this.#closed = true;
    for (const ws of this.#wss.clients) ws.close(SHUTDOWN_CODE, 'server shutting down');
    await new Promise<void>((resolve) => {
      const t = setTimeout(() => {
        for (const ws of this.#wss.clients) ws.terminate();
        resolve();
      }, 1000);
      unref(t);
      const check = () => {
        if (this.#wss.clients.size === 0) {
          clearTimeout(t);
          resolve();
        } else unref(setTimeout(check, 10));
      };
      check();
    });
    this.#wss.close();
  }

  /** How many sockets are open (tests, status). */
  get socketCount(): number {
    return this.#wss.clients.size;
  }

  #open(ws: WebSocket, vsn: Vsn, apiKeyClaims: Claims): void {
    const conn = new Connection(ws, vsn, apiKeyClaims);
    ws.on('message', (data: RawData, isBinary: boolean) => {
      conn.touch();
      try {
        if (isBinary) {
          if (vsn !== '2.0.0') throw new FrameError('binary frames need vsn 2.0.0');
          this.#onBinary(conn, decodeBinary(toBytes(data)));
        } else {
          this.#onMessage(conn, decodeText(toBytes(data).toString(), vsn));
        }
      } catch (err) {
        if (err instanceof FrameError) this.#malformed(conn, err);
        else this.#failed(conn, err);
      }
    });
    ws.on('close', () => {
      conn.stopTimers();
      // A throw here would be an uncaught exception (the end of the server), and would leave the other channels in
      // their rooms: each channel is taken out on its own.
      for (const ch of conn.channels.values()) {
        try {
          this.#remove(ch);
        } catch (err) {
          console.error('[localbase] realtime: leaving a channel of a closed socket failed:', err);
        }
      }
      conn.channels.clear();
    });
    ws.on('error', () => ws.terminate());
  }

  /**
   * A frame that cannot be read (not JSON, the wrong shape, a binary frame it cannot decode) is dropped and the socket
   * stays, as Realtime does (it logs MalformedWebSocketMessage and goes on; ADR 169). Logged once per socket.
   */
  #malformed(conn: Connection, err: FrameError): void {
    if (conn.warnedMalformed || this.#quiet) return;
    conn.warnedMalformed = true;
    console.warn(`[localbase] realtime: ignored a malformed frame (${err.message}); further ones on this socket are ignored silently`);
  }

  /** An unexpected failure: logged, and the socket closed with 1011 (the client reconnects and rejoins). */
  #failed(conn: Connection, err: unknown): void {
    console.error('[localbase] realtime: a message failed:', err);
    conn.ws.close(1011, 'unexpected failure');
  }

  #onMessage(conn: Connection, msg: Message): void {
    // Phoenix answers only a heartbeat on its own topic; anything else there is a topic no channel joined (a join
    // of "phoenix" is refused by #join, a leave is ok, any other push "unmatched topic"), as for any other topic.
    if (msg.topic === 'phoenix' && msg.event === 'heartbeat') return conn.reply(msg, 'ok');
    if (msg.event === 'phx_join')
      return void this.#join(conn, msg).catch((err: unknown) => {
        // The database is out of reach (a private channel's policies, postgres changes): Realtime refuses this join
        // only; the socket and its other channels stay, and realtime-js retries the join. db/pg.ts logs the outage.
        if (!isDatabaseOutOfReach(err)) return this.#failed(conn, err);
        conn.reply({ topic: msg.topic, ref: msg.ref, join_ref: msg.ref ?? msg.join_ref }, 'error', {
          reason: 'UnableToConnectToProject: Realtime was unable to connect to the project database',
        });
      });
    const ch = conn.channels.get(msg.topic);
    if (msg.event === 'phx_leave') {
      if (ch && (msg.join_ref === null || msg.join_ref === ch.joinRef)) this.#leave(ch, msg);
      else conn.reply(msg, 'ok');
      return;
    }
    if (!ch || (msg.join_ref !== null && msg.join_ref !== ch.joinRef)) return conn.reply(msg, 'error', { reason: 'unmatched topic' });
    if (conn.tooMany('events', this.#limits.maxEventsPerSecond)) return this.#shutdown(ch, 'Too many messages per second');
    switch (msg.event) {
      case 'broadcast':
        return this.#broadcastFromSocket(ch, msg.ref, this.#jsonBroadcast(msg.payload));
      case 'presence':
        return this.#presence(ch, msg);
      case 'access_token':
        return void this.#refreshToken(ch, msg.payload.access_token).catch((err: unknown) => {
          // The channel's policies cannot be read again (database out of reach): Realtime shuts this channel down
          // with this message; the socket and its other channels stay. db/pg.ts logs the outage once.
          if (isDatabaseOutOfReach(err)) return this.#shutdown(ch, 'Realtime was unable to connect to the project database');
          this.#failed(conn, err);
        });
      default:
        // Upstream answers nothing to an event it does not know.
        return;
    }
  }

  #onBinary(conn: Connection, push: BinaryBroadcastPush): void {
    const ch = conn.channels.get(push.topic);
    const req = { topic: push.topic, ref: push.ref, join_ref: push.join_ref };
    if (!ch || (push.join_ref !== null && push.join_ref !== ch.joinRef)) return conn.reply(req, 'error', { reason: 'unmatched topic' });
    if (conn.tooMany('events', this.#limits.maxEventsPerSecond)) return this.#shutdown(ch, 'Too many messages per second');
    let b: Broadcast;
    if (push.encoding === 1) {
      let json: unknown;
      try {
        json = JSON.parse(Buffer.from(push.payload).toString('utf8'));
      } catch {
        throw new FrameError('broadcast payload is not JSON');
      }
      b = { event: push.userEvent, json, jsonBytes: push.payload };
    } else b = { event: push.userEvent, bytes: push.payload };
    this.#broadcastFromSocket(ch, push.ref, b);
  }

  #jsonBroadcast(payload: Record<string, unknown>): Broadcast {
    return { event: typeof payload.event === 'string' ? payload.event : '', json: payload.payload ?? {} };
  }

  async #join(conn: Connection, msg: Message): Promise<void> {
    const { topic, payload } = msg;
    const joinRef = msg.ref ?? msg.join_ref;
    const req = { topic, ref: msg.ref, join_ref: joinRef };
    if (!topic.startsWith(TOPIC_PREFIX)) return conn.reply(req, 'error', { reason: 'unmatched topic' });
    const subTopic = topic.slice(TOPIC_PREFIX.length);
    if (conn.tooMany('joins', this.#limits.maxJoinsPerSecond)) {
      conn.reply(req, 'error', { reason: 'ClientJoinRateLimitReached: Too many joins per second' });
      conn.ws.close(SHUTDOWN_CODE, 'Too many joins per second');
      return;
    }
    // A second join of a topic on one socket replaces the first (the client rejoins this way).
    const previous = conn.channels.get(topic);
    if (previous) {
      this.#remove(previous);
      conn.channels.delete(topic);
      previous.push('phx_close', {}, previous.joinRef);
    }
    if (!subTopic) return conn.reply(req, 'error', { reason: 'TopicNameRequired: You must provide a topic name' });
    if (conn.channels.size >= this.#limits.maxChannelsPerSocket)
      return conn.reply(req, 'error', { reason: 'ChannelRateLimitReached: Too many channels' });

    const config = isObject(payload.config) ? payload.config : {};
    const broadcast = isObject(config.broadcast) ? config.broadcast : {};
    const presence = isObject(config.presence) ? config.presence : {};
    const isPrivate = flag(config.private);
    const rawToken = payload.access_token ?? payload.user_token;
    const token = typeof rawToken === 'string' && !rawToken.startsWith('sb_') ? rawToken : undefined;
    let claims: Claims;
    try {
      claims = token ? await this.#tokens.accessToken(token) : conn.apiKeyClaims;
    } catch (err) {
      if (err instanceof RealtimeTokenError) return conn.reply(req, 'error', { reason: err.reason });
      throw err;
    }
    const presenceOn = flag(presence.enabled);
    let read: ReadPolicies = { broadcast: true, presence: true };
    if (isPrivate) {
      read = await this.#readPolicies(claims, subTopic, presenceOn);
      if (!read.broadcast && !read.presence)
        return conn.reply(req, 'error', {
          reason: `Unauthorized: You do not have permissions to read from this Channel topic: ${subTopic}`,
        });
    }
    // Postgres changes: the bindings are checked (tables of the publication, filters) before the reply, so that
    // nothing committed after SUBSCRIBED is missed; a failure is a system error, the join itself succeeds (upstream).
    const bindings = Array.isArray(config.postgres_changes) ? config.postgres_changes.filter(isObject) : [];
    const pg = bindings.length > 0 ? await this.#preparePg(bindings, claims) : undefined;
    if (conn.ws.readyState !== conn.ws.OPEN) return;
    const presenceKey = typeof presence.key === 'string' && presence.key !== '' ? presence.key : randomUUID();
    const ch = new Channel({
      conn,
      topic,
      subTopic,
      joinRef: joinRef ?? '',
      isPrivate,
      self: flag(broadcast.self),
      ack: flag(broadcast.ack),
      presenceKey,
      presenceEnabled: presenceOn,
      claims,
      token,
    });
    ch.read = read;
    // A join message that arrived while this one checked its token may already have taken the topic.
    const raced = conn.channels.get(topic);
    if (raced) {
      this.#remove(raced);
      raced.push('phx_close', {}, raced.joinRef);
    }
    conn.channels.set(topic, ch);
    let room = this.#rooms.get(ch.roomKey);
    if (!room) this.#rooms.set(ch.roomKey, (room = new Room()));
    room.members.add(ch);

    // The bindings are echoed with their ids, in order (the client checks them): upstream echoes each params map.
    ch.pgBindings = bindings;
    if (pg && !('error' in pg)) this.#changes?.add(ch, pg);
    const echoed = bindings.map((b, i) => ({ ...b, id: i + 1 }));
    conn.reply(req, 'ok', { postgres_changes: echoed });
    if (ch.presenceEnabled) ch.push('presence_state', read.presence ? this.#presenceState(room) : {});
    if (pg) this.#pgStatus(ch, pg);
    ch.armExpiry(() => this.#expired(ch));
  }

  #preparePg(bindings: Record<string, unknown>[], claims: Claims): Promise<PreparedSubscriptions | { error: string }> {
    if (!this.#changes) return Promise.resolve({ error: 'Postgres changes are not available on this server' });
    return this.#changes.prepare(bindings, claims);
  }

  #pgStatus(ch: Channel, pg: PreparedSubscriptions | { error: string }): void {
    if ('error' in pg) ch.system('postgres_changes', 'error', pg.error);
    else ch.system('postgres_changes', 'ok', 'Subscribed to PostgreSQL');
  }

  #expired(ch: Channel): void {
    const exp = ch.claims.exp ?? 0;
    this.#shutdown(ch, `Token has expired ${Math.max(0, Math.floor(Date.now() / 1000) - exp)} seconds ago`);
  }

  async #refreshToken(ch: Channel, value: unknown): Promise<void> {
    if (typeof value !== 'string' || value === ch.token || value.startsWith('sb_')) return;
    ch.token = value;
    try {
      ch.claims = await this.#tokens.accessToken(value);
    } catch (err) {
      if (!(err instanceof RealtimeTokenError)) throw err;
      // No leak: from here on the channel hears nothing, whatever it was allowed before.
      return this.#shutdown(ch, err.message);
    }
    if (ch.isPrivate) {
      // The new claims may read less (or more): ask the policies again before anything else is delivered.
      ch.read = { broadcast: false, presence: false };
      ch.writes.clear();
      const read = await this.#readPolicies(ch.claims, ch.subTopic, ch.presenceEnabled);
      if (!read.broadcast && !read.presence)
        return this.#shutdown(ch, `You no longer have permission to read from this Channel topic: ${ch.subTopic}`);
      ch.read = read;
    }
    ch.armExpiry(() => this.#expired(ch));
    if (ch.pgBindings.length > 0) {
      // Upstream subscribes again with the new claims: the role may no longer select a filter's column. Meanwhile
      // the dispatcher already checks RLS with the new claims (it reads them at each change).
      const pg = await this.#preparePg(ch.pgBindings, ch.claims);
      if (ch.conn.channels.get(ch.topic) !== ch || ch.token !== value) return;
      if ('error' in pg) this.#changes?.remove(ch);
      else this.#changes?.add(ch, pg);
      this.#pgStatus(ch, pg);
    }
  }

  #readPolicies(claims: Claims, subTopic: string, withPresence: boolean): Promise<ReadPolicies> {
    if (this.#authorization) return this.#authorization.read(claims, subTopic, withPresence);
    const all = claims.role === 'service_role';
    return Promise.resolve({ broadcast: all, presence: all });
  }

  /** Whether claims may write to a channel: public ones always, private ones as realtime.messages' policies say. */
  mayWrite(claims: Claims, subTopic: string, isPrivate: boolean, extension: Extension): Promise<boolean> {
    return this.writeVerdict(claims, subTopic, isPrivate, extension).then((v) => v === 'allowed');
  }

  /** mayWrite with the reason of a refusal; rejects when the database cannot be reached. */
  writeVerdict(claims: Claims, subTopic: string, isPrivate: boolean, extension: Extension): Promise<WriteVerdict> {
    if (!isPrivate) return Promise.resolve('allowed');
    if (this.#authorization) return this.#authorization.writeVerdict(claims, subTopic, extension);
    return Promise.resolve(claims.role === 'service_role' ? 'allowed' : 'denied');
  }

  #channelMayWrite(ch: Channel, extension: Extension): Promise<boolean> {
    let p = ch.writes.get(extension);
    if (!p) {
      p = this.mayWrite(ch.claims, ch.subTopic, ch.isPrivate, extension);
      ch.writes.set(extension, p);
      p.catch(() => ch.writes.delete(extension));
    }
    return p;
  }

  /** Upstream's channel shutdown: a system error, then phx_close; the client does not rejoin. */
  #shutdown(ch: Channel, message: string): void {
    if (ch.conn.channels.get(ch.topic) !== ch) return;
    ch.conn.channels.delete(ch.topic);
    this.#remove(ch);
    ch.system('system', 'error', message);
    ch.push('phx_close', {}, ch.joinRef);
  }

  #leave(ch: Channel, msg: Message): void {
    ch.conn.channels.delete(ch.topic);
    this.#remove(ch);
    ch.conn.reply(msg, 'ok');
    ch.conn.send({ join_ref: ch.joinRef, ref: ch.joinRef, topic: ch.topic, event: 'phx_close', payload: {} });
  }

  /** Takes a channel out of its room: its presence leaves, its timers stop. */
  #remove(ch: Channel): void {
    ch.stopTimers();
    this.#changes?.remove(ch);
    const room = this.#rooms.get(ch.roomKey);
    if (!room) return;
    this.#untrack(room, ch);
    room.members.delete(ch);
    if (room.members.size === 0) this.#rooms.delete(ch.roomKey);
  }

  // ---- broadcast ----

  #broadcastFromSocket(ch: Channel, ref: string | null, b: Broadcast): void {
    if (!ch.isPrivate) return this.#sendBroadcast(ch, ref, b);
    this.#channelMayWrite(ch, 'broadcast').then(
      // No write permission: dropped silently, no ack either, as upstream.
      (allowed) => {
        if (allowed && ch.conn.channels.get(ch.topic) === ch) this.#sendBroadcast(ch, ref, b);
      },
      // The policy cannot be read (database out of reach, told once by db/pg.ts): dropped the same way, as upstream
      // (UnableToSetPolicies); the socket and its channels stay.
      (err: unknown) => {
        if (!isDatabaseOutOfReach(err)) this.#failed(ch.conn, err);
      },
    );
  }

  #sendBroadcast(ch: Channel, ref: string | null, b: Broadcast): void {
    const room = this.#rooms.get(ch.roomKey);
    if (room) this.#deliver(room, b, ch.topic, ch.self ? undefined : ch);
    if (ch.ack) ch.conn.reply({ topic: ch.topic, ref, join_ref: ch.joinRef }, 'ok');
  }

  /** A broadcast from the REST API (no sender on a socket). */
  broadcastFromRest(subTopic: string, isPrivate: boolean, event: string, payload: { json: unknown } | { bytes: Uint8Array }): void {
    const room = this.#rooms.get(roomKey(subTopic, isPrivate));
    if (room) this.#deliver(room, { event, ...payload }, TOPIC_PREFIX + subTopic, undefined);
  }

  #deliver(room: Room, b: Broadcast, topic: string, except: Channel | undefined): void {
    // Encoded once per form, when the first member needing it comes.
    let json: Buffer | undefined;
    let v1: Buffer | undefined;
    let binary: Buffer | null | undefined;
    const msg = (): Message => ({
      join_ref: null,
      ref: null,
      topic,
      event: 'broadcast',
      payload: { type: 'broadcast', event: b.event, payload: b.json },
    });
    room.fanout.push(room.members, (member) => {
      if (member === except || !member.read.broadcast || !member.current) return 0;
      const { conn } = member;
      const wantsBinary = conn.vsn === '2.0.0' && (b.bytes !== undefined || b.jsonBytes !== undefined);
      if (wantsBinary) {
        binary ??= b.bytes ? encodeBinaryBroadcast(topic, b.event, 0, b.bytes) : encodeBinaryBroadcast(topic, b.event, 1, b.jsonBytes!);
        if (binary) {
          conn.sendBinary(binary);
          return binary.length;
        }
      }
      if (b.bytes !== undefined) return 0; // raw bytes cannot travel as 1.0.0 JSON: upstream drops them too
      const text = conn.vsn === '2.0.0' ? (json ??= Buffer.from(encodeText(msg(), '2.0.0'))) : (v1 ??= Buffer.from(encodeText(msg(), '1.0.0')));
      conn.sendText(text);
      return text.length;
    });
  }

  // ---- presence ----

  #presence(ch: Channel, msg: Message): void {
    const room = this.#rooms.get(ch.roomKey);
    if (!room) return ch.conn.reply(msg, 'error');
    const event = msg.payload.event;
    if (event === 'untrack') {
      this.#untrack(room, ch);
      return ch.conn.reply(msg, 'ok');
    }
    if (event !== 'track') return ch.conn.reply(msg, 'error');
    const state = msg.payload.payload;
    if (!isObject(state)) return ch.conn.reply(msg, 'error', { reason: 'Presence track payload must be a map' });
    if (!ch.isPrivate) return this.#track(room, ch, msg, state);
    this.#channelMayWrite(ch, 'presence').then(
      (allowed) => {
        if (ch.conn.channels.get(ch.topic) !== ch) return;
        if (allowed) this.#track(room, ch, msg, state);
        else ch.conn.reply(msg, 'error');
      },
      // database out of reach: the track is refused as upstream does (UnableToSetPolicies), the channel stays
      (err: unknown) => {
        if (!isDatabaseOutOfReach(err)) return this.#failed(ch.conn, err);
        if (ch.conn.channels.get(ch.topic) === ch) ch.conn.reply(msg, 'error');
      },
    );
  }

  #track(room: Room, ch: Channel, msg: Message, state: Record<string, unknown>): void {
    if (!ch.presenceEnabled) {
      // Tracking turns presence on for the channel; its full state comes first so that the client can apply diffs.
      ch.presenceEnabled = true;
      ch.push('presence_state', ch.read.presence ? this.#presenceState(room) : {});
    }
    const old = ch.presenceMeta;
    if (old && sameState(old, state)) return ch.conn.reply(msg, 'ok');
    const meta: PresenceMeta = { ...state, phx_ref: phxRef() };
    ch.presenceMeta = meta;
    let metas = room.presence.get(ch.presenceKey);
    if (!metas) room.presence.set(ch.presenceKey, (metas = new Map()));
    metas.set(ch, meta);
    ch.conn.reply(msg, 'ok');
    const joins = { [ch.presenceKey]: { metas: [old ? { ...meta, phx_ref_prev: old.phx_ref } : meta] } };
    const leaves = old ? { [ch.presenceKey]: { metas: [old] } } : {};
    this.#presenceDiff(room, joins, leaves);
  }

  #untrack(room: Room, ch: Channel): void {
    const old = ch.presenceMeta;
    if (!old) return;
    ch.presenceMeta = undefined;
    const metas = room.presence.get(ch.presenceKey);
    metas?.delete(ch);
    if (metas?.size === 0) room.presence.delete(ch.presenceKey);
    this.#presenceDiff(room, {}, { [ch.presenceKey]: { metas: [old] } });
  }

  #presenceState(room: Room): Record<string, unknown> {
    const state: Record<string, { metas: PresenceMeta[] }> = {};
    for (const [key, metas] of room.presence) state[key] = { metas: [...metas.values()] };
    return state;
  }

  #presenceDiff(room: Room, joins: Record<string, unknown>, leaves: Record<string, unknown>): void {
    // The same frame for every member (no join_ref): encoded once per protocol version.
    const frames: Partial<Record<Vsn, Buffer>> = {};
    room.fanout.push(room.members, (member) => {
      if (!member.presenceEnabled || !member.read.presence || !member.current) return 0;
      const { vsn } = member.conn;
      const text = (frames[vsn] ??= Buffer.from(
        encodeText({ join_ref: null, ref: null, topic: member.topic, event: 'presence_diff', payload: { joins, leaves } }, vsn),
      ));
      member.conn.sendText(text);
      return text.length;
    });
  }
}

function toBytes(data: RawData): Buffer {
  if (Buffer.isBuffer(data)) return data;
  if (Array.isArray(data)) return Buffer.concat(data);
  return Buffer.from(data);
}

function sameState(meta: PresenceMeta, state: Record<string, unknown>): boolean {
  const { phx_ref: _ref, ...rest } = meta;
  return stringifyJson(rest) === stringifyJson(state);
}
