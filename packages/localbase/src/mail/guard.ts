// The mailbox is same-origin only (decision 021): it holds sign-in links and codes, so no other website may read or
// clear it, while the developer's own browser tab (address bar, its own links) and tools without a browser (e2e's
// fetch, curl) keep working.
import type { Context, MiddlewareHandler } from 'hono';
import { ApiError } from '../http/errors.ts';

const LOOPBACK_HOST = /^(localhost|[a-z0-9-]+\.localhost|127(\.\d{1,3}){3}|\[::1\])$/i;
const ANY_ADDRESS = new Set(['0.0.0.0', '::', '[::]', '']);

/** The hostname of a Host header value (`name:port`, `[v6]:port`), lower-cased. */
function hostnameOf(host: string): string {
  const h = host.trim().toLowerCase();
  if (h.startsWith('[')) return h.slice(0, h.indexOf(']') + 1);
  const colon = h.lastIndexOf(':');
  return colon >= 0 ? h.slice(0, colon) : h;
}

/** Is `origin` (an Origin header) `http(s)://<host>`? "null" (sandboxed frames, file: pages) and garbage are not. */
function sameOrigin(origin: string, host: string): boolean {
  try {
    const u = new URL(origin);
    return (u.protocol === 'http:' || u.protocol === 'https:') && u.host === host.trim().toLowerCase();
  } catch {
    return false;
  }
}

/**
 * Why this request must not reach the mailbox, or undefined when it may.
 * - A preflight (OPTIONS): the mailbox takes part in no cross-origin request.
 * - `Origin` other than the mailbox's own (`http://<Host>`), `null` included: another page's fetch, form or script.
 * - `Sec-Fetch-Site: cross-site` (or `same-site`: another port or host of the same site is another origin): a page of
 *   another site, also for requests that carry no Origin (an `<img>`, a link). `none` (address bar, bookmark) and
 *   `same-origin` pass, and so does a request without any of these headers (curl, Node's fetch).
 * - A Host that is not this server's (DNS rebinding: a site whose name resolves to 127.0.0.1 is "same-origin" with
 *   itself): only loopback names and the address localbase listens on are accepted, unless it listens on all of them.
 */
export function mailboxRefusal(c: Context, listenHost: string): string | undefined {
  if (c.req.method === 'OPTIONS') return 'cross-origin requests to the mailbox are not allowed (preflight refused)';
  const host = c.req.header('host') ?? '';
  const hostname = hostnameOf(host);
  const listen = listenHost.toLowerCase();
  const listenName = listen.includes(':') && !listen.startsWith('[') ? `[${listen}]` : listen;
  if (!ANY_ADDRESS.has(listen) && !LOOPBACK_HOST.test(hostname) && hostname !== listenName)
    return `the mailbox answers only on this server's own address, not on host "${host}"`;
  const origin = c.req.header('origin');
  if (origin !== undefined) {
    if (!sameOrigin(origin, host)) return `the mailbox answers only its own pages; this request came from ${origin.slice(0, 200)}`;
  }
  const site = c.req.header('sec-fetch-site')?.toLowerCase();
  if (site === 'cross-site' || site === 'same-site')
    return `the mailbox answers only its own pages; this request came from another ${site === 'cross-site' ? 'site' : 'origin'}`;
  return undefined;
}

/** Refuses cross-origin requests with 403 `cross_origin_request_forbidden` and marks every answer as private. */
export function mailboxGuard(listenHost: string): MiddlewareHandler {
  return async (c, next) => {
    const refusal = mailboxRefusal(c, listenHost);
    if (refusal) throw new ApiError(403, 'cross_origin_request_forbidden', refusal);
    await next();
    // Sign-in links and codes: never cached, never framed, never sniffed as another type.
    c.header('Cache-Control', 'no-store');
    c.header('X-Frame-Options', 'DENY');
    c.header('X-Content-Type-Options', 'nosniff');
    c.header('Vary', 'Origin, Sec-Fetch-Site');
  };
}
