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
let signInTokens: { access: string; refresh: string } | undefined;

describe('rate limits', () => {
  it(`sign-ups: ${LIMITS.signInSignUps} per window, then 429 through supabase-js; password sign-ins are not counted there`, async () => {
    const email = await confirmedUser();
    const results: (number | null)[] = [];
    for (let i = 0; i < LIMITS.signInSignUps; i++) {
      const r = await anonClient(lb).auth.signUp({ email: uniqueEmail('rl-signup'), password: PASSWORD });
      results.push(r.error?.status ?? null);
    }
    expect(results).toEqual(Array(LIMITS.signInSignUps).fill(null));
    const limitedSignUp = await anonClient(lb).auth.signUp({ email: uniqueEmail('rl-late'), password: PASSWORD });
    expect(limitedSignUp.error?.status).toBe(429);
    expect(limitedSignUp.error?.code).toBe('over_request_rate_limit');

    // As GoTrue: a password sign-in is a token grant (the token budget, below), so a user can still sign in.
    const signIn = await raw(lb, '/auth/v1/token?grant_type=password', { body: { email, password: PASSWORD } });
    expect(signIn.status).toBe(200);
    const tokens = signIn.json as { access_token: string; refresh_token: string };
    signInTokens = { access: tokens.access_token, refresh: tokens.refresh_token };
  });

  it(`token grants: ${LIMITS.tokenRefresh} per window, password sign-ins and refreshes together, then 429 over_request_rate_limit`, async () => {
    // One grant was the sign-in above; the refreshes get the rest.
    let token = signInTokens!.refresh;
    for (let i = 1; i < LIMITS.tokenRefresh; i++) {
      const res = await refreshRaw(lb, token);
      expect(res.status, `refresh #${i}: ${res.text}`).toBe(200);
      token = (res.json as { refresh_token: string }).refresh_token;
    }
    const limited = await refreshRaw(lb, token);
    expect(limited.status).toBe(429);
    expect(codeOf(limited)).toBe('over_request_rate_limit');
    expect(limited.headers.get('x-supabase-api-version')).toBe(API_VERSION);

    // supabase-js surfaces it as an AuthApiError with status 429 (not a retryable 5xx), for both kinds of grant.
    const client = anonClient(lb);
    const r = await client.auth.refreshSession({ refresh_token: token });
    expect(r.error?.status).toBe(429);
    expect(r.error?.code).toBe('over_request_rate_limit');
    const signIn = await client.auth.signInWithPassword({ email: await confirmedUser(), password: PASSWORD });
    expect(signIn.error?.status).toBe(429);
    expect(signIn.error?.code).toBe('over_request_rate_limit');
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

  it('limits do not apply to the admin API or to GET /user', async () => {
    // Every bucket is exhausted now, but admin calls and authenticated reads still work.
    await confirmedUser();
    for (let i = 0; i < 10; i++) {
      const res = await raw(lb, '/auth/v1/user', { bearer: signInTokens!.access });
      expect(res.status).toBe(200);
    }
  });
});
