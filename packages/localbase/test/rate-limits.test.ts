// Rate limits per IP, proved with a server configured with low limits.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  API_VERSION,
  PASSWORD,
  anonClient,
  codeOf,
  listMail,
  raw,
  refreshRaw,
  serviceClient,
  startTestServer,
  uniqueEmail,
  type Localbase,
} from './helpers.ts';

const LIMITS = { signInSignUps: 4, tokenRefresh: 3, tokenVerifications: 3, emailSent: 2, windowSeconds: 300 };
let lb: Localbase;

beforeAll(async () => {
  lb = await startTestServer({ rateLimits: LIMITS });
});

afterAll(async () => {
  await lb?.stop();
});

/** Admin-created users do not consume the sign-in/sign-up budget. */
async function confirmedUser(): Promise<string> {
  const email = uniqueEmail('rl');
  const { error } = await serviceClient(lb).auth.admin.createUser({ email, password: PASSWORD, email_confirm: true });
  expect(error).toBeNull();
  return email;
}

// Tests run in order and share the server's counters; each test exhausts a different bucket.
let signInsUsed = 0;
let accessToken = '';

describe('rate limits', () => {
  it(`token refresh: ${LIMITS.tokenRefresh} per window, then 429 over_request_rate_limit`, async () => {
    const email = await confirmedUser();
    const signIn = await raw(lb, '/auth/v1/token?grant_type=password', { body: { email, password: PASSWORD } });
    signInsUsed += 1;
    expect(signIn.status).toBe(200);
    let token = (signIn.json as { refresh_token: string }).refresh_token;
    accessToken = (signIn.json as { access_token: string }).access_token;
    for (let i = 0; i < LIMITS.tokenRefresh; i++) {
      const res = await refreshRaw(lb, token);
      expect(res.status, `refresh #${i + 1}: ${res.text}`).toBe(200);
      token = (res.json as { refresh_token: string }).refresh_token;
    }
    const limited = await refreshRaw(lb, token);
    expect(limited.status).toBe(429);
    expect(codeOf(limited)).toBe('over_request_rate_limit');
    expect(limited.headers.get('x-supabase-api-version')).toBe(API_VERSION);

    // supabase-js surfaces it as an AuthApiError with status 429 (not a retryable 5xx).
    const client = anonClient(lb);
    const r = await client.auth.refreshSession({ refresh_token: token });
    expect(r.error?.status).toBe(429);
    expect(r.error?.code).toBe('over_request_rate_limit');
  });

  it(`token verifications: ${LIMITS.tokenVerifications} per window, then 429`, async () => {
    const statuses: number[] = [];
    for (let i = 0; i < LIMITS.tokenVerifications + 1; i++) {
      const res = await raw(lb, '/auth/v1/verify', { body: { type: 'magiclink', token_hash: `bad-${i}` } });
      statuses.push(res.status);
      if (res.status === 429) expect(codeOf(res)).toBe('over_request_rate_limit');
    }
    expect(statuses.slice(0, LIMITS.tokenVerifications).every((s) => s === 403)).toBe(true);
    expect(statuses[LIMITS.tokenVerifications]).toBe(429);
  });

  it(`e-mails: ${LIMITS.emailSent} per window, then 429 over_email_send_rate_limit`, async () => {
    const users = [await confirmedUser(), await confirmedUser(), await confirmedUser()];
    const statuses: number[] = [];
    let limitedBody: unknown;
    for (const email of users) {
      const res = await raw(lb, '/auth/v1/recover', { body: { email } });
      statuses.push(res.status);
      if (res.status === 429) limitedBody = res.json;
    }
    expect(statuses).toEqual([200, 200, 429]);
    expect(limitedBody).toMatchObject({ code: 'over_email_send_rate_limit' });
    expect(await listMail(lb, users[2]!)).toEqual([]);
  });

  it(`sign-in and sign-up share ${LIMITS.signInSignUps} per window, then 429 through supabase-js`, async () => {
    const email = await confirmedUser();
    const results: (number | null)[] = [];
    for (let i = signInsUsed; i < LIMITS.signInSignUps; i++) {
      const r =
        i % 2 === 0
          ? await anonClient(lb).auth.signInWithPassword({ email, password: 'wrong-password' })
          : await anonClient(lb).auth.signUp({ email: uniqueEmail('rl-signup'), password: PASSWORD });
      results.push(r.error?.status ?? null);
    }
    expect(results.every((s) => s === null || s === 400)).toBe(true);
    const limited = await anonClient(lb).auth.signInWithPassword({ email, password: PASSWORD });
    expect(limited.error?.status).toBe(429);
    expect(limited.error?.code).toBe('over_request_rate_limit');
    const limitedSignUp = await anonClient(lb).auth.signUp({ email: uniqueEmail('rl-late'), password: PASSWORD });
    expect(limitedSignUp.error?.status).toBe(429);
  });

  it('limits do not apply to the admin API or to GET /user', async () => {
    // The sign-in bucket is exhausted now, but admin calls and authenticated reads still work.
    await confirmedUser();
    for (let i = 0; i < 10; i++) {
      const res = await raw(lb, '/auth/v1/user', { bearer: accessToken });
      expect(res.status).toBe(200);
    }
  });
});
