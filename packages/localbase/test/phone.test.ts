// Phone sign-ups and sign-ins with SMS codes (docs/decisions/034-phone-auth-and-sms-in-the-mailbox.md), driven
// with supabase-js as an app would: phone + password, signInWithOtp({ phone }), verifyOtp sms / phone_change,
// resend, updateUser({ phone }), the admin API, GoTrue's errors, and the SMS in the mailbox.
import { randomInt } from 'node:crypto';
import { createClient } from '@supabase/supabase-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  PASSWORD,
  anonClient,
  fetchFrom,
  jwtPayload,
  listMail,
  raw,
  serviceClient,
  sleep,
  startTestServer,
  uniqueEmail,
  type Localbase,
} from './helpers.ts';

interface Sms {
  id: string;
  to: string;
  type: 'sms' | 'phone_change';
  body: string;
  token?: string;
  createdAt: string;
}

type Err = { status?: number; code?: string; message: string } | null;
const shape = (e: Err) => e && { status: e.status, code: e.code, message: e.message };
const INVALID_PHONE = { status: 400, code: 'validation_failed', message: 'Invalid phone number format (E.164 required)' };
const INVALID_CODE = { status: 403, code: 'otp_expired', message: 'Token has expired or is invalid' };

/** A fresh number each call (also across runs on a shared PostgreSQL): "+1 555" and 8 random digits. */
function uniquePhone(): { spelled: string; digits: string } {
  const rest = String(randomInt(0, 100_000_000)).padStart(8, '0');
  return { spelled: `+1 555 ${rest}`, digits: `1555${rest}` };
}

async function listSms(lb: Localbase, to: string): Promise<Sms[]> {
  const res = await fetch(`${lb.url}/mailbox/api/sms?to=${encodeURIComponent(to)}`);
  expect(res.status).toBe(200);
  return (await res.json()) as Sms[];
}

async function latestSms(lb: Localbase, to: string): Promise<Sms> {
  const [sms] = await listSms(lb, to);
  if (!sms) throw new Error(`no SMS to ${to}`);
  return sms;
}

/** A code that is not `code` (same length). */
function otherCode(code: string): string {
  return code.replace(/^./, (d) => String((Number(d) + 1) % 10));
}

const GENEROUS_SMS = { smsSent: 100_000 };
let auto: Localbase; // phone on, SMS autoconfirm (the CLI's default once phone sign-up is on)
let confirm: Localbase; // phone (and email) confirmations on, an 8-digit code and an SMS template of its own
let limited: Localbase; // phone on, max_frequency 60 s and 3 SMS per hour
let off: Localbase; // phone off (the default)
const TEST_NUMBER = '15550001234';

beforeAll(async () => {
  [auto, confirm, limited, off] = await Promise.all([
    startTestServer({
      sms: { enabled: true, maxFrequencySeconds: 0, testOtp: { [`+${TEST_NUMBER}`]: '424242' } },
      rateLimits: GENEROUS_SMS,
    }),
    startTestServer({
      sms: { enabled: true, autoconfirm: false, maxFrequencySeconds: 0, otpLength: 8, template: 'Foyer code: {{ .Code }}. Do not share it.' },
      enableConfirmations: true,
      rateLimits: GENEROUS_SMS,
    }),
    startTestServer({ sms: { enabled: true, maxFrequencySeconds: 60 }, rateLimits: { smsSent: 3 } }),
    startTestServer(),
  ]);
}, 60_000);

afterAll(async () => {
  await Promise.all([auto?.stop(), confirm?.stop(), limited?.stop(), off?.stop()]);
});

describe('/settings', () => {
  it('reports the phone provider and phone_autoconfirm as configured', async () => {
    const read = async (lb: Localbase) => {
      const body = (await raw(lb, '/auth/v1/settings')).json as { external: { phone: boolean }; phone_autoconfirm: boolean };
      return [body.external.phone, body.phone_autoconfirm];
    };
    expect(await read(auto)).toEqual([true, true]);
    expect(await read(confirm)).toEqual([true, false]);
    expect(await read(off)).toEqual([false, true]);
  });
});

describe('phone + password (SMS autoconfirm)', () => {
  it('signs up with a session at once, then signs in with the password', async () => {
    const phone = uniquePhone();
    const client = anonClient(auto);
    const { data, error } = await client.auth.signUp({ phone: phone.spelled, password: PASSWORD, options: { data: { name: 'Ada' } } });
    expect(error).toBeNull();
    const user = data.user!;
    expect(user.phone).toBe(phone.digits);
    expect(user.email).toBe('');
    expect(user.phone_confirmed_at).toBeTruthy();
    expect(user.app_metadata).toMatchObject({ provider: 'phone', providers: ['phone'] });
    expect(user.user_metadata).toMatchObject({ name: 'Ada', phone_verified: false });
    expect(user.identities?.map((i) => i.provider)).toEqual(['phone']);
    const claims = jwtPayload(data.session!.access_token);
    expect(claims.phone).toBe(phone.digits);
    expect((claims.amr as Array<{ method: string }>).map((a) => a.method)).toEqual(['password']);
    expect(await listSms(auto, phone.digits)).toEqual([]); // nothing to confirm: no SMS

    const signIn = await client.auth.signInWithPassword({ phone: phone.spelled, password: PASSWORD });
    expect(signIn.error).toBeNull();
    expect(signIn.data.user?.id).toBe(user.id);
    // GoTrue looks the number up without validating it: "+" and spaces dropped.
    const bare = await client.auth.signInWithPassword({ phone: phone.digits, password: PASSWORD });
    expect(bare.error).toBeNull();

    const wrong = await client.auth.signInWithPassword({ phone: phone.spelled, password: 'not-the-password' });
    expect(shape(wrong.error)).toEqual({ status: 400, code: 'invalid_credentials', message: 'Invalid login credentials' });
    const again = await client.auth.signUp({ phone: phone.spelled, password: PASSWORD });
    expect(shape(again.error)).toEqual({ status: 422, code: 'user_already_exists', message: 'User already registered' });
  });

  it('refuses invalid numbers with 400 validation_failed, as GoTrue', async () => {
    const client = anonClient(auto);
    for (const bad of ['1', '+0123456789', '555-0100', 'phone', '+1234567890123456', '++15550100']) {
      const { error } = await client.auth.signUp({ phone: bad, password: PASSWORD });
      expect(shape(error), bad).toEqual(INVALID_PHONE);
      const otp = await client.auth.signInWithOtp({ phone: bad });
      expect(shape(otp.error), bad).toEqual(INVALID_PHONE);
      const verify = await client.auth.verifyOtp({ phone: bad, token: '123456', type: 'sms' });
      expect(shape(verify.error), bad).toEqual(INVALID_PHONE);
    }
  });

  it('refuses an email and a phone together, and a weak password first', async () => {
    const res = await raw(auto, '/auth/v1/signup', { body: { email: uniqueEmail('both'), phone: uniquePhone().spelled, password: PASSWORD } });
    expect(res.status).toBe(400);
    expect(res.json).toMatchObject({ code: 'validation_failed', message: 'Only an email address or phone number should be provided on signup.' });
    const weak = await anonClient(auto).auth.signUp({ phone: uniquePhone().spelled, password: '123' });
    expect(weak.error).toMatchObject({ status: 422, code: 'weak_password' });
    const whatsapp = await anonClient(auto).auth.signUp({ phone: uniquePhone().spelled, password: PASSWORD, options: { channel: 'whatsapp' } });
    expect(whatsapp.error).toMatchObject({ status: 400, code: 'validation_failed' });
    expect(whatsapp.error?.message).toMatch(/^Invalid channel, supported values are 'sms' or 'whatsapp'/);
  });
});

describe('signInWithOtp({ phone }) and verifyOtp type sms', () => {
  it('creates the user, texts a code to the mailbox, and the code signs in once (amr otp)', async () => {
    const phone = uniquePhone();
    const client = anonClient(auto);
    const sent = await client.auth.signInWithOtp({ phone: phone.spelled, options: { data: { plan: 'free' } } });
    expect(sent.error).toBeNull();
    const sms = await latestSms(auto, phone.spelled);
    expect(sent.data.messageId).toBe(sms.id);
    expect(sms).toMatchObject({ to: phone.digits, type: 'sms' });
    expect(sms.token).toMatch(/^\d{6}$/);
    expect(sms.body).toBe(`Your code is ${sms.token}`);

    const wrong = await client.auth.verifyOtp({ phone: phone.spelled, token: otherCode(sms.token!), type: 'sms' });
    expect(shape(wrong.error)).toEqual(INVALID_CODE);
    const { data, error } = await client.auth.verifyOtp({ phone: phone.spelled, token: sms.token!, type: 'sms' });
    expect(error).toBeNull();
    expect(data.user?.phone).toBe(phone.digits);
    expect(data.user?.user_metadata).toMatchObject({ plan: 'free' });
    const claims = jwtPayload(data.session!.access_token);
    expect((claims.amr as Array<{ method: string }>).map((a) => a.method)).toEqual(['otp']);
    expect(claims.phone).toBe(phone.digits);
    const reused = await client.auth.verifyOtp({ phone: phone.spelled, token: sms.token!, type: 'sms' });
    expect(shape(reused.error)).toEqual(INVALID_CODE);

    // A returning user gets a new code the same way.
    await client.auth.signInWithOtp({ phone: phone.digits });
    const second = await latestSms(auto, phone.digits);
    expect(second.id).not.toBe(sms.id);
    const back = await client.auth.verifyOtp({ phone: phone.digits, token: second.token!, type: 'sms' });
    expect(back.error).toBeNull();
    expect(back.data.user?.id).toBe(data.user?.id);
  });

  it('an expired code answers 403 otp_expired', async () => {
    const phone = uniquePhone();
    const client = anonClient(auto);
    await client.auth.signInWithOtp({ phone: phone.spelled });
    const sms = await latestSms(auto, phone.digits);
    // The code was issued more than GOTRUE_SMS_OTP_EXP (60 s) ago.
    await auto.db.query(`update auth.one_time_tokens set created_at = now() - interval '61 seconds' where relates_to = $1`, [phone.digits]);
    const late = await client.auth.verifyOtp({ phone: phone.spelled, token: sms.token!, type: 'sms' });
    expect(shape(late.error)).toEqual(INVALID_CODE);
  });

  it('after 5 wrong codes for a number: the next try waits, then even the right code is dead', async () => {
    const phone = uniquePhone();
    const client = anonClient(auto);
    await client.auth.signInWithOtp({ phone: phone.spelled });
    const sms = await latestSms(auto, phone.digits);
    for (let i = 0; i < 5; i++) {
      const wrong = await client.auth.verifyOtp({ phone: phone.spelled, token: otherCode(sms.token!), type: 'sms' });
      expect(shape(wrong.error)).toEqual(INVALID_CODE);
    }
    const held = await client.auth.verifyOtp({ phone: phone.spelled, token: sms.token!, type: 'sms' });
    expect(shape(held.error)).toEqual({
      status: 429,
      code: 'too_many_failed_attempts',
      message: 'For security purposes, too many wrong codes for this phone number: try again in 1 second.',
    });
    await sleep(1100);
    const right = await client.auth.verifyOtp({ phone: phone.spelled, token: sms.token!, type: 'sms' });
    expect(shape(right.error)).toEqual(INVALID_CODE);
  });

  it('stores the code hashed, never in clear', async () => {
    const phone = uniquePhone();
    await anonClient(auto).auth.signInWithOtp({ phone: phone.spelled });
    const sms = await latestSms(auto, phone.digits);
    const r = await auto.db.query<{ token_hash: string }>(
      "select token_hash from auth.one_time_tokens where relates_to = $1 and token_type = 'confirmation_token'",
      [phone.digits],
    );
    expect(r.rows).toHaveLength(1);
    expect(r.rows[0]!.token_hash).toMatch(/^[0-9a-f]{56}$/);
    expect(r.rows[0]!.token_hash).not.toContain(sms.token!);
  });

  it('shouldCreateUser: false refuses an unknown number with 422 otp_disabled', async () => {
    const { error } = await anonClient(auto).auth.signInWithOtp({ phone: uniquePhone().spelled, options: { shouldCreateUser: false } });
    expect(shape(error)).toEqual({ status: 422, code: 'otp_disabled', message: 'Signups not allowed for otp' });
  });

  it('a test number (GOTRUE_SMS_TEST_OTP) gets its fixed code and no SMS', async () => {
    const client = anonClient(auto);
    const sent = await client.auth.signInWithOtp({ phone: `+${TEST_NUMBER}` });
    expect(sent.error).toBeNull();
    expect(sent.data.messageId).toBe('test-otp');
    expect(await listSms(auto, TEST_NUMBER)).toEqual([]);
    const { data, error } = await client.auth.verifyOtp({ phone: `+${TEST_NUMBER}`, token: '424242', type: 'sms' });
    expect(error).toBeNull();
    expect(data.user?.phone).toBe(TEST_NUMBER);
  });
});

describe('with SMS confirmations', () => {
  it('sign-up texts a code and gives no session; password sign-in waits for the code; resend replaces it', async () => {
    const phone = uniquePhone();
    const client = anonClient(confirm);
    const { data, error } = await client.auth.signUp({ phone: phone.spelled, password: PASSWORD });
    expect(error).toBeNull();
    expect(data.session).toBeNull();
    expect(data.user?.phone).toBe(phone.digits);
    expect(data.user?.phone_confirmed_at).toBeUndefined();
    const first = await latestSms(confirm, phone.digits);
    expect(first.token).toMatch(/^\d{8}$/);
    expect(first.body).toBe(`Foyer code: ${first.token}. Do not share it.`);

    const early = await client.auth.signInWithPassword({ phone: phone.spelled, password: PASSWORD });
    expect(shape(early.error)).toEqual({ status: 400, code: 'phone_not_confirmed', message: 'Phone not confirmed' });

    const resent = await client.auth.resend({ type: 'sms', phone: phone.spelled });
    expect(resent.error).toBeNull();
    const second = await latestSms(confirm, phone.digits);
    expect(resent.data.messageId).toBe(second.id);
    expect(second.id).not.toBe(first.id);
    if (second.token !== first.token) {
      const old = await client.auth.verifyOtp({ phone: phone.spelled, token: first.token!, type: 'sms' });
      expect(shape(old.error)).toEqual(INVALID_CODE);
    }
    const verified = await client.auth.verifyOtp({ phone: phone.spelled, token: second.token!, type: 'sms' });
    expect(verified.error).toBeNull();
    expect(verified.data.user?.phone_confirmed_at).toBeTruthy();
    const signIn = await client.auth.signInWithPassword({ phone: phone.spelled, password: PASSWORD });
    expect(signIn.error).toBeNull();

    // Confirmed now: a resend sends nothing, and signing up again gives an obfuscated user, no session, no SMS.
    await client.auth.resend({ type: 'sms', phone: phone.spelled });
    const repeat = await client.auth.signUp({ phone: phone.spelled, password: PASSWORD });
    expect(repeat.error).toBeNull();
    expect(repeat.data.session).toBeNull();
    expect(repeat.data.user?.id).not.toBe(verified.data.user?.id);
    expect(await listSms(confirm, phone.digits)).toHaveLength(2);
  });

  it('resend: unknown numbers answer the same as known ones; a missing number is refused', async () => {
    const client = anonClient(confirm);
    const unknown = await client.auth.resend({ type: 'sms', phone: uniquePhone().spelled });
    expect(unknown.error).toBeNull();
    const res = await raw(confirm, '/auth/v1/resend', { body: { type: 'sms' } });
    expect(res.status).toBe(400);
    expect(res.json).toMatchObject({ code: 'validation_failed', message: 'Type provided requires a phone number' });
  });

  it('updateUser({ phone }) texts the new number; verifyOtp phone_change makes it the user\'s number', async () => {
    const client = anonClient(confirm);
    const email = uniqueEmail('phone-change');
    const created = await serviceClient(confirm).auth.admin.createUser({ email, password: PASSWORD, email_confirm: true });
    expect(created.error).toBeNull();
    const signIn0 = await client.auth.signInWithPassword({ email, password: PASSWORD });
    expect(signIn0.error).toBeNull();
    const session = signIn0.data.session!;
    const user = createClient(confirm.url, confirm.anonKey, { auth: { persistSession: false, autoRefreshToken: false } });
    await user.auth.setSession({ access_token: session.access_token, refresh_token: session.refresh_token });

    const phone = uniquePhone();
    const updated = await user.auth.updateUser({ phone: phone.spelled });
    expect(updated.error).toBeNull();
    expect(updated.data.user?.phone).toBe('');
    expect(updated.data.user?.new_phone).toBe(phone.digits);
    const first = await latestSms(confirm, phone.digits);
    expect(first.type).toBe('phone_change');

    // resend phone_change texts a new code. GoTrue finds the user by its current number, or by email as here (the
    // user has no number yet; auth-js's types only offer the phone, so the request is sent as is).
    const resent = await raw(confirm, '/auth/v1/resend', { body: { type: 'phone_change', email } });
    expect(resent.status).toBe(200);
    const code = await latestSms(confirm, phone.digits);
    expect(code.id).not.toBe(first.id);

    const wrongType = await client.auth.verifyOtp({ phone: phone.spelled, token: code.token!, type: 'sms' });
    expect(shape(wrongType.error)).toEqual(INVALID_CODE);
    const { data, error } = await client.auth.verifyOtp({ phone: phone.spelled, token: code.token!, type: 'phone_change' });
    expect(error).toBeNull();
    expect(data.user?.phone).toBe(phone.digits);
    expect(data.user?.email).toBe(email);
    expect(data.user?.phone_confirmed_at).toBeTruthy();
    expect(data.user?.app_metadata.providers).toEqual(['email', 'phone']);
    const identity = data.user?.identities?.find((i) => i.provider === 'phone');
    expect(identity?.identity_data).toMatchObject({ phone: phone.digits, phone_verified: true });
    // The number now signs in with the account's password.
    const signIn = await client.auth.signInWithPassword({ phone: phone.spelled, password: PASSWORD });
    expect(signIn.error).toBeNull();
    expect(signIn.data.user?.id).toBe(data.user?.id);

    // A second change: supabase-js's resend({ type: 'phone_change', phone }) names the current number.
    const next = uniquePhone();
    expect((await user.auth.updateUser({ phone: next.spelled })).error).toBeNull();
    const again = await client.auth.resend({ type: 'phone_change', phone: phone.spelled });
    expect(again.error).toBeNull();
    const texts = await listSms(confirm, next.digits);
    expect(texts).toHaveLength(2);
    expect(again.data.messageId).toBe(texts[0]!.id);
    const moved = await client.auth.verifyOtp({ phone: next.spelled, token: texts[0]!.token!, type: 'phone_change' });
    expect(moved.error).toBeNull();
    expect(moved.data.user?.phone).toBe(next.digits);
    expect(moved.data.user?.identities?.filter((i) => i.provider === 'phone').map((i) => i.identity_data?.phone)).toEqual([next.digits]);
  });
});

describe('updateUser({ phone }) with SMS autoconfirm', () => {
  it('changes the number at once; another user\'s number is 422 phone_exists', async () => {
    const client = anonClient(auto);
    const taken = uniquePhone();
    expect((await client.auth.signUp({ phone: taken.spelled, password: PASSWORD })).error).toBeNull();
    const mine = uniquePhone();
    const { data } = await client.auth.signUp({ phone: mine.spelled, password: PASSWORD });
    const user = createClient(auto.url, auto.anonKey, { auth: { persistSession: false, autoRefreshToken: false } });
    await user.auth.setSession({ access_token: data.session!.access_token, refresh_token: data.session!.refresh_token });

    const clash = await user.auth.updateUser({ phone: taken.spelled });
    expect(shape(clash.error)).toEqual({ status: 422, code: 'phone_exists', message: 'A user with this phone number has already been registered' });
    const bad = await user.auth.updateUser({ phone: '+0' });
    expect(shape(bad.error)).toEqual(INVALID_PHONE);

    const next = uniquePhone();
    const moved = await user.auth.updateUser({ phone: next.spelled });
    expect(moved.error).toBeNull();
    expect(moved.data.user?.phone).toBe(next.digits);
    expect(moved.data.user?.identities?.find((i) => i.provider === 'phone')?.identity_data).toMatchObject({ phone: next.digits });
    expect((await client.auth.signInWithPassword({ phone: next.spelled, password: PASSWORD })).error).toBeNull();
    const old = await client.auth.signInWithPassword({ phone: mine.spelled, password: PASSWORD });
    expect(shape(old.error)).toEqual({ status: 400, code: 'invalid_credentials', message: 'Invalid login credentials' });
  });
});

describe('reauthenticate() of a phone user', () => {
  it('texts the nonce; updateUser({ password, nonce }) takes it once', async () => {
    const phone = uniquePhone();
    const client = anonClient(auto);
    const { data } = await client.auth.signUp({ phone: phone.spelled, password: PASSWORD });
    const user = createClient(auto.url, auto.anonKey, { auth: { persistSession: false, autoRefreshToken: false } });
    await user.auth.setSession({ access_token: data.session!.access_token, refresh_token: data.session!.refresh_token });
    const sent = await user.auth.reauthenticate();
    expect(sent.error).toBeNull();
    const sms = await latestSms(auto, phone.digits);
    expect(sms.type).toBe('reauthentication');
    const wrong = await user.auth.updateUser({ password: 'another-password-1', nonce: otherCode(sms.token!) });
    expect(wrong.error).toMatchObject({ status: 400, code: 'reauthentication_not_valid' });
    const changed = await user.auth.updateUser({ password: 'another-password-1', nonce: sms.token! });
    expect(changed.error).toBeNull();
    expect((await client.auth.signInWithPassword({ phone: phone.spelled, password: 'another-password-1' })).error).toBeNull();
    const again = await user.auth.updateUser({ password: 'third-password-1', nonce: sms.token! });
    expect(again.error).toMatchObject({ status: 400, code: 'reauthentication_not_valid' });
  });
});

describe('admin API with phone', () => {
  it('createUser({ phone, phone_confirm }), duplicates, updateUserById({ phone }), listUsers', async () => {
    const admin = serviceClient(auto).auth.admin;
    const phone = uniquePhone();
    const created = await admin.createUser({ phone: phone.spelled, phone_confirm: true, password: PASSWORD, user_metadata: { role: 'tester' } });
    expect(created.error).toBeNull();
    const user = created.data.user!;
    expect(user.phone).toBe(phone.digits);
    expect(user.phone_confirmed_at).toBeTruthy();
    expect(user.app_metadata).toMatchObject({ provider: 'phone', providers: ['phone'] });
    expect(user.user_metadata).toEqual({ role: 'tester' });
    expect(user.identities?.[0]?.identity_data).toMatchObject({ phone: phone.digits });
    expect((await anonClient(auto).auth.signInWithPassword({ phone: phone.spelled, password: PASSWORD })).error).toBeNull();

    const dup = await admin.createUser({ phone: phone.digits });
    expect(shape(dup.error)).toEqual({ status: 422, code: 'phone_exists', message: 'Phone number already registered by another user' });
    const none = await admin.createUser({ user_metadata: {} });
    expect(shape(none.error)).toEqual({ status: 400, code: 'validation_failed', message: 'Cannot create a user without either an email or phone' });
    const bad = await admin.createUser({ phone: '0123' });
    expect(shape(bad.error)).toEqual(INVALID_PHONE);

    const both = await admin.createUser({ email: uniqueEmail('both'), phone: uniquePhone().spelled, email_confirm: true });
    expect(both.error).toBeNull();
    expect(both.data.user?.app_metadata.providers).toEqual(['email', 'phone']);
    expect(both.data.user?.identities?.map((i) => i.provider).sort()).toEqual(['email', 'phone']);

    const next = uniquePhone();
    const updated = await admin.updateUserById(user.id, { phone: next.spelled });
    expect(updated.error).toBeNull();
    expect(updated.data.user?.phone).toBe(next.digits);
    const clash = await admin.updateUserById(both.data.user!.id, { phone: next.digits });
    expect(clash.error).toMatchObject({ status: 422, code: 'phone_exists' });

    const list = await admin.listUsers({ perPage: 1000 });
    expect(list.data.users.find((u) => u.id === user.id)?.phone).toBe(next.digits);
  });
});

describe('send limits', () => {
  it('max_frequency: a second code within it is 429 over_sms_send_rate_limit', async () => {
    const phone = uniquePhone();
    const client = anonClient(limited);
    expect((await client.auth.signInWithOtp({ phone: phone.spelled })).error).toBeNull();
    const again = await client.auth.signInWithOtp({ phone: phone.spelled });
    expect(again.error).toMatchObject({ status: 429, code: 'over_sms_send_rate_limit' });
    expect(again.error?.message).toMatch(/^For security purposes, you can only request this after (59|60) seconds\.$/);
    const res = await raw(limited, '/auth/v1/otp', { body: { phone: phone.spelled } });
    expect(res.status).toBe(429);
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(50);
    expect(await listSms(limited, phone.digits)).toHaveLength(1);
  });

  it('the hourly SMS limit counts per client address', async () => {
    const client = anonClient(limited);
    // One SMS went out in the test above; two more fit, the fourth is refused.
    for (let i = 0; i < 2; i++) expect((await client.auth.signInWithOtp({ phone: uniquePhone().spelled })).error).toBeNull();
    const over = uniquePhone();
    const refused = await client.auth.signInWithOtp({ phone: over.spelled });
    expect(shape(refused.error)).toEqual({ status: 429, code: 'over_sms_send_rate_limit', message: 'SMS rate limit exceeded' });
    expect(await listSms(limited, over.digits)).toEqual([]);
    // Another client still may.
    const other = createClient(limited.url, limited.anonKey, {
      auth: { persistSession: false, autoRefreshToken: false },
      global: { fetch: fetchFrom('127.0.0.2') },
    });
    expect((await other.auth.signInWithOtp({ phone: over.spelled })).error).toBeNull();
    expect(await listSms(limited, over.digits)).toHaveLength(1);
  });
});

describe('phone auth off (the default)', () => {
  it('answers as GoTrue with the phone provider disabled', async () => {
    const client = anonClient(off);
    const signUp = await client.auth.signUp({ phone: uniquePhone().spelled, password: PASSWORD });
    expect(shape(signUp.error)).toEqual({ status: 400, code: 'phone_provider_disabled', message: 'Phone signups are disabled' });
    const otp = await client.auth.signInWithOtp({ phone: uniquePhone().spelled });
    expect(shape(otp.error)).toEqual({ status: 400, code: 'phone_provider_disabled', message: 'Unsupported phone provider' });
    const resend = await client.auth.resend({ type: 'sms', phone: uniquePhone().spelled });
    expect(shape(resend.error)).toEqual({ status: 400, code: 'phone_provider_disabled', message: 'Phone logins are disabled' });
  });
});

describe('the mailbox shows the SMS per phone number', () => {
  it('JSON per number, the HTML page, the mail API unchanged, same-origin only', async () => {
    const phone = uniquePhone();
    await anonClient(auto).auth.signInWithOtp({ phone: phone.spelled });
    const [sms] = await listSms(auto, phone.spelled);
    expect(sms).toMatchObject({ to: phone.digits, type: 'sms', body: `Your code is ${sms!.token}` });
    expect((await listSms(auto, `+${phone.digits}`)).map((m) => m.id)).toEqual([sms!.id]);

    // The mail API lists mails only, in its old shape.
    expect(await listMail(auto, phone.digits)).toEqual([]);
    const mails = (await (await fetch(`${auto.url}/mailbox/api/messages`)).json()) as Array<{ subject?: string }>;
    expect(mails.every((m) => typeof m.subject === 'string')).toBe(true);

    const page = await fetch(`${auto.url}/mailbox?to=${encodeURIComponent(phone.spelled)}`);
    const html = await page.text();
    expect(page.status).toBe(200);
    expect(html).toContain('Messages (SMS)');
    expect(html).toContain(`+${phone.digits}`);
    expect(html).toContain(`Your code is ${sms!.token}`);

    const cross = await fetch(`${auto.url}/mailbox/api/sms?to=${phone.digits}`, { headers: { origin: 'http://evil.test' } });
    expect(cross.status).toBe(403);
    expect(((await cross.json()) as { code: string }).code).toBe('cross_origin_request_forbidden');
    expect(cross.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('DELETE /mailbox/api/sms?to= clears that number only, in any spelling', async () => {
    const [one, two] = [uniquePhone(), uniquePhone()];
    await anonClient(auto).auth.signInWithOtp({ phone: one.spelled });
    await anonClient(auto).auth.signInWithOtp({ phone: two.spelled });
    const [kept] = await listSms(auto, two.spelled);
    expect(await listSms(auto, one.spelled)).toHaveLength(1);
    const cleared = await fetch(`${auto.url}/mailbox/api/sms?to=${encodeURIComponent(`+${one.digits}`)}`, { method: 'DELETE' });
    expect(cleared.status).toBe(204);
    expect(await listSms(auto, one.digits)).toEqual([]);
    expect((await listSms(auto, two.digits)).map((m) => m.id)).toEqual([kept!.id]);
  });
});
