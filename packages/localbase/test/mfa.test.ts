// MFA TOTP: enroll → challenge → verify with codes computed by `otpauth`, AAL levels, single-use codes,
// aal2 requirements for a second factor and for unenrolling a verified one.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as OTPAuth from 'otpauth';
import type { AuthChangeEvent, SupabaseClient } from '@supabase/supabase-js';
import {
  PASSWORD,
  anonClient,
  codeOf,
  jwtPayload,
  raw,
  signedInClient,
  sleep,
  startTestServer,
  totpCode,
  wrongTotpCode,
  type Localbase,
} from './helpers.ts';

let lb: Localbase;

beforeAll(async () => {
  lb = await startTestServer();
});

afterAll(async () => {
  await lb?.stop();
});

async function accessToken(client: SupabaseClient): Promise<string> {
  const session = (await client.auth.getSession()).data.session;
  if (!session) throw new Error('no session');
  return session.access_token;
}

describe('TOTP factor lifecycle', () => {
  let client: SupabaseClient;
  let email: string;
  let factorId: string;
  let secret: string;
  let usedCode: string;

  beforeAll(async () => {
    ({ client, email } = await signedInClient(lb));
  });

  it('starts at aal1 with nextLevel aal1 and the password method', async () => {
    const { data, error } = await client.auth.mfa.getAuthenticatorAssuranceLevel();
    expect(error).toBeNull();
    expect(data?.currentLevel).toBe('aal1');
    expect(data?.nextLevel).toBe('aal1');
    expect(data?.currentAuthenticationMethods.map((m) => (typeof m === 'string' ? m : m.method))).toContain('password');
  });

  it('enroll returns an SVG QR code, a base32 secret and an otpauth:// URI', async () => {
    const { data, error } = await client.auth.mfa.enroll({ factorType: 'totp', friendlyName: 'Phone app' });
    expect(error).toBeNull();
    expect(data?.type).toBe('totp');
    expect(data?.friendly_name).toBe('Phone app');
    factorId = data!.id;
    expect(factorId).toMatch(/^[0-9a-f-]{36}$/);
    const totp = data!.totp;
    // supabase-js prefixes the raw SVG markup the server returns.
    expect(totp.qr_code.startsWith('data:image/svg+xml;utf-8,')).toBe(true);
    const svg = totp.qr_code.slice('data:image/svg+xml;utf-8,'.length);
    expect(svg).toMatch(/^(<\?xml[^>]*>\s*)?<svg[\s>]/);
    expect(svg.trimEnd().endsWith('</svg>')).toBe(true);
    expect(totp.secret).toMatch(/^[A-Z2-7]{32}$/);
    secret = totp.secret;

    expect(totp.uri.startsWith('otpauth://totp/')).toBe(true);
    const parsed = OTPAuth.URI.parse(totp.uri);
    expect(parsed).toBeInstanceOf(OTPAuth.TOTP);
    const parsedTotp = parsed as OTPAuth.TOTP;
    expect(parsedTotp.algorithm).toBe('SHA1');
    expect(parsedTotp.digits).toBe(6);
    expect(parsedTotp.period).toBe(30);
    expect(parsedTotp.secret.base32).toBe(secret);
    expect(parsedTotp.label).toContain(email);
  });

  it('listFactors shows the factor as unverified (in all, not in totp)', async () => {
    const { data, error } = await client.auth.mfa.listFactors();
    expect(error).toBeNull();
    expect(data?.all.map((f) => [f.id, f.status])).toEqual([[factorId, 'unverified']]);
    expect(data?.totp).toEqual([]);
  });

  it('a wrong code fails with mfa_verification_failed (422) and leaves the session at aal1', async () => {
    const challenge = await client.auth.mfa.challenge({ factorId });
    expect(challenge.error).toBeNull();
    const { error } = await client.auth.mfa.verify({
      factorId,
      challengeId: challenge.data!.id,
      code: wrongTotpCode(secret),
    });
    expect(error?.status).toBe(422);
    expect(error?.code).toBe('mfa_verification_failed');
    expect(error?.message).toMatch(/Invalid TOTP code/);
    expect(jwtPayload(await accessToken(client)).aal).toBe('aal1');
  });

  it('challenge + the current code upgrade the session to aal2 with amr totp and MFA_CHALLENGE_VERIFIED', async () => {
    const events: AuthChangeEvent[] = [];
    client.auth.onAuthStateChange((e) => {
      events.push(e);
    });
    const before = Math.floor(Date.now() / 1000);
    const challenge = await client.auth.mfa.challenge({ factorId });
    expect(challenge.error).toBeNull();
    expect(challenge.data?.type).toBe('totp');
    const expiresAt = (challenge.data as { expires_at: number }).expires_at;
    expect(expiresAt).toBeGreaterThanOrEqual(before + 290);
    expect(expiresAt).toBeLessThanOrEqual(before + 310);

    usedCode = totpCode(secret);
    const { data, error } = await client.auth.mfa.verify({ factorId, challengeId: challenge.data!.id, code: usedCode });
    expect(error).toBeNull();
    expect(data?.access_token).toBeTruthy();
    expect(data?.refresh_token).toBeTruthy();
    const claims = jwtPayload(data!.access_token);
    expect(claims.aal).toBe('aal2');
    const methods = (claims.amr as { method: string }[]).map((m) => m.method);
    expect(methods[0]).toBe('totp');
    expect(methods).toContain('password');
    await sleep(0);
    expect(events).toContain('MFA_CHALLENGE_VERIFIED');

    const aal = await client.auth.mfa.getAuthenticatorAssuranceLevel();
    expect(aal.data?.currentLevel).toBe('aal2');
    expect(aal.data?.nextLevel).toBe('aal2');
    expect(aal.data?.currentAuthenticationMethods.map((m) => (typeof m === 'string' ? m : m.method))).toContain('totp');

    const list = await client.auth.mfa.listFactors();
    expect(list.data?.totp.map((f) => [f.id, f.status])).toEqual([[factorId, 'verified']]);

    // A refresh keeps aal2.
    const refreshed = await client.auth.refreshSession();
    expect(refreshed.error).toBeNull();
    expect(jwtPayload(refreshed.data.session!.access_token).aal).toBe('aal2');
  });

  it('a code is accepted only once', async () => {
    const challenge = await client.auth.mfa.challenge({ factorId });
    expect(challenge.error).toBeNull();
    const { error } = await client.auth.mfa.verify({ factorId, challengeId: challenge.data!.id, code: usedCode });
    expect(error?.status).toBe(422);
    expect(error?.code).toBe('mfa_verification_failed');
  });

  it('a new password session is aal1 with nextLevel aal2, and may not enroll or unenroll', async () => {
    const second = anonClient(lb);
    expect((await second.auth.signInWithPassword({ email, password: PASSWORD })).error).toBeNull();
    const aal = await second.auth.mfa.getAuthenticatorAssuranceLevel();
    expect(aal.data?.currentLevel).toBe('aal1');
    expect(aal.data?.nextLevel).toBe('aal2');

    const enroll = await second.auth.mfa.enroll({ factorType: 'totp', friendlyName: 'Second' });
    expect(enroll.error?.status).toBe(403);
    expect(enroll.error?.code).toBe('insufficient_aal');

    const unenroll = await second.auth.mfa.unenroll({ factorId });
    expect(unenroll.error?.status).toBe(422);
    expect(unenroll.error?.code).toBe('insufficient_aal');

    const list = await second.auth.mfa.listFactors();
    expect(list.data?.totp).toHaveLength(1);
  });

  it('at aal2 a second factor can be enrolled and removed while unverified', async () => {
    const second = await client.auth.mfa.enroll({ factorType: 'totp', friendlyName: 'Backup phone' });
    expect(second.error).toBeNull();
    const removed = await client.auth.mfa.unenroll({ factorId: second.data!.id });
    expect(removed.error).toBeNull();
    expect(removed.data).toMatchObject({ id: second.data!.id });
  });

  it('rejects a duplicate friendly name with mfa_factor_name_conflict', async () => {
    const dup = await client.auth.mfa.enroll({ factorType: 'totp', friendlyName: 'Phone app' });
    expect(dup.error?.status).toBe(422);
    expect(dup.error?.code).toBe('mfa_factor_name_conflict');
  });

  it('an aal1 session reaches aal2 by challengeAndVerify, then unenrolls the verified factor', async () => {
    const other = anonClient(lb);
    expect((await other.auth.signInWithPassword({ email, password: PASSWORD })).error).toBeNull();
    // The code of the next 30 s step: within the ±1 step window, and not the step used before.
    const code = totpCode(secret, Date.now() + 30_000);
    const verified = await other.auth.mfa.challengeAndVerify({ factorId, code });
    expect(verified.error).toBeNull();
    expect(jwtPayload(await accessToken(other)).aal).toBe('aal2');

    const unenroll = await other.auth.mfa.unenroll({ factorId });
    expect(unenroll.error).toBeNull();
    expect(unenroll.data).toMatchObject({ id: factorId });

    const list = await other.auth.mfa.listFactors();
    expect(list.data?.all).toEqual([]);
    // The session is downgraded: the next token says aal1.
    const refreshed = await other.auth.refreshSession();
    expect(refreshed.error).toBeNull();
    expect(jwtPayload(refreshed.data.session!.access_token).aal).toBe('aal1');
    const aal = await other.auth.mfa.getAuthenticatorAssuranceLevel();
    expect(aal.data?.nextLevel).toBe('aal1');
  });
});

describe('MFA errors', () => {
  it('an unknown factor id gives mfa_factor_not_found (404)', async () => {
    const { client } = await signedInClient(lb);
    const { error } = await client.auth.mfa.challenge({ factorId: '00000000-0000-4000-8000-000000000000' });
    expect(error?.status).toBe(404);
    expect(error?.code).toBe('mfa_factor_not_found');
  });

  it("another user's factor cannot be challenged", async () => {
    const a = await signedInClient(lb);
    const b = await signedInClient(lb);
    const enrolled = await a.client.auth.mfa.enroll({ factorType: 'totp', friendlyName: 'A' });
    expect(enrolled.error).toBeNull();
    const { error } = await b.client.auth.mfa.challenge({ factorId: enrolled.data!.id });
    expect(error?.status).toBe(404);
    expect(error?.code).toBe('mfa_factor_not_found');
  });

  it('verify with a bogus challenge id fails with a 4xx code', async () => {
    const { client } = await signedInClient(lb);
    const enrolled = await client.auth.mfa.enroll({ factorType: 'totp', friendlyName: 'X' });
    expect(enrolled.error).toBeNull();
    const { error } = await client.auth.mfa.verify({
      factorId: enrolled.data!.id,
      challengeId: '00000000-0000-4000-8000-000000000000',
      code: totpCode(enrolled.data!.totp.secret),
    });
    expect(error?.status).toBe(422);
    expect(typeof error?.code).toBe('string');
  });

  it('a factor or user id that is not a UUID is 404 validation_failed "… must be an UUID", before the body is read', async () => {
    const { client } = await signedInClient(lb);
    const token = await accessToken(client);
    const userId = (await client.auth.getUser()).data.user?.id ?? '';
    const refused = (res: Awaited<ReturnType<typeof raw>>) => [res.status, codeOf(res), (res.json as { message?: string } | undefined)?.message];
    const notUuid = [404, 'validation_failed', 'factor_id must be an UUID'];
    expect(refused(await raw(lb, '/auth/v1/factors/abc/challenge', { body: {}, bearer: token }))).toEqual(notUuid);
    // verify: the factor is loaded before the body is looked at (GoTrue's loadFactor middleware)
    expect(refused(await raw(lb, '/auth/v1/factors/abc/verify', { body: {}, bearer: token }))).toEqual(notUuid);
    expect(refused(await raw(lb, '/auth/v1/factors/abc', { method: 'DELETE', bearer: token }))).toEqual(notUuid);
    // a well-formed id that is not the user's stays "Factor not found"
    const missing = '00000000-0000-4000-8000-000000000000';
    expect(refused(await raw(lb, `/auth/v1/factors/${missing}`, { method: 'DELETE', bearer: token }))).toEqual([404, 'mfa_factor_not_found', 'Factor not found']);
    // the admin API: the user is loaded first, then the factor
    const service = { apikey: lb.serviceRoleKey, bearer: lb.serviceRoleKey };
    expect(refused(await raw(lb, '/auth/v1/admin/users/abc/factors', service))).toEqual([404, 'validation_failed', 'user_id must be an UUID']);
    expect(refused(await raw(lb, `/auth/v1/admin/users/abc/factors/${missing}`, { ...service, method: 'DELETE' }))).toEqual([404, 'validation_failed', 'user_id must be an UUID']);
    expect(refused(await raw(lb, `/auth/v1/admin/users/${missing}/factors/abc`, { ...service, method: 'DELETE' }))).toEqual([404, 'user_not_found', 'User not found']);
    expect(refused(await raw(lb, `/auth/v1/admin/users/${userId}/factors/abc`, { ...service, method: 'DELETE' }))).toEqual(notUuid);
    expect(refused(await raw(lb, `/auth/v1/admin/users/${userId}/factors/${missing}`, { ...service, method: 'DELETE' }))).toEqual([404, 'mfa_factor_not_found', 'Factor not found']);
  });

  it('factor endpoints without a user token are refused', async () => {
    const res = await raw(lb, '/auth/v1/factors', { body: { factor_type: 'totp' }, bearer: lb.anonKey });
    expect(res.status).toBe(403);
    expect(codeOf(res)).toBe('bad_jwt');
    const none = await raw(lb, '/auth/v1/factors', { body: { factor_type: 'totp' } });
    expect(none.status).toBe(401);
    expect(codeOf(none)).toBe('no_authorization');
  });

  it('enrolling an unsupported factor type gives a 4xx with a code', async () => {
    const { client } = await signedInClient(lb);
    const token = await accessToken(client);
    const res = await raw(lb, '/auth/v1/factors', { body: { factor_type: 'carrier-pigeon' }, bearer: token });
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(res.status).toBeLessThan(500);
    expect(typeof codeOf(res)).toBe('string');
  });
});
