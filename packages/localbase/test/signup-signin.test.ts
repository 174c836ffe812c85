// Sign-up and password sign-in with email confirmations OFF (the default: autoconfirm → signUp returns a session).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuthChangeEvent } from '@supabase/supabase-js';
import {
  PASSWORD,
  anonClient,
  codeOf,
  jwtPayload,
  raw,
  startTestServer,
  uniqueEmail,
  type Localbase,
} from './helpers.ts';

let lb: Localbase;

beforeAll(async () => {
  lb = await startTestServer();
});

afterAll(async () => {
  await lb?.stop();
});

describe('health and settings', () => {
  it('GET /health answers like GoTrue', async () => {
    const res = await raw(lb, '/auth/v1/health');
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ name: 'GoTrue' });
    expect(typeof (res.json as { version?: unknown }).version).toBe('string');
  });

  it('GET /settings reports email auth on and autoconfirm on', async () => {
    const res = await raw(lb, '/auth/v1/settings');
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ external: { email: true }, disable_signup: false, mailer_autoconfirm: true });
  });
});

describe('signUp with autoconfirm', () => {
  it('returns a session and a user, emits SIGNED_IN, and the access token carries the full claim set', async () => {
    const client = anonClient(lb);
    const events: AuthChangeEvent[] = [];
    client.auth.onAuthStateChange((event) => {
      events.push(event);
    });
    const email = uniqueEmail('signup');
    const before = Math.floor(Date.now() / 1000);
    const { data, error } = await client.auth.signUp({ email, password: PASSWORD, options: { data: { name: 'Ada' } } });
    expect(error).toBeNull();
    expect(data.session).not.toBeNull();
    const session = data.session!;
    const user = data.user!;
    expect(session.token_type).toBe('bearer');
    expect(session.expires_in).toBe(3600);
    expect(session.expires_at).toBeGreaterThanOrEqual(before + 3600 - 5);
    expect(session.refresh_token).toMatch(/^[a-z0-9]{12}$/);
    expect(user.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(user.email).toBe(email);
    expect(user.phone).toBe('');
    expect(user.aud).toBe('authenticated');
    expect(user.role).toBe('authenticated');
    expect(user.email_confirmed_at).toBeTruthy();
    expect(user.app_metadata).toMatchObject({ provider: 'email', providers: ['email'] });
    expect(user.user_metadata).toMatchObject({ name: 'Ada' });
    expect(user.identities?.[0]).toMatchObject({ provider: 'email', user_id: user.id });
    expect(user.is_anonymous).toBe(false);
    expect(user).not.toHaveProperty('factors'); // omitted when the user has none

    const claims = jwtPayload(session.access_token);
    expect(claims).toMatchObject({
      sub: user.id,
      aud: 'authenticated',
      role: 'authenticated',
      email,
      phone: '',
      aal: 'aal1',
      is_anonymous: false,
      app_metadata: { provider: 'email' },
      user_metadata: { name: 'Ada' },
    });
    expect(typeof claims.session_id).toBe('string');
    expect(typeof claims.iss).toBe('string');
    expect(claims.exp).toBe((claims.iat as number) + 3600);
    expect(Array.isArray(claims.amr)).toBe(true);
    expect((claims.amr as { method: string }[])[0]?.method).toBe('password');

    await new Promise((r) => setTimeout(r, 0));
    expect(events).toContain('SIGNED_IN');

    const me = await client.auth.getUser();
    expect(me.error).toBeNull();
    expect(me.data.user?.id).toBe(user.id);
  });

  it('refuses a duplicate sign-up with user_already_exists (422)', async () => {
    const email = uniqueEmail('dup');
    const first = await anonClient(lb).auth.signUp({ email, password: PASSWORD });
    expect(first.error).toBeNull();
    const second = await anonClient(lb).auth.signUp({ email, password: 'another-password-1' });
    expect(second.error).not.toBeNull();
    expect(second.error!.status).toBe(422);
    expect(second.error!.code).toBe('user_already_exists');
    expect(second.error!.message).toMatch(/^User already registered/);
    expect(second.data.session).toBeNull();
  });

  it('treats e-mail addresses case-insensitively for duplicates and sign-in', async () => {
    const email = uniqueEmail('case');
    const first = await anonClient(lb).auth.signUp({ email, password: PASSWORD });
    expect(first.error).toBeNull();
    const dup = await anonClient(lb).auth.signUp({ email: email.toUpperCase(), password: PASSWORD });
    expect(dup.error?.code).toBe('user_already_exists');
    const signIn = await anonClient(lb).auth.signInWithPassword({ email: email.toUpperCase(), password: PASSWORD });
    expect(signIn.error).toBeNull();
    expect(signIn.data.user?.email).toBe(email);
  });

  it('refuses a weak password with weak_password (422) and the reasons', async () => {
    const { data, error } = await anonClient(lb).auth.signUp({ email: uniqueEmail('weak'), password: '12345' });
    expect(error).not.toBeNull();
    expect(error!.status).toBe(422);
    expect(error!.code).toBe('weak_password');
    expect(error!.name).toBe('AuthWeakPasswordError');
    expect((error as unknown as { reasons: string[] }).reasons).toContain('length');
    expect(error!.message).toMatch(/at least 6 characters/);
    expect(data.user).toBeNull();
  });

  it('refuses a password longer than 72 characters with validation_failed (400)', async () => {
    const { error } = await anonClient(lb).auth.signUp({ email: uniqueEmail('long'), password: 'x'.repeat(73) });
    expect(error?.status).toBe(400);
    expect(error?.code).toBe('validation_failed');
  });

  it('counts a password in UTF-8 bytes, as GoTrue: 37 × "é" (74 bytes) is too long, "ééé" (6 bytes) long enough', async () => {
    // bcrypt reads 72 bytes: a longer password accepted would sign in with any text after its 72nd byte
    const long = await anonClient(lb).auth.signUp({ email: uniqueEmail('utf8-long'), password: 'é'.repeat(37) });
    expect([long.error?.status, long.error?.code, long.error?.message]).toEqual([400, 'validation_failed', 'Password cannot be longer than 72 characters']);
    expect(long.data.user).toBeNull();
    const short = await anonClient(lb).auth.signUp({ email: uniqueEmail('utf8-short'), password: 'ééé' });
    expect(short.error).toBeNull();
    expect(short.data.session).not.toBeNull();
  });

  it('refuses an invalid e-mail address with validation_failed (400)', async () => {
    const { error } = await anonClient(lb).auth.signUp({ email: 'not-an-email', password: PASSWORD });
    expect(error?.status).toBe(400);
    expect(error?.code).toBe('validation_failed');
  });
});

describe('anonymous sign-ins (off by default, as in the Supabase CLI)', () => {
  it('signInAnonymously → 422 anonymous_provider_disabled', async () => {
    const { data, error } = await anonClient(lb).auth.signInAnonymously();
    expect(error?.status).toBe(422);
    expect(error?.code).toBe('anonymous_provider_disabled');
    expect(data.session).toBeNull();
  });
});

describe('signInWithPassword', () => {
  it('signs in a registered user with a new session and emits SIGNED_IN', async () => {
    const email = uniqueEmail('signin');
    const signUp = await anonClient(lb).auth.signUp({ email, password: PASSWORD });
    expect(signUp.error).toBeNull();
    const client = anonClient(lb);
    const events: AuthChangeEvent[] = [];
    client.auth.onAuthStateChange((event) => {
      events.push(event);
    });
    const { data, error } = await client.auth.signInWithPassword({ email, password: PASSWORD });
    expect(error).toBeNull();
    expect(data.user?.email).toBe(email);
    expect(data.session?.access_token).toBeTruthy();
    expect(jwtPayload(data.session!.access_token).session_id).not.toBe(
      jwtPayload(signUp.data.session!.access_token).session_id,
    );
    expect(data.user?.last_sign_in_at).toBeTruthy();
    await new Promise((r) => setTimeout(r, 0));
    expect(events).toContain('SIGNED_IN');
  });

  it('gives a wrong password and an unknown e-mail the same invalid_credentials (400) answer', async () => {
    const email = uniqueEmail('wrongpw');
    expect((await anonClient(lb).auth.signUp({ email, password: PASSWORD })).error).toBeNull();

    const wrong = await anonClient(lb).auth.signInWithPassword({ email, password: 'not-the-password' });
    const unknown = await anonClient(lb).auth.signInWithPassword({ email: uniqueEmail('nobody'), password: PASSWORD });
    for (const result of [wrong, unknown]) {
      expect(result.error?.status).toBe(400);
      expect(result.error?.code).toBe('invalid_credentials');
      expect(result.error?.message).toBe('Invalid login credentials');
      expect(result.data.session).toBeNull();
    }

    // Raw bodies are identical too (no e-mail enumeration).
    const rawWrong = await raw(lb, '/auth/v1/token?grant_type=password', { body: { email, password: 'nope-nope' } });
    const rawUnknown = await raw(lb, '/auth/v1/token?grant_type=password', {
      body: { email: uniqueEmail('nobody'), password: 'nope-nope' },
    });
    expect(rawWrong.status).toBe(400);
    expect(rawUnknown.status).toBe(400);
    expect(rawWrong.json).toEqual(rawUnknown.json);
  });

  it('answers an unsupported grant_type with a 400 and a code', async () => {
    const res = await raw(lb, '/auth/v1/token?grant_type=telepathy', { body: { email: 'a@b.c' } });
    expect(res.status).toBe(400);
    expect(typeof codeOf(res)).toBe('string');
  });
});
