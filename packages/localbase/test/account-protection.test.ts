// Per-account defence against guessing spread over many addresses (docs/decisions/017-account-guessing-defence.md):
// growing delays per account after a few failed passwords / codes, a separate budget for addresses that signed in
// before, and email codes that die after a few wrong tries. The server's delay clock is injected (frozen here and
// moved by hand), so no test sleeps. Requests come through a trusted proxy on 127.0.0.2 with X-Forwarded-For, so
// each attacker address is its own client for the per-IP limits (raised by startTestServer).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_ACCOUNT_PROTECTION } from '../src/index.ts';
import {
  PASSWORD,
  codeOf,
  latestMail,
  raw,
  serviceClient,
  startTestServer,
  totpCode,
  uniqueEmail,
  wrongTotpCode,
  type Localbase,
  type RawResponse,
} from './helpers.ts';

const PROXY = '127.0.0.2';
const THROTTLED = 'too_many_failed_attempts';
const { freeFailures: FREE, maxDelaySeconds: MAX_DELAY, otpMaxAttempts: OTP_TRIES } = DEFAULT_ACCOUNT_PROTECTION;

let lb: Localbase;
let now = Date.now();

beforeAll(async () => {
  lb = await startTestServer({ trustedProxies: [PROXY], clock: () => now });
});

afterAll(async () => {
  await lb?.stop();
});

const from = (ip: string) => ({ localAddress: PROXY, headers: { 'x-forwarded-for': ip } });

function signIn(email: string, password: string, ip: string): Promise<RawResponse> {
  return raw(lb, '/auth/v1/token?grant_type=password', { ...from(ip), body: { email, password } });
}

async function newUser(prefix: string): Promise<string> {
  const email = uniqueEmail(prefix);
  const { error } = await serviceClient(lb).auth.admin.createUser({ email, password: PASSWORD, email_confirm: true });
  expect(error).toBeNull();
  return email;
}

function expectThrottled(res: RawResponse, seconds?: number): void {
  expect([res.status, codeOf(res)], res.text).toEqual([429, THROTTLED]);
  const retryAfter = Number(res.headers.get('retry-after'));
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  if (seconds !== undefined) expect(retryAfter).toBe(seconds);
}

const tally = (statuses: number[]) =>
  statuses.reduce<Record<number, number>>((acc, s) => ({ ...acc, [s]: (acc[s] ?? 0) + 1 }), {});

describe('password sign-in', () => {
  it('120 wrong passwords over 4 addresses, then the right one from a fifth: refused until the delay ends', async () => {
    const email = await newUser('spray');
    const statuses: number[] = [];
    let last: RawResponse | undefined;
    for (let i = 0; i < 120; i++) {
      last = await signIn(email, `wrong-${i}`, `198.51.100.${1 + (i % 4)}`);
      statuses.push(last.status);
      if (last.status === 429) expectThrottled(last);
      else expect(codeOf(last)).toBe('invalid_credentials');
    }
    // Only the free failures were checked; every later guess was refused before the password was looked at.
    expect(tally(statuses)).toEqual({ 400: FREE, 429: 120 - FREE });
    const right = await signIn(email, PASSWORD, '198.51.100.5');
    expectThrottled(right, 1);
    now += 1000;
    const after = await signIn(email, PASSWORD, '198.51.100.5');
    expect(after.status, after.text).toBe(200);
    // The success starts the account over: a typo now is an ordinary invalid_credentials.
    expect(codeOf(await signIn(email, 'typo', '198.51.100.5'))).toBe('invalid_credentials');
  }, 120_000);

  it("an address that signed in before keeps its own budget: the owner gets in during an attack", async () => {
    const email = await newUser('owner');
    expect((await signIn(email, PASSWORD, '192.0.2.10')).status).toBe(200); // the owner's usual address
    for (let i = 0; i < 20; i++) await signIn(email, `guess-${i}`, `203.0.113.${i}`);
    expectThrottled(await signIn(email, PASSWORD, '203.0.113.99')); // a new address waits like the attacker
    const owner = await signIn(email, PASSWORD, '192.0.2.10');
    expect(owner.status, owner.text).toBe(200);
  });

  it('the delay doubles from 1 s up to the cap; an hour of patient guessing gets at most 100 checked', async () => {
    const email = await newUser('patient');
    const start = now;
    const delays: number[] = [];
    let checked = 0;
    // (bounded, so that a missing delay fails in seconds instead of looping)
    for (let i = 0; now - start < 3600_000 && i < 400; i++) {
      const res = await signIn(email, 'patient-guess', '203.0.113.200');
      if (res.status === 429) {
        const wait = Number(res.headers.get('retry-after'));
        delays.push(wait);
        now += wait * 1000;
      } else {
        expect(codeOf(res)).toBe('invalid_credentials');
        checked++;
      }
    }
    expect(now - start).toBeGreaterThanOrEqual(3600_000);
    expect(delays.slice(0, 8)).toEqual([1, 2, 4, 8, 16, 32, MAX_DELAY, MAX_DELAY]);
    expect(Math.max(...delays)).toBe(MAX_DELAY); // a real user waits at most this long
    expect(checked).toBeLessThanOrEqual(100); // OWASP ASVS 2.2.1
    expect(checked).toBeGreaterThan(FREE);
    // Failures are forgotten after the window without one: the free attempts are back.
    now += DEFAULT_ACCOUNT_PROTECTION.failureWindowSeconds * 1000 + MAX_DELAY * 1000 + 1000;
    const again: number[] = [];
    for (let i = 0; i < FREE - 1; i++) again.push((await signIn(email, 'patient-guess', '203.0.113.201')).status);
    expect(again).toEqual(Array<number>(FREE - 1).fill(400));
    expect((await signIn(email, PASSWORD, '203.0.113.201')).status).toBe(200);
  }, 300_000);

  it('a burst of concurrent guesses gets only the free attempts checked', async () => {
    const email = await newUser('burst');
    const results = await Promise.all(
      Array.from({ length: 40 }, (_, i) => signIn(email, `burst-${i}`, `198.51.100.${100 + i}`)),
    );
    expect(tally(results.map((r) => r.status))).toEqual({ 400: FREE, 429: 40 - FREE });
  }, 60_000);

  it('an unknown email is held back the same way (no enumeration by the answers)', async () => {
    const email = uniqueEmail('nobody');
    const statuses: number[] = [];
    for (let i = 0; i <= FREE; i++) statuses.push((await signIn(email, 'x-password', `198.51.100.${200 + i}`)).status);
    expect(statuses).toEqual([...Array<number>(FREE).fill(400), 429]);
  });
});

describe('email codes (POST /verify with email + token)', () => {
  async function requestCode(email: string): Promise<string> {
    const res = await raw(lb, '/auth/v1/otp', { body: { email, create_user: false } });
    expect(res.status, res.text).toBe(200);
    const mail = await latestMail(lb, email, 'magiclink');
    expect(mail.token).toMatch(/^\d{6}$/);
    return mail.token!;
  }

  function verify(email: string, token: string, ip: string): Promise<RawResponse> {
    return raw(lb, '/auth/v1/verify', { ...from(ip), body: { type: 'email', email, token } });
  }

  const wrongFor = (code: string, i: number) => String((Number(code) + 1 + i) % 1_000_000).padStart(6, '0');

  it('90 wrong codes over 3 addresses, then the right one: refused, and the code is dead', async () => {
    const email = await newUser('otp-spray');
    const code = await requestCode(email);
    const statuses: number[] = [];
    for (let i = 0; i < 90; i++) {
      const res = await verify(email, wrongFor(code, i), `198.51.100.${10 + (i % 3)}`);
      statuses.push(res.status);
      if (res.status === 429) expectThrottled(res);
      else expect(codeOf(res)).toBe('otp_expired');
    }
    expect(tally(statuses)).toEqual({ 403: FREE, 429: 90 - FREE });
    expectThrottled(await verify(email, code, '198.51.100.13'));
    now += MAX_DELAY * 1000;
    // After the delay: the code died after its wrong tries; the user asks for a new one.
    const dead = await verify(email, code, '198.51.100.13');
    expect([dead.status, codeOf(dead)]).toEqual([403, 'otp_expired']);
    now += MAX_DELAY * 1000;
    const fresh = await requestCode(email);
    const ok = await verify(email, fresh, '198.51.100.13');
    expect(ok.status, ok.text).toBe(200);
  }, 60_000);

  it(`a code survives ${OTP_TRIES - 1} wrong tries and dies at the ${OTP_TRIES}th, counted per recipient across addresses`, async () => {
    const email = await newUser('otp-tries');
    const code = await requestCode(email);
    for (let i = 0; i < OTP_TRIES - 1; i++) expect((await verify(email, wrongFor(code, i), `192.0.2.${i + 1}`)).status).toBe(403);
    const ok = await verify(email, code, '192.0.2.100');
    expect(ok.status, ok.text).toBe(200);

    const next = await requestCode(email);
    for (let i = 0; i < OTP_TRIES; i++) expect((await verify(email, wrongFor(next, i), `192.0.2.${i + 1}`)).status).toBe(403);
    now += MAX_DELAY * 1000; // past the per-account delay the last failure started
    const dead = await verify(email, next, '192.0.2.100');
    expect([dead.status, codeOf(dead)]).toEqual([403, 'otp_expired']);
    // Its link died with it.
    const mail = await latestMail(lb, email, 'magiclink');
    const link = await fetch(mail.links.find((l) => l.includes('/auth/v1/verify'))!, { redirect: 'manual' });
    expect(link.headers.get('location')).toContain('error_code=otp_expired');
  });
});

describe('TOTP codes (/factors/{id}/verify)', () => {
  it(`after ${FREE} wrong codes even the right one waits for the delay`, async () => {
    const email = await newUser('totp');
    const session = await signIn(email, PASSWORD, '192.0.2.30');
    expect(session.status).toBe(200);
    const bearer = (session.json as { access_token: string }).access_token;
    const ip = from('192.0.2.30');
    const factor = await raw(lb, '/auth/v1/factors', { ...ip, bearer, body: { factor_type: 'totp', friendly_name: 'app' } });
    expect(factor.status, factor.text).toBe(200);
    const { id, totp } = factor.json as { id: string; totp: { secret: string } };
    const challenge = await raw(lb, `/auth/v1/factors/${id}/challenge`, { ...ip, bearer, body: {} });
    const challengeId = (challenge.json as { id: string }).id;
    const attempt = (code: string) =>
      raw(lb, `/auth/v1/factors/${id}/verify`, { ...ip, bearer, body: { challenge_id: challengeId, code } });
    for (let i = 0; i < FREE; i++) expect(codeOf(await attempt(wrongTotpCode(totp.secret)))).toBe('mfa_verification_failed');
    expectThrottled(await attempt(totpCode(totp.secret)), 1);
    now += 1000;
    const ok = await attempt(totpCode(totp.secret));
    expect(ok.status, ok.text).toBe(200);
  });
});
