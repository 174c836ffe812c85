import { describe, expect, it } from 'vitest';
import { DEFAULT_ACCOUNT_PROTECTION } from '../config.ts';
import { ApiError } from '../http/errors.ts';
import { AttemptGuard } from './attempts.ts';

/** Tries once; returns the seconds to wait when refused, or 0 after a (failed) check. */
function guess(guard: AttemptGuard, address = '203.0.113.1', known = false): number {
  try {
    guard.begin('password', 'victim@example.com', address, known).failed();
    return 0;
  } catch (err) {
    if (err instanceof ApiError && err.status === 429) return err.retryAfter ?? 0;
    throw err;
  }
}

describe('AttemptGuard (defaults)', () => {
  const HOUR = 3600_000;

  it('an attacker who waits exactly as told gets at most 100 guesses checked per hour (ASVS 2.2.1)', () => {
    let now = 0;
    const guard = new AttemptGuard(DEFAULT_ACCOUNT_PROTECTION, () => now);
    let checked = 0;
    while (now < HOUR) {
      const wait = guess(guard);
      if (wait === 0) checked++;
      else now += wait * 1000;
    }
    expect(checked).toBeLessThanOrEqual(100);
    expect(checked).toBe(69); // 5 free + 6 while the delay grows (1 … 32 s) + 58 at one a minute
  });

  it('bursts spaced by the failure window get fewer (the window does not hand out more than the steady state)', () => {
    let now = 0;
    const guard = new AttemptGuard(DEFAULT_ACCOUNT_PROTECTION, () => now);
    let checked = 0;
    let lastFailure = 0;
    while (now < HOUR) {
      const wait = guess(guard);
      if (wait === 0) {
        checked++;
        lastFailure = now;
      } else if (wait >= 32) now = lastFailure + DEFAULT_ACCOUNT_PROTECTION.failureWindowSeconds * 1000 + 1;
      else now += wait * 1000;
    }
    expect(checked).toBeLessThan(69);
  });

  it('an address that signed in before has its own bucket; in-flight attempts count until they end', () => {
    let now = 0;
    const guard = new AttemptGuard(DEFAULT_ACCOUNT_PROTECTION, () => now);
    guard.rememberAddress('user-1', '2001:db8:1:2::10');
    expect(guard.isKnownAddress('user-1', '2001:db8:1:2::99')).toBe(true); // same /64
    expect(guard.isKnownAddress('user-1', '2001:db8:1:3::10')).toBe(false);
    for (let i = 0; i < 20; i++) guess(guard);
    expect(guess(guard)).toBeGreaterThan(0);
    expect(guess(guard, '2001:db8:1:2::99', true)).toBe(0);

    const pending = Array.from({ length: DEFAULT_ACCOUNT_PROTECTION.freeFailures }, () =>
      guard.begin('otp', 'someone@example.com', '192.0.2.1', false),
    );
    expect(() => guard.begin('otp', 'someone@example.com', '192.0.2.2', false)).toThrow(ApiError);
    pending[0]!.succeeded(); // a right code empties the bucket …
    for (const p of pending.slice(1)) p.release(); // … and released attempts leave no trace
    expect(() => guard.begin('otp', 'someone@example.com', '192.0.2.2', false).failed()).not.toThrow();

    now += 31 * 24 * 3600_000;
    expect(guard.isKnownAddress('user-1', '2001:db8:1:2::10')).toBe(false); // known addresses expire after 30 days
  });

  it('a delay longer than the failure window still runs to its end', () => {
    let now = 0;
    const guard = new AttemptGuard({ ...DEFAULT_ACCOUNT_PROTECTION, freeFailures: 0, failureWindowSeconds: 0.5 }, () => now);
    expect(guess(guard)).toBe(0);
    now = 600;
    expect(guess(guard)).toBe(1);
    now = 1000;
    expect(guess(guard)).toBe(0);
  });

  it('maxDelaySeconds 0 turns the per-account delays off', () => {
    const guard = new AttemptGuard({ ...DEFAULT_ACCOUNT_PROTECTION, maxDelaySeconds: 0 });
    for (let i = 0; i < 50; i++) expect(guess(guard)).toBe(0);
  });
});
