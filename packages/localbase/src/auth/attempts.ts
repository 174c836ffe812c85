import type { AccountProtection } from '../config.ts';
import { ApiError } from '../http/errors.ts';
import { rateLimitKey } from '../http/ip.ts';

/**
 * Per-account defence against guessing spread over many addresses (docs/decisions/017-account-guessing-defence.md).
 *
 * Every guessable secret check (password sign-in, email code, TOTP code) asks `begin()` first. Failures are counted
 * per account in a bucket: after `freeFailures` consecutive failures each further failure blocks the bucket for
 * 1 s, 2 s, 4 s … up to `maxDelaySeconds`; while blocked, attempts are refused (429 `too_many_failed_attempts`,
 * Retry-After) before the secret is even looked at. A success empties the bucket; failures older than
 * `failureWindowSeconds` are forgotten.
 *
 * An address that signed in to the account before (a session was created from it, within KNOWN_ADDRESS_TTL_MS)
 * has its own bucket per account, so an attacker failing from elsewhere cannot keep the owner's usual address out.
 *
 * Attempts in flight count as failures until they end, so a burst of concurrent requests gets at most the free
 * attempts (or one, once the delays have started) checked.
 *
 * In memory, per process, like the per-IP limits: a restart forgets it.
 */

export type AttemptScope = 'password' | 'otp' | 'sms' | 'totp';

export const THROTTLED_CODE = 'too_many_failed_attempts';
const BASE_DELAY_MS = 1000;
const KNOWN_ADDRESS_TTL_MS = 30 * 24 * 3600 * 1000;
const KNOWN_ADDRESSES_PER_ACCOUNT = 10;
const MAX_BUCKETS = 100_000;
const MAX_ACCOUNTS_WITH_KNOWN_ADDRESSES = 100_000;

const WHAT: Record<AttemptScope, string> = {
  password: 'failed sign-in attempts for this account',
  otp: 'wrong codes for this email address',
  sms: 'wrong codes for this phone number',
  totp: 'wrong codes for this account',
};

interface Bucket {
  failures: number;
  lastFailureAt: number;
  blockedUntil: number;
  inFlight: number;
}

export interface Attempt {
  /** The secret was wrong. */
  failed(): void;
  /** The secret was right: the bucket starts over. */
  succeeded(): void;
  /** Neither (the attempt ended before the secret was decided). */
  release(): void;
}

const NO_ATTEMPT: Attempt = { failed() {}, succeeded() {}, release() {} };

export class AttemptGuard {
  readonly #cfg: AccountProtection;
  readonly #now: () => number;
  readonly #buckets = new Map<string, Bucket>();
  /** account → address key → when it last signed in */
  readonly #known = new Map<string, Map<string, number>>();

  constructor(cfg: AccountProtection, now: () => number = Date.now) {
    this.#cfg = cfg;
    this.#now = now;
  }

  get enabled(): boolean {
    return this.#cfg.maxDelaySeconds > 0;
  }

  /** Remembers that `address` signed in to `account` (a user id): it gets its own bucket from now on. */
  rememberAddress(account: string, address: string): void {
    if (!this.enabled || !address || address === 'unknown') return;
    const key = rateLimitKey(address);
    let addresses = this.#known.get(account);
    if (addresses) this.#known.delete(account); // re-inserted last: least recently signed-in accounts go first
    else {
      if (this.#known.size >= MAX_ACCOUNTS_WITH_KNOWN_ADDRESSES) this.#forgetOldestAccounts();
      addresses = new Map();
    }
    this.#known.set(account, addresses);
    addresses.delete(key); // re-inserted last: the map's order is least recently used first
    addresses.set(key, this.#now());
    if (addresses.size > KNOWN_ADDRESSES_PER_ACCOUNT) addresses.delete(addresses.keys().next().value!);
  }

  isKnownAddress(account: string, address: string): boolean {
    const seen = this.#known.get(account)?.get(rateLimitKey(address));
    return seen !== undefined && this.#now() - seen < KNOWN_ADDRESS_TTL_MS;
  }

  /**
   * Admits one attempt on `account` from `address` (`known`: the address signed in to this account before), or
   * throws 429 too_many_failed_attempts. The caller reports the outcome on the returned handle exactly once.
   */
  begin(scope: AttemptScope, account: string, address: string, known: boolean): Attempt {
    if (!this.enabled) return NO_ATTEMPT;
    const key = `${scope}\u0000${account}\u0000${known ? rateLimitKey(address) : '*'}`;
    const now = this.#now();
    let b = this.#buckets.get(key);
    const forgotten = (x: Bucket) =>
      x.inFlight === 0 && now >= x.blockedUntil && now - x.lastFailureAt > this.#cfg.failureWindowSeconds * 1000;
    if (b && b.failures > 0 && forgotten(b)) {
      this.#buckets.delete(key);
      b = undefined;
    }
    if (!b) {
      if (this.#buckets.size >= MAX_BUCKETS) this.#sweep(forgotten);
      b = { failures: 0, lastFailureAt: 0, blockedUntil: 0, inFlight: 0 };
      this.#buckets.set(key, b);
    }
    if (now < b.blockedUntil) throw throttled(scope, b.blockedUntil - now);
    // Attempts in flight count as failures until they end: no burst gets more than the free attempts checked.
    if (b.inFlight > 0 && b.failures + b.inFlight >= this.#cfg.freeFailures) throw throttled(scope, BASE_DELAY_MS);
    b.inFlight++;
    const bucket = b;
    let done = false;
    const end = (outcome: 'failed' | 'succeeded' | 'released') => {
      if (done) return;
      done = true;
      bucket.inFlight--;
      if (outcome === 'succeeded') {
        bucket.failures = 0;
        bucket.blockedUntil = 0;
      } else if (outcome === 'failed') {
        const t = this.#now();
        bucket.failures++;
        bucket.lastFailureAt = t;
        const over = bucket.failures - Math.max(1, this.#cfg.freeFailures); // 0 free behaves as 1: first delay 1 s
        if (over >= 0) {
          const delay = Math.min(BASE_DELAY_MS * 2 ** Math.min(over, 30), this.#cfg.maxDelaySeconds * 1000);
          bucket.blockedUntil = Math.max(bucket.blockedUntil, t + delay);
        }
      }
      if (bucket.inFlight === 0 && bucket.failures === 0 && this.#buckets.get(key) === bucket) this.#buckets.delete(key);
    };
    return { failed: () => end('failed'), succeeded: () => end('succeeded'), release: () => end('released') };
  }

  /** Drops forgotten buckets; if that leaves less than a tenth free, the oldest idle ones (so sweeps stay rare). */
  #sweep(forgotten: (b: Bucket) => boolean): void {
    for (const [k, b] of this.#buckets) if (forgotten(b)) this.#buckets.delete(k);
    if (this.#buckets.size < MAX_BUCKETS * 0.9) return;
    for (const [k, b] of this.#buckets) {
      if (this.#buckets.size < MAX_BUCKETS * 0.9) break;
      if (b.inFlight === 0) this.#buckets.delete(k);
    }
  }

  #forgetOldestAccounts(): void {
    for (const k of this.#known.keys()) {
      if (this.#known.size < MAX_ACCOUNTS_WITH_KNOWN_ADDRESSES * 0.9) break;
      this.#known.delete(k);
    }
  }
}

function throttled(scope: AttemptScope, waitMs: number): ApiError {
  const seconds = Math.max(1, Math.ceil(waitMs / 1000));
  const err = new ApiError(
    429,
    THROTTLED_CODE,
    `For security purposes, too many ${WHAT[scope]}: try again in ${seconds} second${seconds === 1 ? '' : 's'}.`,
  );
  err.retryAfter = seconds;
  return err;
}
