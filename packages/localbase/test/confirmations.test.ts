// Email confirmations ON: signUp returns a bare user and mails a confirmation; verify → session; resend;
// duplicate sign-ups are obfuscated; e-mail change needs the mailed confirmation(s).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuthChangeEvent } from '@supabase/supabase-js';
import {
  PASSWORD,
  anonClient,
  latestMail,
  listMail,
  raw,
  serviceClient,
  sleep,
  startTestServer,
  tokenHashOf,
  uniqueEmail,
  verifyLink,
  waitForMail,
  type Localbase,
} from './helpers.ts';

let lb: Localbase;
const SITE = 'http://127.0.0.1:3000';

beforeAll(async () => {
  lb = await startTestServer({ enableConfirmations: true, siteUrl: SITE });
});

afterAll(async () => {
  await lb?.stop();
});

async function signUpPending(email = uniqueEmail('confirm')) {
  const res = await anonClient(lb).auth.signUp({ email, password: PASSWORD, options: { data: { plan: 'free' } } });
  expect(res.error).toBeNull();
  return { email, user: res.data.user!, session: res.data.session };
}

describe('sign-up with confirmations on', () => {
  it('GET /settings reports mailer_autoconfirm false', async () => {
    const res = await raw(lb, '/auth/v1/settings');
    expect(res.status).toBe(200);
    expect((res.json as { mailer_autoconfirm: boolean }).mailer_autoconfirm).toBe(false);
  });

  it('returns the bare user without a session and mails a confirmation', async () => {
    const { email, user, session } = await signUpPending();
    expect(session).toBeNull();
    expect(user.email).toBe(email);
    expect(user.confirmation_sent_at).toBeTruthy();
    expect(user.email_confirmed_at).toBeFalsy();
    expect(user.user_metadata).toMatchObject({ plan: 'free' });
    const mail = await latestMail(lb, email, 'signup');
    expect(mail.token).toMatch(/^\d{6}$/);
    const link = verifyLink(mail);
    expect(link.searchParams.get('type')).toBe('signup');
  });

  it('refuses password sign-in until confirmed with email_not_confirmed (400)', async () => {
    const { email } = await signUpPending();
    const { error } = await anonClient(lb).auth.signInWithPassword({ email, password: PASSWORD });
    expect(error?.status).toBe(400);
    expect(error?.code).toBe('email_not_confirmed');
  });

  it('verifyOtp({ token_hash, type: "signup" }) confirms and returns a session with SIGNED_IN', async () => {
    const { email, user } = await signUpPending();
    const mail = await latestMail(lb, email, 'signup');
    const client = anonClient(lb);
    const events: AuthChangeEvent[] = [];
    client.auth.onAuthStateChange((e) => {
      events.push(e);
    });
    const { data, error } = await client.auth.verifyOtp({ token_hash: tokenHashOf(mail), type: 'signup' });
    expect(error).toBeNull();
    expect(data.user?.id).toBe(user.id);
    expect(data.user?.email_confirmed_at).toBeTruthy();
    expect(data.session?.access_token).toBeTruthy();
    await sleep(0);
    expect(events).toContain('SIGNED_IN');
    expect((await anonClient(lb).auth.signInWithPassword({ email, password: PASSWORD })).error).toBeNull();
  });

  it('the 6-digit code confirms with verifyOtp({ email, token, type: "email" })', async () => {
    const { email } = await signUpPending();
    const mail = await latestMail(lb, email, 'signup');
    const { data, error } = await anonClient(lb).auth.verifyOtp({ email, token: mail.token!, type: 'email' });
    expect(error).toBeNull();
    expect(data.session?.user.email).toBe(email);
  });

  it('a code with surrounding spaces is refused as GoTrue refuses it (hashed as sent); the code itself still confirms', async () => {
    // It was trimmed: an app that pasted " 123456" confirmed here and got "Token has expired or is invalid" on Supabase.
    const { email } = await signUpPending();
    const mail = await latestMail(lb, email, 'signup');
    const spaced = await anonClient(lb).auth.verifyOtp({ email, token: ` ${mail.token!} `, type: 'email' });
    expect([spaced.error?.status, spaced.error?.code, spaced.error?.message]).toEqual([403, 'otp_expired', 'Token has expired or is invalid']);
    const { error } = await anonClient(lb).auth.verifyOtp({ email, token: mail.token!, type: 'email' });
    expect(error).toBeNull();
  });

  it('the mailed link confirms through GET /verify: 303 with #access_token…&type=signup', async () => {
    const { email } = await signUpPending();
    const mail = await latestMail(lb, email, 'signup');
    const res = await fetch(verifyLink(mail), { redirect: 'manual' });
    expect(res.status).toBe(303);
    const location = res.headers.get('location')!;
    expect(location.startsWith(SITE)).toBe(true);
    const frag = new URLSearchParams(new URL(location).hash.slice(1));
    expect(frag.get('type')).toBe('signup');
    const token = frag.get('access_token')!;
    const me = await raw(lb, '/auth/v1/user', { bearer: token });
    expect(me.status).toBe(200);
    expect((me.json as { email_confirmed_at?: string }).email_confirmed_at).toBeTruthy();
  });

  it('a duplicate sign-up of a confirmed address returns an obfuscated user (no error, no session, other id)', async () => {
    const { email, user } = await signUpPending();
    const mail = await latestMail(lb, email, 'signup');
    expect((await anonClient(lb).auth.verifyOtp({ token_hash: tokenHashOf(mail), type: 'signup' })).error).toBeNull();
    const dup = await anonClient(lb).auth.signUp({ email, password: 'something-else-1' });
    expect(dup.error).toBeNull();
    expect(dup.data.session).toBeNull();
    expect(dup.data.user).not.toBeNull();
    expect(dup.data.user?.id).not.toBe(user.id);
    // The original password still works; the duplicate did not overwrite it.
    expect((await anonClient(lb).auth.signInWithPassword({ email, password: PASSWORD })).error).toBeNull();
  });

  it('resend({ type: "signup" }) mails a new confirmation that works', async () => {
    const { email } = await signUpPending();
    await waitForMail(lb, email, { type: 'signup', count: 1 });
    await sleep(1100); // per-user mail frequency (CLI default 1 s)
    const { error } = await anonClient(lb).auth.resend({ type: 'signup', email });
    expect(error).toBeNull();
    const mails = await waitForMail(lb, email, { type: 'signup', count: 2 });
    const [newest, older] = [mails[0]!, mails[1]!];
    // Newest first.
    expect(Date.parse(newest.createdAt)).toBeGreaterThanOrEqual(Date.parse(older.createdAt));
    expect(tokenHashOf(newest)).not.toBe(tokenHashOf(older));
    // The resend replaced the confirmation token: the older link no longer works.
    const stale = await anonClient(lb).auth.verifyOtp({ token_hash: tokenHashOf(older), type: 'signup' });
    expect(stale.error?.code).toBe('otp_expired');
    const { data, error: verifyError } = await anonClient(lb).auth.verifyOtp({
      token_hash: tokenHashOf(newest),
      type: 'signup',
    });
    expect(verifyError).toBeNull();
    expect(data.session).not.toBeNull();
  });

  it('resend for an unknown address answers like for a known one', async () => {
    const res = await raw(lb, '/auth/v1/resend', { body: { type: 'signup', email: uniqueEmail('nobody') } });
    expect(res.status).toBe(200);
  });

  it('a recovery request for an unconfirmed user does not leak whether it exists', async () => {
    const { email } = await signUpPending();
    const known = await raw(lb, '/auth/v1/recover', { body: { email } });
    const unknown = await raw(lb, '/auth/v1/recover', { body: { email: uniqueEmail('nobody') } });
    expect(known.status).toBe(unknown.status);
    expect(known.json).toEqual(unknown.json);
  });
});

describe('magic link with confirmations on', () => {
  it('signInWithOtp for an unconfirmed address mails a signup confirmation whose link confirms and signs in', async () => {
    const { email } = await signUpPending();
    await waitForMail(lb, email, { type: 'signup', count: 1 });
    await sleep(1100); // per-user mail frequency (CLI default 1 s)
    expect((await anonClient(lb).auth.signInWithOtp({ email })).error).toBeNull();
    const mails = await waitForMail(lb, email, { type: 'signup', count: 2 });
    const { data, error } = await anonClient(lb).auth.verifyOtp({ email, token: mails[0]!.token!, type: 'email' });
    expect(error).toBeNull();
    expect(data.user?.email_confirmed_at).toBeTruthy();
  });

  it('signInWithOtp for a confirmed address mails a magic link', async () => {
    const email = uniqueEmail('confirmed');
    expect((await serviceClient(lb).auth.admin.createUser({ email, email_confirm: true })).error).toBeNull();
    expect((await anonClient(lb).auth.signInWithOtp({ email })).error).toBeNull();
    const mail = await latestMail(lb, email, 'magiclink');
    const { data, error } = await anonClient(lb).auth.verifyOtp({ token_hash: tokenHashOf(mail), type: 'magiclink' });
    expect(error).toBeNull();
    expect(data.session?.user.email).toBe(email);
  });

  it('password recovery works for a confirmed user', async () => {
    const email = uniqueEmail('recover');
    expect((await serviceClient(lb).auth.admin.createUser({ email, password: PASSWORD, email_confirm: true })).error).toBeNull();
    expect((await anonClient(lb).auth.resetPasswordForEmail(email)).error).toBeNull();
    const mail = await latestMail(lb, email, 'recovery');
    const client = anonClient(lb);
    expect((await client.auth.verifyOtp({ email, token: mail.token!, type: 'recovery' })).error).toBeNull();
    expect((await client.auth.updateUser({ password: 'after-recovery-pw-1' })).error).toBeNull();
    expect((await anonClient(lb).auth.signInWithPassword({ email, password: 'after-recovery-pw-1' })).error).toBeNull();
  });
});

describe('e-mail change with confirmations on', () => {
  it('keeps the old address until the mailed confirmation(s) are verified, then switches', async () => {
    const email = uniqueEmail('old');
    const admin = serviceClient(lb);
    expect((await admin.auth.admin.createUser({ email, password: PASSWORD, email_confirm: true })).error).toBeNull();
    const client = anonClient(lb);
    expect((await client.auth.signInWithPassword({ email, password: PASSWORD })).error).toBeNull();

    const newEmail = uniqueEmail('new');
    const redirectTo = `${SITE}/settings`;
    const { data, error } = await client.auth.updateUser({ email: newEmail }, { emailRedirectTo: redirectTo });
    expect(error).toBeNull();
    expect(data.user?.email).toBe(email);
    expect(data.user?.new_email).toBe(newEmail);
    expect(data.user?.email_change_sent_at).toBeTruthy();

    const toNew = await waitForMail(lb, newEmail, { type: 'email_change' });
    const toOld = (await listMail(lb, email)).filter((m) => m.type === 'email_change');
    // Still the old address, and it still signs in.
    expect((await client.auth.getUser()).data.user?.email).toBe(email);
    expect((await anonClient(lb).auth.signInWithPassword({ email, password: PASSWORD })).error).toBeNull();

    const mails = [...toOld, ...toNew];
    expect(mails.length).toBeGreaterThanOrEqual(1);
    let lastUserEmail: string | undefined;
    for (const mail of mails) {
      expect(verifyLink(mail).searchParams.get('type')).toBe('email_change');
      const v = await anonClient(lb).auth.verifyOtp({ token_hash: tokenHashOf(mail), type: 'email_change' });
      expect(v.error).toBeNull();
      if (v.data.user) lastUserEmail = v.data.user.email;
    }
    expect(lastUserEmail).toBe(newEmail);
    expect((await client.auth.getUser()).data.user?.email).toBe(newEmail);
    expect((await anonClient(lb).auth.signInWithPassword({ email: newEmail, password: PASSWORD })).error).toBeNull();
    expect((await anonClient(lb).auth.signInWithPassword({ email, password: PASSWORD })).error?.code).toBe(
      'invalid_credentials',
    );
  });
});
