import { BlockList, isIP } from 'node:net'

/**
 * The address of the browser behind a request, for per-user budgets (the web app's own rate limits, and the
 * address the server passes on to Supabase Auth so that its per-address limits tell users apart).
 *
 * `FOYER_TRUSTED_PROXIES` lists the proxies in front of the app (load balancer, CDN, reverse proxy) as IPs or
 * CIDRs, comma-separated (`10.0.0.0/8,2001:db8::/32`; `loopback` = 127.0.0.0/8 and ::1). Only when the direct
 * peer is one of them is `X-Forwarded-For` read: from its right end, skipping trusted entries, the first
 * address that is not a trusted proxy is the client. Otherwise the peer itself is the client, so a browser that
 * writes its own `X-Forwarded-For` changes nothing. Default: no trusted proxy.
 */
export interface TrustedProxies {
  /** True when the address is one of the configured proxies. */
  has(address: string): boolean
  /** The configuration as given, for messages. */
  readonly description: string
}

export class TrustedProxiesError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'TrustedProxiesError'
  }
}

/** `::ffff:192.0.2.1` → `192.0.2.1`; IPv6 lower-cased; anything that is not an IP → null. */
export function normaliseAddress(raw: string | undefined | null): string | null {
  if (!raw) return null
  let value = raw.trim()
  // "[2001:db8::1]:443" and "192.0.2.1:443" (some proxies add the port)
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(value)
  if (bracketed) value = bracketed[1]!
  else if (/^\d{1,3}(\.\d{1,3}){3}:\d+$/.test(value)) value = value.slice(0, value.lastIndexOf(':'))
  const version = isIP(value)
  if (version === 4) return value
  if (version !== 6) return null
  const lower = value.toLowerCase()
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/.exec(lower)
  return mapped ? mapped[1]! : lower
}

/** Parses the `FOYER_TRUSTED_PROXIES` list; throws TrustedProxiesError naming a bad entry. */
export function parseTrustedProxies(value: string | undefined): TrustedProxies {
  const list = new BlockList()
  const entries = (value ?? '')
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean)
  for (const entry of entries) {
    if (entry === 'loopback') {
      list.addSubnet('127.0.0.0', 8, 'ipv4')
      list.addAddress('::1', 'ipv6')
      continue
    }
    const [address, prefix] = entry.split('/')
    const ip = normaliseAddress(address)
    const type = ip === null ? 0 : isIP(ip)
    if (ip === null || type === 0) throw new TrustedProxiesError(`FOYER_TRUSTED_PROXIES: "${entry}" is not an IP address or CIDR`)
    const family = type === 4 ? 'ipv4' : 'ipv6'
    if (prefix === undefined) {
      list.addAddress(ip, family)
      continue
    }
    const bits = Number(prefix)
    if (!/^\d+$/.test(prefix) || bits > (type === 4 ? 32 : 128)) {
      throw new TrustedProxiesError(`FOYER_TRUSTED_PROXIES: "${entry}" has a bad prefix length`)
    }
    list.addSubnet(ip, bits, family)
  }
  return {
    description: entries.join(',') || '(none)',
    has(address) {
      const ip = normaliseAddress(address)
      if (ip === null) return false
      return list.check(ip, isIP(ip) === 4 ? 'ipv4' : 'ipv6')
    },
  }
}

/** `X-Forwarded-For` values (one or several header lines) as one list, leftmost first. */
function forwardedChain(header: string | string[] | undefined): string[] {
  if (header === undefined) return []
  const lines = Array.isArray(header) ? header : [header]
  return lines.flatMap((line) => line.split(',')).map((entry) => entry.trim()).filter(Boolean)
}

/**
 * The client's address for a request that arrived from `peer` with these `X-Forwarded-For` values, or null when
 * the peer is unknown (a request that did not come over a socket).
 */
export function clientAddressOf(
  peer: string | undefined,
  forwardedFor: string | string[] | undefined,
  trusted: TrustedProxies,
): string | null {
  const direct = normaliseAddress(peer)
  if (direct === null) return null
  if (!trusted.has(direct)) return direct
  const chain = forwardedChain(forwardedFor)
  let client = direct
  for (let i = chain.length - 1; i >= 0; i--) {
    const hop = normaliseAddress(chain[i])
    // A malformed entry ends the walk: nothing left of it can be trusted to have been written by our proxies.
    if (hop === null) break
    client = hop
    if (!trusted.has(hop)) break
  }
  return client
}

let configured: { from: string | undefined; proxies: TrustedProxies } | undefined

/** The trusted proxies of this process (`FOYER_TRUSTED_PROXIES`, parsed again only when it changes). */
export function trustedProxies(): TrustedProxies {
  const from = process.env.FOYER_TRUSTED_PROXIES
  if (!configured || configured.from !== from) configured = { from, proxies: parseTrustedProxies(from) }
  return configured.proxies
}

/** The browser's address behind a Node request, honouring `FOYER_TRUSTED_PROXIES`. */
export function clientAddress(req: {
  socket?: { remoteAddress?: string | undefined } | null
  headers: Record<string, string | string[] | undefined>
}): string | null {
  return clientAddressOf(req.socket?.remoteAddress, req.headers['x-forwarded-for'], trustedProxies())
}

/**
 * The part of a client address that names one client, for per-address budgets: an IPv4 address whole; an IPv6
 * address's /64 prefix (`2001:db8:1:2::/64`), since a single host is handed a whole /64 and may use any address in
 * it (privacy addresses, or a new one per request), so keyed by the full address one client had 2^64 budgets. An
 * IPv6 address with an IPv4 address in it (`64:ff9b::192.0.2.1`, NAT64) stands for that IPv4 client and stays whole.
 */
export function addressBudgetKey(address: string): string {
  if (isIP(address) !== 6 || address.includes('.')) return address
  const [left = '', right] = address.split('%', 1)[0]!.toLowerCase().split('::')
  const head = left === '' ? [] : left.split(':')
  const tail = right === undefined || right === '' ? [] : right.split(':')
  const groups = right === undefined ? head : [...head, ...Array<string>(8 - head.length - tail.length).fill('0'), ...tail]
  return `${groups
    .slice(0, 4)
    .map((group) => Number.parseInt(group, 16).toString(16))
    .join(':')}::/64`
}
