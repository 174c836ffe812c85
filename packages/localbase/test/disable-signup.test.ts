// --disable-signup (GOTRUE_DISABLE_SIGNUP): sign-up and OTP sign-ins that would create a user are refused as GoTrue
// refuses them; the admin API (create, invite, generate_link) still creates users.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PASSWORD, anonClient, raw, serviceClient, startTestServer, uniqueEmail, type Localbase } from './helpers.ts';

let lb: Localbase;

beforeAll(async () => {
  lb = await startTestServer({ disableSignup: true });
});

afterAll(async () => {
  await lb?.stop();
});

describe('sign-up disabled', () => {
  it('GET /settings reports disable_signup: true', async () => {
    const res = await raw(lb, '/auth/v1/settings');
    expect(res.json).toMatchObject({ disable_signup: true });
  });

  it('signUp is refused with 422 signup_disabled', async () => {
    const { data, error } = await anonClient(lb).auth.signUp({ email: uniqueEmail('closed'), password: PASSWORD });
    expect(data.user).toBeNull();
    expect(error?.status).toBe(422);
    expect(error?.code).toBe('signup_disabled');
    expect(error?.message).toBe('Signups not allowed for this instance');
  });

  it('an OTP sign-in for an unknown address is refused; for a known one it still mails', async () => {
    const client = anonClient(lb);
    const unknown = await client.auth.signInWithOtp({ email: uniqueEmail('otp') });
    expect(unknown.error?.status).toBe(422);
    expect(unknown.error?.code).toBe('signup_disabled');
    expect(unknown.error?.message).toBe('Signups not allowed for this instance');

    const email = uniqueEmail('known');
    const created = await serviceClient(lb).auth.admin.createUser({ email, password: PASSWORD, email_confirm: true });
    expect(created.error).toBeNull();
    const known = await client.auth.signInWithOtp({ email });
    expect(known.error).toBeNull();
    const signIn = await client.auth.signInWithPassword({ email, password: PASSWORD });
    expect(signIn.error).toBeNull();
  });

  it('admin create, invite and generate_link still create users', async () => {
    const admin = serviceClient(lb).auth.admin;
    const a = await admin.createUser({ email: uniqueEmail('admin'), password: PASSWORD });
    expect(a.error).toBeNull();
    const b = await admin.inviteUserByEmail(uniqueEmail('invite'));
    expect(b.error).toBeNull();
    const c = await admin.generateLink({ type: 'signup', email: uniqueEmail('link'), password: PASSWORD });
    expect(c.error).toBeNull();
    expect(c.data.user?.id).toMatch(/^[0-9a-f-]{36}$/);
  });
});
