// The HTTP/1.1 connection around a request (decision 020): clients that went away, request bodies answered before
// they were read, and malformed requests on a connection that still has answers to send.
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Context } from 'hono';

/**
 * A request body the server answered before reading it all (413, 401, 404 …) is read and discarded up to these
 * bounds; past them the connection is closed (the client may then see a reset).
 */
export const DRAIN_MAX_BYTES = 8 * 1024 * 1024;
export const DRAIN_MAX_MS = 5000;

/** nginx's status for "the client closed the connection before the server answered"; never sent, only logged. */
export const CLIENT_CLOSED_REQUEST = 499;

export interface NodeBindings {
  incoming: IncomingMessage;
  outgoing: ServerResponse;
}

/** The Node request/response behind a hono context (undefined outside the Node adapter, e.g. `app.request()`). */
export function nodeOf(c: Context): NodeBindings | undefined {
  const env = c.env as Partial<NodeBindings> | undefined;
  return env?.incoming && env.outgoing ? { incoming: env.incoming, outgoing: env.outgoing } : undefined;
}

/** Has the client closed or reset the connection, so that no answer can reach it? */
export function clientGone(node: NodeBindings): boolean {
  const socket = node.incoming.socket as Socket | null;
  return node.outgoing.destroyed || !socket || socket.destroyed || (node.incoming.destroyed && !node.incoming.complete);
}

/**
 * Reads and discards what is left of a request body. Resolves true once the whole body has arrived, false when the
 * client sent more than `maxBytes`, took longer than `maxMs`, or went away.
 */
export function discardRest(
  incoming: IncomingMessage,
  { maxBytes = DRAIN_MAX_BYTES, maxMs = DRAIN_MAX_MS }: { maxBytes?: number; maxMs?: number } = {},
): Promise<boolean> {
  if (incoming.complete) return Promise.resolve(true);
  if (incoming.destroyed) return Promise.resolve(false);
  return new Promise((resolve) => {
    let bytes = 0;
    const finish = (ok: boolean): void => {
      clearTimeout(timer);
      incoming.off('data', onData);
      incoming.off('end', onEnd);
      incoming.off('close', onClose);
      incoming.off('error', onError);
      resolve(ok);
    };
    const onData = (chunk: Buffer): void => {
      bytes += chunk.length;
      if (bytes > maxBytes) finish(false);
      // A web stream over the body (a handler that stopped reading) pauses it when its queue is full: keep it flowing.
      else incoming.resume();
    };
    const onEnd = (): void => finish(true);
    const onClose = (): void => finish(incoming.complete);
    const onError = (): void => finish(false);
    const timer = setTimeout(() => finish(false), maxMs);
    incoming.on('data', onData);
    incoming.once('end', onEnd);
    incoming.once('close', onClose);
    incoming.once('error', onError);
    incoming.resume();
  });
}

/** Will Node close the connection after answering this request (`Connection: close`, or HTTP/1.0 without keep-alive)? */
export function closesAfterAnswer(incoming: IncomingMessage): boolean {
  const connection = (incoming.headers.connection ?? '').toLowerCase();
  if (connection.includes('close')) return true;
  return incoming.httpVersion === '1.0' && !connection.includes('keep-alive');
}

/**
 * Installed for every request: when the answer went out before the request body had all arrived (413, 401, 404 …)
 * on a connection that stays open, read and discard the rest so the next request on the connection is parsed, within
 * bounds; past them, close the connection. (@hono/node-server's own clean-up, which gives the rest 500 ms of wall
 * time and then destroys the socket, is turned off: it cut off slow bodies and requests that followed on the
 * connection, and any body when the event loop was busy.)
 */
export function drainAfterAnswer(req: IncomingMessage, res: ServerResponse): void {
  res.once('finish', () => {
    if (req.complete || req.destroyed) return;
    void discardRest(req).then((ok) => {
      if (!ok) req.socket.destroy();
    });
  });
}

/** Destroys the socket after `ms` unless it closed before (the timer then goes, so it keeps nothing alive). */
function closeAfter(socket: Socket, ms: number): void {
  const timer = setTimeout(() => socket.destroy(), ms);
  socket.once('close', () => clearTimeout(timer));
}

const STATUS_TEXT: Record<number, string> = { 400: 'Bad Request', 408: 'Request Timeout', 431: 'Request Header Fields Too Large' };

/**
 * Node's default for a request it cannot parse (an unknown method, a malformed header) writes `400` and destroys the
 * socket at once, dropping the answers still due to earlier requests pipelined on the same connection. This one
 * answers with a JSON error `{ code, message }` after those answers have gone out, then closes the connection.
 */
export function installClientErrorHandler(server: Server): void {
  interface ConnState {
    /** Requests read from the connection whose answers have not finished yet. */
    inFlight: Set<IncomingMessage>;
    /** Runs when inFlight drops to 0 (the error answer waiting for its turn). */
    onIdle?: () => void;
    answered?: boolean;
  }
  const conns = new WeakMap<Socket, ConnState>();
  const stateOf = (socket: Socket): ConnState => {
    let st = conns.get(socket);
    if (!st) conns.set(socket, (st = { inFlight: new Set() }));
    return st;
  };
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const st = stateOf(req.socket);
    st.inFlight.add(req);
    const settle = (): void => {
      if (!st.inFlight.delete(req)) return;
      if (st.inFlight.size === 0 && st.onIdle) st.onIdle();
    };
    res.once('finish', settle);
    res.once('close', settle);
  });
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) => {
    const st = stateOf(socket);
    // The parser reports every later chunk of a broken connection again: answer once.
    if (st.answered) return;
    st.answered = true;
    if (err.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    const timedOut = err.code === 'ERR_HTTP_REQUEST_TIMEOUT';
    const status = err.code === 'HPE_HEADER_OVERFLOW' ? 431 : timedOut ? 408 : 400;
    const code = status === 431 ? 'request_header_fields_too_large' : timedOut ? 'request_timeout' : 'bad_request';
    const body = JSON.stringify({ code, message: `Malformed HTTP request (${err.code ?? 'parse error'})` });
    const answer = (): void => {
      st.onIdle = undefined;
      if (socket.destroyed) return;
      socket.end(
        `HTTP/1.1 ${status} ${STATUS_TEXT[status]}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
          `x-sb-error-code: ${code}\r\nConnection: close\r\n\r\n${body}`,
      );
      // Nothing more is read from this connection: close it once the answer is out (or after a bound).
      socket.once('finish', () => socket.destroy());
      closeAfter(socket, DRAIN_MAX_MS);
    };
    if (st.inFlight.size === 0) answer();
    else if ([...st.inFlight].some((req) => !req.complete)) {
      // The error is in (or after) a request whose body is still being read — the client closed mid-body, or the body
      // timed out: nothing more will come for it. As Node does: close, which fails that request's body read.
      socket.destroy();
    } else {
      st.onIdle = answer;
      // A handler that never answers must not keep the connection forever.
      closeAfter(socket, 30_000);
    }
  });
}
