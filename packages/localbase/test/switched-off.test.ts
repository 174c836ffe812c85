// Features localbase does not offer answer as a GoTrue with them switched off (never 404 "No route"), so that
// clients show the errors they would show against a Supabase project with them off.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  PASSWORD,
  anonClient,
  codeOf,
  raw,
  serviceClient,
  signedInClient,
  startTestServer,
  type Localbase,
} from './helpers.ts';

let lb: Localbase;

beforeAll(async () => {
  lb = await startTestServer();
});

afterAll(async () => {
  await lb?.stop();
});

type Err = { status?: number; code?: string; message: string } | null;
const shape = (e: Err) => e && { status: e.status, code: e.code, message: e.message };
const fakeJwt = (payload: Record<string, unknown>) =>
  `${Buffer.from('{"alg":"RS256"}').toString('base64url')}.${Buffer.from(JSON.stringify(payload)).toString('base64url')}.c2ln`;

describe('/settings', () => {
  it('reports every external provider off but email, and SAML off', async () => {
    const res = await raw(lb, '/auth/v1/settings');
    const body = res.json as { external: Record<string, boolean>; saml_enabled: boolean };
    for (const [name, on] of Object.entries(body.external)) expect([name, on]).toEqual([name, name === 'email']);
    expect(body.saml_enabled).toBe(false);
  });
});

describe('SSO / SAML', () => {
  it('signInWithSSO answers 404 saml_provider_disabled', async () => {
    const { error } = await anonClient(lb).auth.signInWithSSO({ domain: 'example.org' });
    expect(shape(error)).toEqual({ status: 404, code: 'saml_provider_disabled', message: 'SAML 2.0 is disabled' });
  });

  it('the SAML metadata answers the same', async () => {
    const res = await raw(lb, '/auth/v1/sso/saml/metadata');
    expect(res.status).toBe(404);
    expect(res.json).toMatchObject({ code: 'saml_provider_disabled', message: 'SAML 2.0 is disabled' });
  });
});

describe('Web3, id_token, OAuth', () => {
  it('grant_type=web3 answers 422 web3_provider_disabled', async () => {
    const res = await raw(lb, '/auth/v1/token?grant_type=web3', {
      body: { chain: 'solana', message: 'm', signature: 's' },
    });
    expect(res.status).toBe(422);
    expect(res.json).toMatchObject({ code: 'web3_provider_disabled', message: 'Web3 provider is disabled' });
  });

  it('signInWithIdToken names the provider issuer as not enabled', async () => {
    const client = anonClient(lb);
    const google = await client.auth.signInWithIdToken({ provider: 'google', token: 'header.payload.sig' });
    expect(shape(google.error)).toEqual({
      status: 400,
      code: 'provider_disabled',
      message: 'Provider (issuer "https://accounts.google.com") is not enabled',
    });
    const apple = await client.auth.signInWithIdToken({
      provider: 'apple',
      token: fakeJwt({ iss: 'https://appleid.apple.com', sub: '1' }),
    });
    expect(apple.error?.message).toBe('Provider (issuer "https://appleid.apple.com") is not enabled');
    const other = await client.auth.signInWithIdToken({ provider: 'acme', token: 'x.y.z' });
    expect(shape(other.error)).toEqual({
      status: 400,
      code: 'validation_failed',
      message: 'Custom OIDC provider "acme" not allowed',
    });
  });

  it('GET /authorize?provider=github answers 400 "Unsupported provider: provider is not enabled"', async () => {
    const res = await raw(lb, '/auth/v1/authorize?provider=github&redirect_to=http%3A%2F%2F127.0.0.1%3A3000');
    expect(res.status).toBe(400);
    expect(res.json).toMatchObject({ code: 'validation_failed', message: 'Unsupported provider: provider is not enabled' });
    const unknown = await raw(lb, '/auth/v1/authorize?provider=nope');
    expect(unknown.json).toMatchObject({ message: 'Unsupported provider: Provider nope could not be found' });
  });
});

describe('phone, anonymous, WebAuthn', () => {
  it('phone sign-up, OTP and password sign-in answer 400 phone_provider_disabled', async () => {
    const client = anonClient(lb);
    const signUp = await client.auth.signUp({ phone: '+15555550100', password: PASSWORD });
    expect(shape(signUp.error)).toEqual({ status: 400, code: 'phone_provider_disabled', message: 'Phone signups are disabled' });
    const otp = await client.auth.signInWithOtp({ phone: '+15555550100' });
    expect(shape(otp.error)).toEqual({ status: 400, code: 'phone_provider_disabled', message: 'Unsupported phone provider' });
    const pw = await client.auth.signInWithPassword({ phone: '+15555550100', password: PASSWORD });
    expect(shape(pw.error)).toEqual({ status: 400, code: 'phone_provider_disabled', message: 'Phone logins are disabled' });
  });

  it('signInAnonymously answers 422 anonymous_provider_disabled', async () => {
    const { error } = await anonClient(lb).auth.signInAnonymously();
    expect(shape(error)).toEqual({
      status: 422,
      code: 'anonymous_provider_disabled',
      message: 'Anonymous sign-ins are disabled',
    });
  });

  it('enrolling a WebAuthn factor answers 422 mfa_webauthn_enroll_not_enabled', async () => {
    const { client } = await signedInClient(lb);
    const token = (await client.auth.getSession()).data.session!.access_token;
    const res = await raw(lb, '/auth/v1/factors', { bearer: token, body: { factor_type: 'webauthn', friendly_name: 'key' } });
    expect(res.status).toBe(422);
    expect(res.json).toMatchObject({ code: 'mfa_webauthn_enroll_not_enabled', message: 'MFA enroll is disabled for WebAuthn' });
  });
});

describe('passkeys', () => {
  const disabled = { status: 404, code: 'passkey_disabled', message: 'Passkeys are disabled' };

  it('/settings says passkeys_enabled: false', async () => {
    const res = await raw(lb, '/auth/v1/settings');
    expect((res.json as { passkeys_enabled: boolean }).passkeys_enabled).toBe(false);
  });

  it("a signed-in user's passkey calls answer 404 passkey_disabled", async () => {
    const { client } = await signedInClient(lb);
    expect(shape((await client.auth.passkey.startRegistration()).error)).toEqual(disabled);
    expect(shape((await client.auth.passkey.list()).error)).toEqual(disabled);
    const passkeyId = '6f1c1c1e-3f59-4a55-9a53-1e7c6f0f2b0a';
    expect(shape((await client.auth.passkey.update({ passkeyId, friendlyName: 'laptop' })).error)).toEqual(disabled);
    expect(shape((await client.auth.passkey.delete({ passkeyId })).error)).toEqual(disabled);
  });

  it('a passkey sign-in answers 404 passkey_disabled, before any token is asked for', async () => {
    expect(shape((await anonClient(lb).auth.passkey.startAuthentication()).error)).toEqual(disabled);
    const res = await raw(lb, '/auth/v1/passkeys/registration/options', { body: {} });
    expect([res.status, codeOf(res)]).toEqual([404, 'passkey_disabled']);
  });

  it("the admin API lists no passkeys and finds none to delete; an unknown user is user_not_found", async () => {
    const admin = serviceClient(lb).auth.admin;
    const { data: created } = await admin.createUser({ email: `pk-${Date.now()}@example.com`, password: PASSWORD });
    const userId = created.user!.id;
    const list = await admin.passkey.listPasskeys({ userId });
    expect(list).toEqual({ data: [], error: null });
    const del = await admin.passkey.deletePasskey({ userId, passkeyId: '6f1c1c1e-3f59-4a55-9a53-1e7c6f0f2b0a' });
    expect(shape(del.error)).toEqual({ status: 404, code: 'validation_failed', message: 'Passkey not found' });
    const unknown = await admin.passkey.listPasskeys({ userId: '00000000-0000-4000-8000-000000000000' });
    expect(shape(unknown.error)).toEqual({ status: 404, code: 'user_not_found', message: 'User not found' });
  });
});

describe('custom OAuth providers', () => {
  const disabled = { status: 404, code: 'feature_disabled', message: 'Custom OAuth providers are disabled' };

  it("the admin API's custom provider calls answer 404 feature_disabled", async () => {
    const providers = serviceClient(lb).auth.admin.customProviders;
    expect(shape((await providers.listProviders()).error)).toEqual(disabled);
    expect(shape((await providers.getProvider('acme')).error)).toEqual(disabled);
    expect(shape((await providers.deleteProvider('acme')).error)).toEqual(disabled);
  });

  it('after the admin check: the anon key is refused as for every admin route', async () => {
    const res = await raw(lb, '/auth/v1/admin/custom-providers', { bearer: lb.anonKey });
    expect(res.status).toBe(403);
    expect(codeOf(res)).not.toBe('feature_disabled');
  });
});
