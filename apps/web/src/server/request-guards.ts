/**
 * Guards of the tRPC API that do not depend on a procedure: where a state-changing call may come from, and how
 * much one caller may ask of the server. The limits are documented in docs/decisions/014-api-request-bounds.md.
 */

/** The most calls one batched request may carry (tRPC `maxBatchSize`: more is refused with 400, nothing runs). */
export const MAX_BATCH_CALLS = 25

/**
 * The most a JSON request body may weigh (Next's API body limit, which the API handler now applies itself: it reads
 * the body so that it can check its nesting before anything parses it). More is refused with 413.
 */
export const MAX_BODY_BYTES = 1024 * 1024

/**
 * The deepest nesting of arrays and objects a request's JSON input may have, counted from the outside (a batch's
 * object and each call's `{ json }` included). The app's inputs are a few levels deep; deeper input is refused with
 * 400 before it is parsed, since parsing and every recursive step after it (superjson, zod, error formatting) cost
 * time and stack with each level (ADR 069).
 */
export const MAX_INPUT_DEPTH = 100

/**
 * Whether the JSON text nests arrays and objects more than `max` levels deep. One pass over the text that stops at
 * the first level too many; brackets inside strings do not count. Malformed JSON is not its business (the parser
 * that runs next says what is wrong with it).
 */
export function jsonNestingExceeds(text: string, max: number): boolean {
  let depth = 0
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c === 0x22) {
      // a string: skip to its closing quote, over escaped characters
      for (i++; i < text.length; i++) {
        const d = text.charCodeAt(i)
        if (d === 0x5c) i++
        else if (d === 0x22) break
      }
    } else if (c === 0x5b || c === 0x7b) {
      if (++depth > max) return true
    } else if (c === 0x5d || c === 0x7d) {
      depth--
    }
  }
  return false
}

/** Reads a request header by name (lower case): a `Headers`, or the Node request's own headers (`nodeHeaderReader`). */
export interface HeaderReader {
  get(name: string): string | null
}

/** The Node request's headers read where they are, without copying them (a request's cookie alone is ≈ 3 kB). */
export function nodeHeaderReader(headers: Record<string, string | string[] | undefined>): HeaderReader {
  return {
    get(name) {
      const value = headers[name.toLowerCase()]
      return value === undefined ? null : Array.isArray(value) ? value.join(', ') : value
    },
  }
}

/**
 * Why a mutation must be refused as cross-site, or null when it may run. The session cookie is SameSite=Lax, which
 * already keeps it off cross-site POSTs in current browsers; this is the second line (older browsers, same-site
 * subdomains, a cookie set with other attributes): a browser says where a request comes from in `Sec-Fetch-Site`
 * (all current browsers) and `Origin` (every POST), and neither can be forged by a page. Requests without either
 * are not from a browser page (curl, server-side callers) and carry no ambient authority worth forging.
 */
export function crossSiteReason(headers: HeaderReader): string | null {
  const site = headers.get('sec-fetch-site')
  if (site !== null && site !== 'same-origin' && site !== 'none') return `Sec-Fetch-Site: ${site}`
  const origin = headers.get('origin')
  if (origin === null) return null
  if (origin === 'null') return 'Origin: null'
  let originHost: string
  try {
    originHost = new URL(origin).host
  } catch {
    return 'a malformed Origin'
  }
  // The host the browser addressed: the Host header, or the one a proxy in front reports. A page cannot set either
  // on a cross-origin request without a CORS preflight, which this API never grants.
  const host = headers.get('x-forwarded-host')?.split(',')[0]?.trim() || headers.get('host')
  if (!host || host.toLowerCase() !== originHost.toLowerCase()) return `Origin ${origin}`
  return null
}

export interface RateLimitRule {
  /** Calls allowed at once (bucket size). */
  burst: number
  /** Calls regained per second. */
  perSecond: number
}

/** Per-caller budgets of the API: a caller is a signed-in user (by id) or, signed out, a client address. */
export const API_RATE_LIMITS: Record<'query' | 'mutation', RateLimitRule> = {
  // A page asks for a handful of queries; a person clicking fast stays far below 5 a second.
  query: { burst: 120, perSecond: 5 },
  // Creating, editing, pinning, deleting by hand: a few a minute. 60 at once, then one a second.
  mutation: { burst: 60, perSecond: 1 },
}

export class ApiLimitConfigError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'ApiLimitConfigError'
  }
}

/**
 * A budget from `FOYER_API_QUERY_LIMIT` / `FOYER_API_MUTATION_LIMIT`: `<burst>/<per second>` (e.g. `120/5`),
 * `off` for none (benchmarks), unset for the default. A malformed value is a configuration error naming it.
 */
export function readRateLimitRule(name: string, value: string | undefined, fallback: RateLimitRule): RateLimitRule | null {
  if (value === undefined || value.trim() === '') return fallback
  if (value.trim() === 'off') return null
  const match = /^\s*(\d+)\s*\/\s*(\d+(?:\.\d+)?)\s*$/.exec(value)
  const burst = Number(match?.[1])
  const perSecond = Number(match?.[2])
  if (!match || burst < 1 || !(perSecond > 0)) {
    throw new ApiLimitConfigError(`${name} must be "<burst>/<per second>" (e.g. "120/5") or "off", got "${value}"`)
  }
  return { burst, perSecond }
}

/**
 * Token buckets in memory, one per key. A bucket that has refilled completely is forgotten, so the map holds only
 * callers that were busy recently (bounded further by `maxKeys`). Per server process: with several instances
 * each enforces its own share, which still bounds any one caller.
 */
export class RateLimiter {
  readonly #rule: RateLimitRule
  readonly #buckets = new Map<string, { tokens: number; at: number }>()
  readonly #now: () => number
  readonly #maxKeys: number

  constructor(rule: RateLimitRule, now: () => number = Date.now, maxKeys = 100_000) {
    this.#rule = rule
    this.#now = now
    this.#maxKeys = maxKeys
  }

  /** Takes one call from key's budget: 0 when allowed, otherwise the seconds until one is available again. */
  take(key: string): number {
    const now = this.#now()
    const { burst, perSecond } = this.#rule
    const bucket = this.#buckets.get(key)
    const tokens = bucket ? Math.min(burst, bucket.tokens + ((now - bucket.at) / 1000) * perSecond) : burst
    if (tokens < 1) {
      this.#buckets.set(key, { tokens, at: now })
      return Math.max(1, Math.ceil((1 - tokens) / perSecond))
    }
    if (!bucket && this.#buckets.size >= this.#maxKeys) this.#sweep(now)
    this.#buckets.set(key, { tokens: tokens - 1, at: now })
    return 0
  }

  /** The seconds until key's budget allows a call again (0: now), taking nothing from it. */
  wait(key: string): number {
    const bucket = this.#buckets.get(key)
    if (!bucket) return 0
    const { burst, perSecond } = this.#rule
    const tokens = Math.min(burst, bucket.tokens + ((this.#now() - bucket.at) / 1000) * perSecond)
    return tokens >= 1 ? 0 : Math.max(1, Math.ceil((1 - tokens) / perSecond))
  }

  #sweep(now: number): void {
    const { burst, perSecond } = this.#rule
    for (const [key, bucket] of this.#buckets) {
      if (bucket.tokens + ((now - bucket.at) / 1000) * perSecond >= burst) this.#buckets.delete(key)
    }
    // Everyone is busy: drop the oldest half rather than grow without bound.
    if (this.#buckets.size >= this.#maxKeys) {
      let drop = Math.floor(this.#buckets.size / 2)
      for (const key of this.#buckets.keys()) {
        if (drop-- <= 0) break
        this.#buckets.delete(key)
      }
    }
  }
}
