import { describe, expect, it } from 'vitest';
import { Secret } from 'otpauth';
import { makeTotp, matchTotpStep } from './mfa.ts';
import { globMatch } from './service.ts';
import { parseBanDuration } from './admin.ts';
import { mergeMetadata } from './routes.ts';

describe('TOTP matching', () => {
  const secret = new Secret({ size: 20 }).base32;
  const totp = makeTotp(secret, 'issuer', 'me@example.com');
  const now = 1_700_000_000_000;
  const step = Math.floor(now / 30_000);
  const codeAt = (s: number) => totp.generate({ timestamp: s * 30_000 + 1 });

  it('accepts the current step and ±1 step of skew, nothing further', () => {
    expect(matchTotpStep(totp, codeAt(step), null, now)).toBe(step);
    expect(matchTotpStep(totp, codeAt(step - 1), null, now)).toBe(step - 1);
    expect(matchTotpStep(totp, codeAt(step + 1), null, now)).toBe(step + 1);
    expect(matchTotpStep(totp, codeAt(step - 2), null, now)).toBeNull();
    expect(matchTotpStep(totp, codeAt(step + 2), null, now)).toBeNull();
  });

  it('accepts a code once: steps at or before the last used one are refused', () => {
    expect(matchTotpStep(totp, codeAt(step), step, now)).toBeNull();
    expect(matchTotpStep(totp, codeAt(step - 1), step, now)).toBeNull();
    expect(matchTotpStep(totp, codeAt(step + 1), step, now)).toBe(step + 1);
  });

  it('refuses malformed codes', () => {
    expect(matchTotpStep(totp, '12345', null, now)).toBeNull();
    expect(matchTotpStep(totp, 'abcdef', null, now)).toBeNull();
  });

  it('uses SHA-1, 6 digits, 30 s in the otpauth URI', () => {
    const uri = totp.toString();
    expect(uri).toMatch(/^otpauth:\/\/totp\//);
    expect(uri).toContain('algorithm=SHA1');
    expect(uri).toContain('digits=6');
    expect(uri).toContain('period=30');
  });
});

describe('redirect allow-list globs', () => {
  it('* stays inside a segment, ** crosses segments', () => {
    expect(globMatch('http://localhost:3000/*', 'http://localhost:3000/cb')).toBe(true);
    expect(globMatch('http://localhost:3000/*', 'http://localhost:3000/a/b')).toBe(false);
    expect(globMatch('http://localhost:3000/**', 'http://localhost:3000/a/b')).toBe(true);
    expect(globMatch('https://*.example.com/**', 'https://app.example.com/x')).toBe(true);
    expect(globMatch('https://*.example.com/**', 'https://evil.com/.example.com/x')).toBe(false);
  });
});

describe('admin ban durations', () => {
  it('parses Go durations and none', () => {
    expect(parseBanDuration('24h')).toBe(86400);
    expect(parseBanDuration('1h30m')).toBe(5400);
    expect(parseBanDuration('none')).toBeNull();
    expect(() => parseBanDuration('forever')).toThrow(/ban duration/);
  });
});

describe('user_metadata merge', () => {
  it('merges keys and deletes keys set to null', () => {
    expect(mergeMetadata({ a: 1, b: 2 }, { b: null, c: 3 })).toEqual({ a: 1, c: 3 });
  });
});

describe('PKCE', () => {
  it('matches S256 and plain verifiers (RFC 7636 appendix B example)', async () => {
    const { pkceMatches, readPkce } = await import('./service.ts');
    const verifier = 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk';
    expect(pkceMatches(verifier, 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM', 's256')).toBe(true);
    expect(pkceMatches(verifier + 'x', 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM', 's256')).toBe(false);
    expect(pkceMatches(verifier, verifier, 'plain')).toBe(true);
    expect(readPkce({ code_challenge: null, code_challenge_method: null })).toBeUndefined();
    expect(readPkce({ code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM', code_challenge_method: 's256' })).toEqual({
      challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
      method: 's256',
    });
    expect(() => readPkce({ code_challenge: 'short', code_challenge_method: 's256' })).toThrow(/PKCE/);
  });
});
