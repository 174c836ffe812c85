// Flows that go through the local mailbox, with confirmations OFF (default): password recovery, magic link
// (link and 6-digit code), GET /verify redirects, e-mail change, no e-mail enumeration.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuthChangeEvent, SupabaseClient } from '@supabase/supabase-js';
import {
  PASSWORD,
  anonClient,
  codeOf,
  latestMail,
  listMail,
  raw,
  sleep,
  startTestServer,
  tokenHashOf,
  uniqueEmail,
  testDatabaseUrl,
  verifyLink,
  waitForMail,
  type Localbase,
} from './helpers.ts';

let lb: Localbase;
const SITE = 'http://127.0.0.1:3000';

beforeAll(async () => {
  lb = await startTestServer({ siteUrl: SITE });
});

afterAll(async () => {
  await lb?.stop();
});

async function newUser(): Promise<string> {
  const email = uniqueEmail('mail');
  const { error } = await anonClient(lb).auth.signUp({ email, password: PASSWORD });
  expect(error).toBeNull();
  return email;
}

function recordEvents(client: SupabaseClient): AuthChangeEvent[] {
  const events: AuthChangeEvent[] = [];
  client.auth.onAuthStateChange((e) => {
    events.push(e);
  });
  return events;
}

/** Parses the fragment of a 303 Location from GET /verify. */
function fragmentOf(location: string): URLSearchParams {
  const hash = new URL(location).hash.replace(/^#/, '');
  return new URLSearchParams(hash);
}

describe('mailbox', () => {
  // With LOCALBASE_TEST_DATABASE_URL every test file shares one database, hence one mailbox: this test reads and clears
  // only its own address's mails (the page without ?to= shows the newest 500 of all files' mails).
  it('serves an HTML page and a JSON API without an apikey, and can be cleared per address', async () => {
    const email = await newUser();
    const other = await newUser();
    await anonClient(lb).auth.resetPasswordForEmail(email);
    await anonClient(lb).auth.resetPasswordForEmail(other);
    const mail = await latestMail(lb, email, 'recovery');
    expect(mail.to).toBe(email);
    expect(typeof mail.subject).toBe('string');
    expect(mail.html).toContain('/auth/v1/verify');
    expect(mail.token).toMatch(/^\d{6}$/);
    expect(Number.isNaN(Date.parse(mail.createdAt))).toBe(false);
    const otherMail = await latestMail(lb, other, 'recovery');

    await sleep(1100); // per-user mail frequency
    expect((await anonClient(lb).auth.signInWithOtp({ email })).error).toBeNull();
    const magic = await latestMail(lb, email, 'magiclink');

    const page = await fetch(`${lb.url}/mailbox?to=${encodeURIComponent(email)}`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/text\/html/);
    const html = await page.text();
    expect(html).toContain(email);
    expect(html).not.toContain(tokenHashOf(otherMail));
    // Links are clickable, and the newest mail comes first.
    const magicHash = tokenHashOf(magic);
    const recoveryHash = tokenHashOf(mail);
    expect(html).toMatch(new RegExp(`href="[^"]*${magicHash}`));
    expect(html).toMatch(new RegExp(`href="[^"]*${recoveryHash}`));
    expect(html.indexOf(magicHash)).toBeLessThan(html.indexOf(recoveryHash));

    // DELETE ?to= clears that address's mails (any letter case) and leaves the others'.
    const cleared = await fetch(`${lb.url}/mailbox/api/messages?to=${encodeURIComponent(email.toUpperCase())}`, { method: 'DELETE' });
    expect(cleared.status).toBe(204);
    expect(await listMail(lb, email)).toEqual([]);
    expect((await listMail(lb, other)).map((m) => m.id)).toEqual([otherMail.id]);
  });

  // Clearing everything would pull other files' mails from under them on a shared database.
  it.skipIf(testDatabaseUrl)('DELETE without ?to= clears every mail', async () => {
    const email = await newUser();
    await anonClient(lb).auth.resetPasswordForEmail(email);
    await latestMail(lb, email, 'recovery');
    const cleared = await fetch(`${lb.url}/mailbox/api/messages`, { method: 'DELETE' });
    expect(cleared.status).toBe(204);
    expect(await listMail(lb, email)).toEqual([]);
    expect(await (await fetch(`${lb.url}/mailbox/api/messages`)).json()).toEqual([]);
  });
});

describe('password recovery', () => {
  it('resetPasswordForEmail → mail → verifyOtp(token_hash, recovery) → updateUser(password) → sign in', async () => {
    const email = await newUser();
    const client = anonClient(lb);
    const events = recordEvents(client);
    const redirectTo = `${SITE}/reset-password`;
    const sent = await client.auth.resetPasswordForEmail(email, { redirectTo });
    expect(sent.error).toBeNull();
    expect(sent.data).toEqual({});

    const mail = await latestMail(lb, email, 'recovery');
    const link = verifyLink(mail);
    expect(link.searchParams.get('type')).toBe('recovery');
    expect(link.searchParams.get('redirect_to')).toBe(redirectTo);

    const verified = await client.auth.verifyOtp({ token_hash: tokenHashOf(mail), type: 'recovery' });
    expect(verified.error).toBeNull();
    expect(verified.data.session?.access_token).toBeTruthy();
    expect(verified.data.user?.email).toBe(email);
    await sleep(0);
    expect(events).toContain('PASSWORD_RECOVERY');

    const newPassword = 'recovered-password-42';
    const updated = await client.auth.updateUser({ password: newPassword });
    expect(updated.error).toBeNull();

    expect((await anonClient(lb).auth.signInWithPassword({ email, password: PASSWORD })).error?.code).toBe(
      'invalid_credentials',
    );
    expect((await anonClient(lb).auth.signInWithPassword({ email, password: newPassword })).error).toBeNull();

    // The link is single-use.
    const again = await anonClient(lb).auth.verifyOtp({ token_hash: tokenHashOf(mail), type: 'recovery' });
    expect(again.error?.status).toBe(403);
    expect(again.error?.code).toBe('otp_expired');
  });

  it('answers an unknown e-mail exactly like a known one, and sends nothing', async () => {
    const known = await newUser();
    const unknown = uniqueEmail('ghost');
    const a = await raw(lb, '/auth/v1/recover', { body: { email: known } });
    const b = await raw(lb, '/auth/v1/recover', { body: { email: unknown } });
    expect(a.status).toBe(200);
    expect(b.status).toBe(200);
    expect(a.json).toEqual({});
    expect(b.json).toEqual({});
    await waitForMail(lb, known, { type: 'recovery' });
    expect(await listMail(lb, unknown)).toEqual([]);
  });

  it('refuses a wrong 6-digit recovery code with otp_expired (403)', async () => {
    const email = await newUser();
    await anonClient(lb).auth.resetPasswordForEmail(email);
    const mail = await latestMail(lb, email, 'recovery');
    const wrong = mail.token === '000000' ? '111111' : '000000';
    const { error } = await anonClient(lb).auth.verifyOtp({ email, token: wrong, type: 'recovery' });
    expect(error?.status).toBe(403);
    expect(error?.code).toBe('otp_expired');
  });
});

describe('magic link', () => {
  it('signInWithOtp → mail → verifyOtp(token_hash, magiclink) signs in with SIGNED_IN', async () => {
    const email = await newUser();
    const client = anonClient(lb);
    const events = recordEvents(client);
    const sent = await client.auth.signInWithOtp({ email, options: { shouldCreateUser: false } });
    expect(sent.error).toBeNull();
    expect(sent.data).toEqual({ user: null, session: null });
    expect(client.auth).toBeDefined();

    const mail = await latestMail(lb, email, 'magiclink');
    expect(verifyLink(mail).searchParams.get('type')).toBe('magiclink');
    const { data, error } = await client.auth.verifyOtp({ token_hash: tokenHashOf(mail), type: 'magiclink' });
    expect(error).toBeNull();
    expect(data.user?.email).toBe(email);
    expect(data.session?.refresh_token).toBeTruthy();
    await sleep(0);
    expect(events).toContain('SIGNED_IN');
    expect((await client.auth.getUser()).data.user?.email).toBe(email);
  });

  it('the 6-digit code from the same mail signs in with verifyOtp({ email, token, type: "email" })', async () => {
    const email = await newUser();
    expect((await anonClient(lb).auth.signInWithOtp({ email })).error).toBeNull();
    const mail = await latestMail(lb, email, 'magiclink');
    expect(mail.token).toMatch(/^\d{6}$/);
    const client = anonClient(lb);
    const { data, error } = await client.auth.verifyOtp({ email, token: mail.token!, type: 'email' });
    expect(error).toBeNull();
    expect(data.session?.user.email).toBe(email);
    // The code is single-use.
    const again = await anonClient(lb).auth.verifyOtp({ email, token: mail.token!, type: 'email' });
    expect(again.error?.code).toBe('otp_expired');
  });

  it('an unknown e-mail gets the same answer and a mail whose code creates and signs in the user', async () => {
    const email = uniqueEmail('newbie');
    const res = await raw(lb, '/auth/v1/otp', { body: { email, create_user: true, data: { from: 'otp' } } });
    expect(res.status).toBe(200);
    expect(res.json).toEqual({});
    const mail = await latestMail(lb, email);
    expect(['signup', 'magiclink']).toContain(mail.type);
    const { data, error } = await anonClient(lb).auth.verifyOtp({ email, token: mail.token!, type: 'email' });
    expect(error).toBeNull();
    expect(data.user?.email).toBe(email);
    expect(data.user?.email_confirmed_at).toBeTruthy();
  });
});

describe('GET /verify (links in mails)', () => {
  it('answers 303 to redirect_to with the session in the fragment, without an apikey', async () => {
    const email = await newUser();
    const redirectTo = `${SITE}/welcome`;
    expect((await anonClient(lb).auth.signInWithOtp({ email, options: { emailRedirectTo: redirectTo } })).error).toBeNull();
    const mail = await latestMail(lb, email, 'magiclink');
    const res = await fetch(verifyLink(mail), { redirect: 'manual' });
    expect(res.status).toBe(303);
    const location = res.headers.get('location')!;
    expect(location.startsWith(redirectTo)).toBe(true);
    const frag = fragmentOf(location);
    expect(frag.get('access_token')).toBeTruthy();
    expect(frag.get('refresh_token')).toBeTruthy();
    expect(frag.get('expires_in')).toBe('3600');
    expect(Number(frag.get('expires_at'))).toBeGreaterThan(Date.now() / 1000);
    expect(frag.get('token_type')).toBe('bearer');
    expect(frag.get('type')).toBe('magiclink');

    const me = await raw(lb, '/auth/v1/user', { bearer: frag.get('access_token')! });
    expect(me.status).toBe(200);
    expect((me.json as { email: string }).email).toBe(email);

    // The session from the fragment is usable by supabase-js, as detectSessionInUrl would do.
    const client = anonClient(lb);
    const set = await client.auth.setSession({
      access_token: frag.get('access_token')!,
      refresh_token: frag.get('refresh_token')!,
    });
    expect(set.error).toBeNull();
    expect((await client.auth.refreshSession()).error).toBeNull();

    // A second click fails with the error fragment.
    const again = await fetch(verifyLink(mail), { redirect: 'manual' });
    expect(again.status).toBe(303);
    const err = fragmentOf(again.headers.get('location')!);
    expect(err.get('error')).toBeTruthy();
    expect(err.get('error_code')).toBe('otp_expired');
  });

  it('redirects a bad token to the error fragment', async () => {
    const url = `${lb.url}/auth/v1/verify?token=${'ab'.repeat(28)}&type=magiclink&redirect_to=${encodeURIComponent(`${SITE}/welcome`)}`;
    const res = await fetch(url, { redirect: 'manual' });
    expect(res.status).toBe(303);
    const location = res.headers.get('location')!;
    expect(location.startsWith(SITE)).toBe(true);
    const frag = fragmentOf(location);
    expect(frag.get('access_token')).toBeNull();
    expect(frag.get('error')).toBeTruthy();
    expect(frag.get('error_code')).toBe('otp_expired');
    expect(frag.get('error_description')).toBeTruthy();
  });

  it('never redirects to a URL outside the site URL and allow list (falls back to the site URL)', async () => {
    const email = await newUser();
    const evil = 'https://evil.example.net/steal';
    expect((await anonClient(lb).auth.signInWithOtp({ email, options: { emailRedirectTo: evil } })).error).toBeNull();
    const mail = await latestMail(lb, email, 'magiclink');
    const res = await fetch(verifyLink(mail), { redirect: 'manual' });
    expect(res.status).toBe(303);
    const location = res.headers.get('location')!;
    expect(location.startsWith('https://evil.example.net')).toBe(false);
    expect(location.startsWith(SITE)).toBe(true);
    // Also a hand-made link with an evil redirect_to and a bad token.
    const forged = await fetch(
      `${lb.url}/auth/v1/verify?token=bad&type=magiclink&redirect_to=${encodeURIComponent(evil)}`,
      { redirect: 'manual' },
    );
    expect(forged.status).toBe(303);
    expect(forged.headers.get('location')!.startsWith(SITE)).toBe(true);
    // Nor to a script URL or a protocol-relative one.
    for (const target of ['javascript:alert(1)', '//evil.example.net/x', 'http://127.0.0.1:3000.evil.example.net/']) {
      const res2 = await fetch(
        `${lb.url}/auth/v1/verify?token=bad&type=signup&redirect_to=${encodeURIComponent(target)}`,
        { redirect: 'manual' },
      );
      expect(res2.status).toBe(303);
      expect(res2.headers.get('location')!.startsWith(`${SITE}/`) || res2.headers.get('location')!.startsWith(`${SITE}#`)).toBe(true);
    }
  });

  it('falls back to the site URL for a redirect_to with control characters (it was a 500), from a mail and by hand', async () => {
    const email = await newUser();
    const crlf = `${SITE}/welcome\r\nSet-Cookie: planted=1`;
    expect((await anonClient(lb).auth.signInWithOtp({ email, options: { emailRedirectTo: crlf } })).error).toBeNull();
    const fromMail = await fetch(verifyLink(await latestMail(lb, email, 'magiclink')), { redirect: 'manual' });
    const byHand = await fetch(`${lb.url}/auth/v1/verify?token=bad&type=signup&redirect_to=${encodeURIComponent(crlf)}`, { redirect: 'manual' });
    for (const res of [fromMail, byHand]) {
      expect(res.status).toBe(303);
      expect(res.headers.get('set-cookie')).toBeNull();
      expect(res.headers.get('location')!.startsWith(`${SITE}#`)).toBe(true);
    }
    expect(fragmentOf(fromMail.headers.get('location')!).get('access_token')).toBeTruthy();
  });
});

describe('e-mail change (confirmations off)', () => {
  it('ends with the new address, after any confirmation mails, and sign-in works with it', async () => {
    const email = await newUser();
    const client = anonClient(lb);
    expect((await client.auth.signInWithPassword({ email, password: PASSWORD })).error).toBeNull();
    const newEmail = uniqueEmail('moved');
    const { data, error } = await client.auth.updateUser({ email: newEmail });
    expect(error).toBeNull();
    if (data.user?.email !== newEmail) {
      // Confirmation required: the change is pending until every mailed link is verified.
      expect(data.user?.new_email).toBe(newEmail);
      const mails = [...(await listMail(lb, email)), ...(await waitForMail(lb, newEmail, { type: 'email_change' }))].filter(
        (m) => m.type === 'email_change',
      );
      for (const mail of mails) {
        const v = await anonClient(lb).auth.verifyOtp({ token_hash: tokenHashOf(mail), type: 'email_change' });
        expect(v.error).toBeNull();
      }
    }
    const me = await client.auth.getUser();
    expect(me.data.user?.email).toBe(newEmail);
    expect((await anonClient(lb).auth.signInWithPassword({ email: newEmail, password: PASSWORD })).error).toBeNull();
  });

  it('refuses a change to an address that is taken with email_exists (422)', async () => {
    const taken = await newUser();
    const email = await newUser();
    const client = anonClient(lb);
    expect((await client.auth.signInWithPassword({ email, password: PASSWORD })).error).toBeNull();
    const { error } = await client.auth.updateUser({ email: taken });
    expect(error?.status).toBe(422);
    expect(error?.code).toBe('email_exists');
  });
});

describe('verify input errors', () => {
  it('POST /verify without token or token_hash → 400 validation_failed', async () => {
    const res = await raw(lb, '/auth/v1/verify', { body: { type: 'magiclink', email: 'a@example.com' } });
    expect(res.status).toBe(400);
    expect(codeOf(res)).toBe('validation_failed');
  });

  it('POST /verify with an unknown type → 400 with a code', async () => {
    const res = await raw(lb, '/auth/v1/verify', { body: { type: 'teleport', token_hash: 'abc' } });
    expect(res.status).toBe(400);
    expect(typeof codeOf(res)).toBe('string');
  });
});
