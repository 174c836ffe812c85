/**
 * Fixed-window counters in memory: at most `limit` hits per key per window.
 * Good enough for one local process; windows restart with the process.
 */
export class RateLimiter {
  readonly #limit: number;
  readonly #windowMs: number;
  readonly #hits = new Map<string, { count: number; resetAt: number }>();
  readonly #now: () => number;

  constructor(limit: number, windowSeconds: number, now: () => number = Date.now) {
    this.#limit = limit;
    this.#windowMs = windowSeconds * 1000;
    this.#now = now;
  }

  /** Counts one hit for key; returns false when the key is over its limit (the hit is not counted then). */
  take(key: string): boolean {
    const now = this.#now();
    let entry = this.#hits.get(key);
    if (!entry || entry.resetAt <= now) {
      entry = { count: 0, resetAt: now + this.#windowMs };
      this.#hits.set(key, entry);
      if (this.#hits.size > 10_000) this.#sweep(now);
    }
    if (entry.count >= this.#limit) return false;
    entry.count++;
    return true;
  }

  /** How many hits key may still take in its current window. */
  available(key: string): number {
    const entry = this.#hits.get(key);
    if (!entry || entry.resetAt <= this.#now()) return this.#limit;
    return Math.max(0, this.#limit - entry.count);
  }

  /** Seconds until key may be used again (0 if it may now). */
  retryAfter(key: string): number {
    const entry = this.#hits.get(key);
    const now = this.#now();
    if (!entry || entry.resetAt <= now || entry.count < this.#limit) return 0;
    return Math.ceil((entry.resetAt - now) / 1000);
  }

  #sweep(now: number): void {
    for (const [k, v] of this.#hits) if (v.resetAt <= now) this.#hits.delete(k);
  }
}
