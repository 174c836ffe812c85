// PKCE flow (flowType 'pkce', the default of @supabase/ssr): mailed links redirect with ?code=…, which the client
// exchanges with its stored code verifier.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type AuthChangeEvent, type SupabaseClient } from '@supabase/supabase-js';
import {
  PASSWORD,
  anonClient,
  latestMail,
  sleep,
  startTestServer,
  uniqueEmail,
  verifyLink,
  type Localbase,
} from './helpers.ts';

const SITE = 'http://127.0.0.1:3000';
let lb: Localbase;

beforeAll(async () => {
  lb = await startTestServer({ siteUrl: SITE });
});

afterAll(async () => {
  await lb?.stop();
});

function pkceClient(): SupabaseClient {
  return createClient(lb.url, lb.anonKey, {
    auth: { persistSession: false, autoRefreshToken: false, detectSessionInUrl: false, flowType: 'pkce' },
  });
}

function record(client: SupabaseClient): AuthChangeEvent[] {
  const events: AuthChangeEvent[] = [];
  client.auth.onAuthStateChange((e) => {
    events.push(e);
  });
  return events;
}

/** Follows a mailed link like a browser and returns the ?code= of the 303 Location. */
async function codeFromLink(link: URL, expectedPrefix: string): Promise<string> {
  const res = await fetch(link, { redirect: 'manual' });
  expect(res.status).toBe(303);
  const location = new URL(res.headers.get('location')!);
  expect(location.href.startsWith(expectedPrefix)).toBe(true);
  expect(location.hash).not.toContain('access_token');
  const code = location.searchParams.get('code');
  expect(code).toBeTruthy();
  return code!;
}

describe('PKCE', () => {
  it('magic link: signInWithOtp → link → ?code → exchangeCodeForSession signs in', async () => {
    const email = uniqueEmail('pkce');
    expect((await anonClient(lb).auth.signUp({ email, password: PASSWORD })).error).toBeNull();
    const client = pkceClient();
    const events = record(client);
    const redirectTo = `${SITE}/auth/callback`;
    expect((await client.auth.signInWithOtp({ email, options: { emailRedirectTo: redirectTo } })).error).toBeNull();
    const mail = await latestMail(lb, email, 'magiclink');
    const code = await codeFromLink(verifyLink(mail), redirectTo);

    const { data, error } = await client.auth.exchangeCodeForSession(code);
    expect(error).toBeNull();
    expect(data.session?.user.email).toBe(email);
    await sleep(0);
    expect(events).toContain('SIGNED_IN');
    expect((await client.auth.getUser()).data.user?.email).toBe(email);

    // A code is single-use.
    const again = await client.auth.exchangeCodeForSession(code);
    expect(again.error).not.toBeNull();
    expect(again.error!.status).toBeGreaterThanOrEqual(400);
    expect(again.error!.status).toBeLessThan(500);
  });

  it('password recovery: resetPasswordForEmail → link → ?code → exchange emits PASSWORD_RECOVERY', async () => {
    const email = uniqueEmail('pkce-rec');
    expect((await anonClient(lb).auth.signUp({ email, password: PASSWORD })).error).toBeNull();
    const client = pkceClient();
    const events = record(client);
    const redirectTo = `${SITE}/reset-password`;
    expect((await client.auth.resetPasswordForEmail(email, { redirectTo })).error).toBeNull();
    const mail = await latestMail(lb, email, 'recovery');
    const code = await codeFromLink(verifyLink(mail), redirectTo);
    const { error } = await client.auth.exchangeCodeForSession(code);
    expect(error).toBeNull();
    await sleep(0);
    expect(events).toContain('PASSWORD_RECOVERY');
    expect((await client.auth.updateUser({ password: 'pkce-new-password-1' })).error).toBeNull();
    expect(
      (await anonClient(lb).auth.signInWithPassword({ email, password: 'pkce-new-password-1' })).error,
    ).toBeNull();
  });

  it('a code cannot be exchanged without the matching verifier (another client)', async () => {
    const email = uniqueEmail('pkce-steal');
    expect((await anonClient(lb).auth.signUp({ email, password: PASSWORD })).error).toBeNull();
    const victim = pkceClient();
    expect((await victim.auth.signInWithOtp({ email })).error).toBeNull();
    const mail = await latestMail(lb, email, 'magiclink');
    const code = await codeFromLink(verifyLink(mail), SITE);
    // Another client has no verifier for this flow: supabase-js refuses locally or the server refuses it.
    const thief = pkceClient();
    const stolen = await thief.auth.exchangeCodeForSession(code);
    expect(stolen.error).not.toBeNull();
    expect(stolen.data.session).toBeNull();
    // The raw grant with a wrong verifier is refused by the server with a 4xx and a code.
    const res = await fetch(`${lb.url}/auth/v1/token?grant_type=pkce`, {
      method: 'POST',
      headers: { apikey: lb.anonKey, 'content-type': 'application/json', 'x-supabase-api-version': '2024-01-01' },
      body: JSON.stringify({ auth_code: code, code_verifier: 'x'.repeat(64) }),
    });
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(res.status).toBeLessThan(500);
    expect(typeof ((await res.json()) as { code?: unknown }).code).toBe('string');
    // The rightful owner still can.
    expect((await victim.auth.exchangeCodeForSession(code)).error).toBeNull();
  });
});
