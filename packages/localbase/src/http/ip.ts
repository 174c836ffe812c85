import net from 'node:net';
import type { Context, MiddlewareHandler } from 'hono';
import { getConnInfo } from '@hono/node-server/conninfo';

/**
 * The client address of a request: what every per-IP limit counts and what sessions record.
 *
 * - The TCP peer by default (no forwarding header is trusted).
 * - `Sb-Forwarded-For` (hosted Supabase's "IP address forwarding") when the request's apikey is a secret /
 *   service_role key: its leftmost value, if it is a valid IP. Only holders of the secret key can set it.
 * - The trusted-proxy header (default `X-Forwarded-For`) only when the peer is a trusted proxy: the list is walked
 *   from the right, trusted addresses are skipped, the first untrusted one is the client; an invalid entry there
 *   (or no header) means the peer itself. When every entry is trusted, the leftmost one is the client.
 *
 * Addresses are normalised (IPv4-mapped IPv6 → IPv4, IPv6 in canonical lower-case form without a zone), so one
 * client has one spelling. Rate limits key IPv6 clients by their /64 (see rateLimitKey).
 */

export const SB_FORWARDED_FOR = 'sb-forwarded-for';
export const DEFAULT_CLIENT_IP_HEADER = 'X-Forwarded-For';

/** Canonical text of an IP address, or undefined when `text` is not one. */
export function normaliseIp(text: string): string | undefined {
  const family = net.isIP(text);
  if (family === 4) return text;
  if (family !== 6) return undefined;
  const canonical = new net.SocketAddress({ address: text, family: 'ipv6' }).address;
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/.exec(canonical);
  return mapped ? mapped[1] : canonical;
}

/** One entry of a forwarding header: a bare IP, or `1.2.3.4:port` / `[v6]:port` as some proxies write it. */
function parseForwardedEntry(entry: string): string | undefined {
  const text = entry.trim();
  const bracketed = /^\[([^\]]+)\](?::\d{1,5})?$/.exec(text);
  if (bracketed) return normaliseIp(bracketed[1]!);
  const v4WithPort = /^(\d{1,3}(?:\.\d{1,3}){3}):\d{1,5}$/.exec(text);
  return normaliseIp(v4WithPort ? v4WithPort[1]! : text);
}

/** The eight 16-bit groups of a canonical IPv6 address (a dotted IPv4 tail counts as two). */
function ipv6Groups(canonical: string): number[] {
  const half = (part: string): number[] =>
    part === ''
      ? []
      : part.split(':').flatMap((g) => {
          if (!g.includes('.')) return [parseInt(g, 16)];
          const [a, b, c, d] = g.split('.').map(Number) as [number, number, number, number];
          return [(a << 8) | b, (c << 8) | d];
        });
  const [head = '', tail] = canonical.split('::');
  const left = half(head);
  if (tail === undefined) return left;
  const right = half(tail);
  return [...left, ...new Array<number>(8 - left.length - right.length).fill(0), ...right];
}

/**
 * The key per-IP limits count under: the address itself for IPv4, its /64 network for IPv6 (one subscriber line
 * usually gets a whole /64 or more, so keying by the full address would give one client 2^64 budgets).
 */
export function rateLimitKey(ip: string): string {
  if (net.isIP(ip) !== 6) return ip;
  const g = ipv6Groups(ip);
  return `${g.slice(0, 4).map((x) => x.toString(16)).join(':')}::/64`;
}

/** Parses `10.0.0.0/8`, `127.0.0.1`, `fd00::/8`, `::1` … into a BlockList; throws naming the first bad entry. */
export function parseTrustedProxies(entries: readonly string[]): net.BlockList {
  const list = new net.BlockList();
  for (const raw of entries) {
    const entry = raw.trim();
    if (entry === '') continue;
    const slash = entry.indexOf('/');
    const address = slash === -1 ? entry : entry.slice(0, slash);
    const family = net.isIP(address);
    const prefixText = slash === -1 ? undefined : entry.slice(slash + 1);
    const max = family === 6 ? 128 : 32;
    const prefix = prefixText === undefined ? max : /^\d{1,3}$/.test(prefixText) ? Number(prefixText) : NaN;
    if (family === 0 || !(prefix >= 0 && prefix <= max))
      throw new Error(`trusted proxies: "${entry}" is not an IP address or CIDR range (e.g. 10.0.0.0/8, fd00::/8)`);
    list.addSubnet(address, prefix, family === 6 ? 'ipv6' : 'ipv4');
  }
  return list;
}

/** An HTTP header name (RFC 9110 token). */
export function isHeaderName(name: string): boolean {
  return /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name);
}

export interface ClientAddressOptions {
  trustedProxies: readonly string[];
  clientIpHeader: string;
  sbForwardedFor: boolean;
}

export class ClientAddressResolver {
  readonly #trusted: net.BlockList;
  readonly #anyTrusted: boolean;
  readonly #header: string;
  readonly #sbForwardedFor: boolean;

  constructor(opts: ClientAddressOptions) {
    this.#trusted = parseTrustedProxies(opts.trustedProxies);
    this.#anyTrusted = this.#trusted.rules.length > 0;
    if (!isHeaderName(opts.clientIpHeader)) throw new Error(`client IP header: "${opts.clientIpHeader}" is not a header name`);
    this.#header = opts.clientIpHeader.toLowerCase();
    this.#sbForwardedFor = opts.sbForwardedFor;
  }

  isTrusted(ip: string): boolean {
    return this.#anyTrusted && this.#trusted.check(ip, net.isIP(ip) === 6 ? 'ipv6' : 'ipv4');
  }

  /**
   * `peer`: the socket's remote address; `header(name)`: the request's header (several lines joined by ", ");
   * `secretKey`: whether the request's apikey is a secret / service_role key.
   */
  resolve(peer: string | undefined, header: (name: string) => string | undefined, secretKey: boolean): string {
    const peerIp = (peer && normaliseIp(peer)) || 'unknown';
    if (this.#sbForwardedFor && secretKey) {
      const sbff = header(SB_FORWARDED_FOR);
      const leftmost = sbff === undefined ? undefined : normaliseIp(sbff.split(',', 1)[0]!.trim());
      if (leftmost) return leftmost;
    }
    if (!this.isTrusted(peerIp)) return peerIp;
    const value = header(this.#header);
    if (!value) return peerIp;
    const entries = value.split(',');
    let leftmost: string | undefined;
    for (let i = entries.length - 1; i >= 0; i--) {
      const ip = parseForwardedEntry(entries[i]!);
      if (!ip) return peerIp;
      if (!this.isTrusted(ip)) return ip;
      leftmost = ip;
    }
    return leftmost ?? peerIp;
  }
}

const RESOLVER_KEY = 'localbase:clientAddressResolver' as never;
const ADDRESS_KEY = 'localbase:clientAddress' as never;

/** Middleware: makes `clientIp(c)` use this resolver for the routes below it. */
export function useClientAddresses(resolver: ClientAddressResolver): MiddlewareHandler {
  return async (c, next) => {
    c.set(RESOLVER_KEY, resolver as never);
    await next();
  };
}

function peerAddress(c: Context): string | undefined {
  try {
    return getConnInfo(c).remote.address;
  } catch {
    return undefined;
  }
}

/** The client address of this request (computed once per request). Without a resolver: the TCP peer. */
export function clientIp(c: Context): string {
  const known = c.get(ADDRESS_KEY) as string | undefined;
  if (known) return known;
  const resolver = c.get(RESOLVER_KEY) as ClientAddressResolver | undefined;
  const peer = peerAddress(c);
  const ip = resolver
    ? resolver.resolve(peer, (name) => c.req.header(name), c.get('apiKeyRole' as never) === 'service_role')
    : (peer && normaliseIp(peer)) || 'unknown';
  c.set(ADDRESS_KEY, ip as never);
  return ip;
}
