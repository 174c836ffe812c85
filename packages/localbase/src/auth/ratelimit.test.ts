import { describe, expect, it } from 'vitest';
import { RateLimiter } from './ratelimit.ts';

describe('RateLimiter', () => {
  it('allows up to the limit per key and window, then refuses until the window ends', () => {
    let now = 1_000_000;
    const rl = new RateLimiter(3, 60, () => now);
    expect([rl.take('a'), rl.take('a'), rl.take('a'), rl.take('a')]).toEqual([true, true, true, false]);
    expect(rl.take('b')).toBe(true);
    expect(rl.retryAfter('a')).toBe(60);
    now += 59_000;
    expect(rl.take('a')).toBe(false);
    now += 1_000;
    expect(rl.take('a')).toBe(true);
    expect(rl.retryAfter('a')).toBe(0);
  });
});
