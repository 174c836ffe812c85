// Server options seen through the client: a short JWT expiry (supabase-js refreshes near expiry, expired tokens
// are refused), a higher minimum password length, and extra allowed redirect URLs.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuthChangeEvent } from '@supabase/supabase-js';
import {
  anonClient,
  codeOf,
  jwtPayload,
  latestMail,
  raw,
  sleep,
  startTestServer,
  uniqueEmail,
  verifyLink,
  type Localbase,
} from './helpers.ts';

const JWT_EXPIRY = 3;
const MIN_PASSWORD = 10;
const EXTRA_REDIRECT = 'http://localhost:4000/auth/callback';
const PASSWORD = 'long-enough-password';
let lb: Localbase;

beforeAll(async () => {
  lb = await startTestServer({
    jwtExpiry: JWT_EXPIRY,
    minPasswordLength: MIN_PASSWORD,
    additionalRedirectUrls: [EXTRA_REDIRECT],
  });
});

afterAll(async () => {
  await lb?.stop();
});

describe('jwtExpiry', () => {
  it('sets expires_in and exp, and an expired access token is refused with bad_jwt', async () => {
    const client = anonClient(lb);
    const { data, error } = await client.auth.signUp({ email: uniqueEmail('exp'), password: PASSWORD });
    expect(error).toBeNull();
    const session = data.session!;
    expect(session.expires_in).toBe(JWT_EXPIRY);
    const claims = jwtPayload(session.access_token);
    expect((claims.exp as number) - (claims.iat as number)).toBe(JWT_EXPIRY);
    expect((await raw(lb, '/auth/v1/user', { bearer: session.access_token })).status).toBe(200);

    await sleep((JWT_EXPIRY + 1.5) * 1000);
    const expired = await raw(lb, '/auth/v1/user', { bearer: session.access_token });
    expect(expired.status).toBe(403);
    expect(codeOf(expired)).toBe('bad_jwt');
    // The refresh token still works after the access token expired.
    const refreshed = await raw(lb, '/auth/v1/token?grant_type=refresh_token', {
      body: { refresh_token: session.refresh_token },
    });
    expect(refreshed.status).toBe(200);
  });

  it('supabase-js getSession() refreshes a session that expires within its margin (TOKEN_REFRESHED)', async () => {
    const client = anonClient(lb);
    const events: AuthChangeEvent[] = [];
    client.auth.onAuthStateChange((e) => {
      events.push(e);
    });
    const signUp = await client.auth.signUp({ email: uniqueEmail('margin'), password: PASSWORD });
    expect(signUp.error).toBeNull();
    const before = signUp.data.session!;
    const { data, error } = await client.auth.getSession();
    expect(error).toBeNull();
    expect(data.session?.refresh_token).not.toBe(before.refresh_token);
    await sleep(0);
    expect(events).toContain('TOKEN_REFRESHED');
    // And the refreshed session works against the server.
    const me = await client.auth.getUser();
    expect(me.error).toBeNull();
  });
});

describe('minPasswordLength', () => {
  it('refuses a password shorter than the configured minimum with weak_password', async () => {
    const { error } = await anonClient(lb).auth.signUp({ email: uniqueEmail('short'), password: '123456789' });
    expect(error?.status).toBe(422);
    expect(error?.code).toBe('weak_password');
    expect(error?.message).toMatch(new RegExp(`at least ${MIN_PASSWORD} characters`));
  });

  it('accepts a password of exactly the minimum length', async () => {
    const { error } = await anonClient(lb).auth.signUp({ email: uniqueEmail('exact'), password: 'x'.repeat(MIN_PASSWORD) });
    expect(error).toBeNull();
  });
});

describe('additionalRedirectUrls', () => {
  it('an allowed extra redirect URL is honoured by the mailed link', async () => {
    const email = uniqueEmail('redir');
    expect((await anonClient(lb).auth.signUp({ email, password: PASSWORD })).error).toBeNull();
    expect(
      (await anonClient(lb).auth.signInWithOtp({ email, options: { emailRedirectTo: EXTRA_REDIRECT } })).error,
    ).toBeNull();
    const mail = await latestMail(lb, email, 'magiclink');
    const res = await fetch(verifyLink(mail), { redirect: 'manual' });
    expect(res.status).toBe(303);
    const location = res.headers.get('location')!;
    expect(location.startsWith(EXTRA_REDIRECT)).toBe(true);
    expect(new URLSearchParams(new URL(location).hash.slice(1)).get('access_token')).toBeTruthy();
  });
});
