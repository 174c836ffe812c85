// Admin API with the service_role key: createUser, listUsers, deleteUser, generateLink; refused otherwise.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hash as bcryptHash } from '@node-rs/bcrypt';
import type { SupabaseClient } from '@supabase/supabase-js';
import {
  PASSWORD,
  anonClient,
  codeOf,
  raw,
  serviceClient,
  signedInClient,
  startTestServer,
  uniqueEmail,
  type Localbase,
} from './helpers.ts';

let lb: Localbase;
let admin: SupabaseClient;

beforeAll(async () => {
  lb = await startTestServer();
  admin = serviceClient(lb);
});

afterAll(async () => {
  await lb?.stop();
});

async function allUsers(): Promise<{ id: string; email?: string }[]> {
  const users: { id: string; email?: string }[] = [];
  for (let page = 1; ; page++) {
    const { data, error } = await admin.auth.admin.listUsers({ page, perPage: 100 });
    expect(error).toBeNull();
    users.push(...data.users);
    if (data.users.length < 100) return users;
  }
}

describe('admin API with the service_role key', () => {
  it('createUser with email_confirm creates a user who can sign in', async () => {
    const email = uniqueEmail('admin');
    const { data, error } = await admin.auth.admin.createUser({
      email,
      password: PASSWORD,
      email_confirm: true,
      user_metadata: { display_name: 'Grace' },
      app_metadata: { tier: 'gold' },
    });
    expect(error).toBeNull();
    expect(data.user?.email).toBe(email);
    expect(data.user?.email_confirmed_at).toBeTruthy();
    expect(data.user?.user_metadata).toMatchObject({ display_name: 'Grace' });
    expect(data.user?.app_metadata).toMatchObject({ provider: 'email', tier: 'gold' });
    const signIn = await anonClient(lb).auth.signInWithPassword({ email, password: PASSWORD });
    expect(signIn.error).toBeNull();
    expect(signIn.data.user?.id).toBe(data.user?.id);
  });

  it('createUser for a taken address fails with email_exists (422)', async () => {
    const email = uniqueEmail('taken');
    expect((await admin.auth.admin.createUser({ email, password: PASSWORD, email_confirm: true })).error).toBeNull();
    const { error } = await admin.auth.admin.createUser({ email, password: PASSWORD, email_confirm: true });
    expect(error?.status).toBe(422);
    expect(error?.code).toBe('email_exists');
  });

  it('createUser with an id gives the user that id, as GoTrue; a malformed or nil id is 400 validation_failed', async () => {
    const id = crypto.randomUUID();
    const email = uniqueEmail('fixed-id');
    const made = await admin.auth.admin.createUser({ id, email, password: PASSWORD, email_confirm: true });
    expect([made.error, made.data.user?.id, made.data.user?.identities?.[0]?.user_id]).toEqual([null, id, id]);
    const signIn = await anonClient(lb).auth.signInWithPassword({ email, password: PASSWORD });
    expect(signIn.data.user?.id).toBe(id);
    // a taken id fails GoTrue's insert: its 500 "Database error creating new user", nothing created
    const again = await raw(lb, '/auth/v1/admin/users', {
      method: 'POST',
      apikey: lb.serviceRoleKey,
      bearer: lb.serviceRoleKey,
      body: { id, email: uniqueEmail('same-id') },
    });
    expect([again.status, again.json]).toEqual([500, { code: 'unexpected_failure', message: 'Database error creating new user' }]);
    const phoneId = crypto.randomUUID();
    const phoneUser = await admin.auth.admin.createUser({ id: phoneId, phone: `+1555${String(Math.floor(Math.random() * 1e7)).padStart(7, '0')}`, phone_confirm: true });
    expect([phoneUser.error, phoneUser.data.user?.id]).toEqual([null, phoneId]);
    const bad = await admin.auth.admin.createUser({ id: 'not-a-uuid', email: uniqueEmail('bad-id') });
    expect([bad.error?.status, bad.error?.code, bad.error?.message]).toEqual([400, 'validation_failed', 'ID must conform to the uuid v4 format']);
    const nil = await admin.auth.admin.createUser({ id: '00000000-0000-0000-0000-000000000000', email: uniqueEmail('nil-id') });
    expect([nil.error?.status, nil.error?.code, nil.error?.message]).toEqual([400, 'validation_failed', 'ID cannot be a nil uuid']);
  });

  it('createUser with a bcrypt password_hash: the user signs in with that password, as GoTrue', async () => {
    const email = uniqueEmail('hashed');
    const made = await admin.auth.admin.createUser({ email, password_hash: await bcryptHash(PASSWORD, 4), email_confirm: true });
    expect(made.error).toBeNull();
    const signIn = await anonClient(lb).auth.signInWithPassword({ email, password: PASSWORD });
    expect([signIn.error, signIn.data.user?.id]).toEqual([null, made.data.user?.id]);
    const both = await admin.auth.admin.createUser({ email: uniqueEmail('both'), password: PASSWORD, password_hash: await bcryptHash(PASSWORD, 4) });
    expect([both.error?.status, both.error?.code, both.error?.message]).toEqual([400, 'validation_failed', 'Only a password or a password hash should be provided']);
    // not a bcrypt hash: GoTrue's own failure (500 "Error creating user"), nothing created
    const plainEmail = uniqueEmail('plain-hash');
    const plain = await raw(lb, '/auth/v1/admin/users', { method: 'POST', apikey: lb.serviceRoleKey, bearer: lb.serviceRoleKey, body: { email: plainEmail, password_hash: PASSWORD } });
    expect([plain.status, plain.json]).toEqual([500, { code: 'unexpected_failure', message: 'Error creating user' }]);
    expect((await allUsers()).some((u) => u.email === plainEmail)).toBe(false);
    // Argon2 / Firebase scrypt hashes: GoTrue takes them, localbase cannot check them and says so (ADR 171)
    const argon = await admin.auth.admin.createUser({ email: uniqueEmail('argon'), password_hash: '$argon2id$v=19$m=16,t=2,p=1$c2FsdHNhbHQ$aGFzaGhhc2hoYXNo' });
    expect([argon.error?.status, argon.error?.code]).toEqual([400, 'validation_failed']);
  });

  it('createUser refuses a weak password', async () => {
    const { error } = await admin.auth.admin.createUser({ email: uniqueEmail('weak'), password: '1', email_confirm: true });
    expect(error?.status).toBe(422);
    expect(error?.code).toBe('weak_password');
  });

  it('listUsers pages through users and includes a new one', async () => {
    const email = uniqueEmail('listed');
    const created = await admin.auth.admin.createUser({ email, email_confirm: true });
    expect(created.error).toBeNull();
    const users = await allUsers();
    expect(users.map((u) => u.email)).toContain(email);
    const page = await admin.auth.admin.listUsers({ page: 1, perPage: 1 });
    expect(page.error).toBeNull();
    expect(page.data.users).toHaveLength(1);
  });

  it('deleteUser removes the user: gone from the list, cannot sign in', async () => {
    const email = uniqueEmail('doomed');
    const created = await admin.auth.admin.createUser({ email, password: PASSWORD, email_confirm: true });
    const id = created.data.user!.id;
    const { error } = await admin.auth.admin.deleteUser(id);
    expect(error).toBeNull();
    expect((await allUsers()).map((u) => u.id)).not.toContain(id);
    const signIn = await anonClient(lb).auth.signInWithPassword({ email, password: PASSWORD });
    expect(signIn.error?.code).toBe('invalid_credentials');
    // Deleting again → 404 user_not_found.
    const again = await admin.auth.admin.deleteUser(id);
    expect(again.error?.status).toBe(404);
    expect(again.error?.code).toBe('user_not_found');
  });

  it('generateLink magiclink returns a link, a hashed token and an OTP that sign in', async () => {
    const email = uniqueEmail('link');
    expect((await admin.auth.admin.createUser({ email, password: PASSWORD, email_confirm: true })).error).toBeNull();
    const { data, error } = await admin.auth.admin.generateLink({ type: 'magiclink', email });
    expect(error).toBeNull();
    const p = data.properties!;
    expect(p.action_link).toContain('/auth/v1/verify?');
    expect(new URL(p.action_link).searchParams.get('token')).toBe(p.hashed_token);
    expect(new URL(p.action_link).searchParams.get('type')).toBe('magiclink');
    expect(p.email_otp).toMatch(/^\d{6}$/);
    expect(p.verification_type).toBe('magiclink');
    expect(data.user?.email).toBe(email);
    const v = await anonClient(lb).auth.verifyOtp({ token_hash: p.hashed_token, type: 'magiclink' });
    expect(v.error).toBeNull();
    expect(v.data.user?.email).toBe(email);
  });

  it('generateLink signup creates an unconfirmed user whose link confirms it', async () => {
    const email = uniqueEmail('gensignup');
    const { data, error } = await admin.auth.admin.generateLink({ type: 'signup', email, password: PASSWORD });
    expect(error).toBeNull();
    expect(data.properties?.verification_type).toBe('signup');
    const v = await anonClient(lb).auth.verifyOtp({ token_hash: data.properties!.hashed_token, type: 'signup' });
    expect(v.error).toBeNull();
    expect(v.data.user?.email_confirmed_at).toBeTruthy();
    expect((await anonClient(lb).auth.signInWithPassword({ email, password: PASSWORD })).error).toBeNull();
  });

  it('generateLink recovery gives a recovery session', async () => {
    const email = uniqueEmail('genrec');
    expect((await admin.auth.admin.createUser({ email, password: PASSWORD, email_confirm: true })).error).toBeNull();
    const { data, error } = await admin.auth.admin.generateLink({ type: 'recovery', email });
    expect(error).toBeNull();
    const v = await anonClient(lb).auth.verifyOtp({ token_hash: data.properties!.hashed_token, type: 'recovery' });
    expect(v.error).toBeNull();
    expect(v.data.session).not.toBeNull();
  });
});

describe('admin API refusals', () => {
  it('refuses the anon key on every admin call', async () => {
    const anon = anonClient(lb);
    const results = [
      await anon.auth.admin.listUsers(),
      await anon.auth.admin.createUser({ email: uniqueEmail('nope'), password: PASSWORD }),
      await anon.auth.admin.deleteUser('00000000-0000-4000-8000-000000000000'),
      await anon.auth.admin.generateLink({ type: 'magiclink', email: uniqueEmail('nope') }),
    ];
    for (const r of results) {
      expect(r.error).not.toBeNull();
      expect([401, 403]).toContain(r.error!.status);
      expect(typeof r.error!.code).toBe('string');
    }
  });

  it("refuses a signed-in user's token on the admin API", async () => {
    const { client } = await signedInClient(lb);
    const token = (await client.auth.getSession()).data.session!.access_token;
    const res = await raw(lb, '/auth/v1/admin/users', { bearer: token });
    expect([401, 403]).toContain(res.status);
    expect(typeof codeOf(res)).toBe('string');
  });

  it('refuses admin calls with the service key as apikey but an anon bearer', async () => {
    const res = await raw(lb, '/auth/v1/admin/users', { apikey: lb.serviceRoleKey, bearer: lb.anonKey });
    expect([401, 403]).toContain(res.status);
  });

  it('answers a malformed user id with a 4xx, not a 500', async () => {
    const res = await raw(lb, '/auth/v1/admin/users/not-a-uuid', {
      method: 'DELETE',
      apikey: lb.serviceRoleKey,
      bearer: lb.serviceRoleKey,
    });
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(res.status).toBeLessThan(500);
    expect(typeof codeOf(res)).toBe('string');
  });

  it("GET, PUT and DELETE /admin/users/:id load the user first, as GoTrue's loadUser: a malformed id is 404 validation_failed, an unknown one user_not_found, whatever the body", async () => {
    // They said 404 user_not_found "User not found" for a malformed id (a client branching on the code read a typo as
    // a missing user), and PUT / DELETE read the body first: a bad body on an unknown user was 400 bad_json.
    // (supabase-js checks the id itself before sending: raw requests.)
    const service = { apikey: lb.serviceRoleKey, bearer: lb.serviceRoleKey };
    const refusal = (res: Awaited<ReturnType<typeof raw>>) => [res.status, codeOf(res), (res.json as { message?: string }).message];
    const unknown = '00000000-0000-4000-8000-000000000000';
    for (const method of ['GET', 'PUT', 'DELETE']) {
      const body = method === 'GET' ? undefined : '{bad';
      expect(refusal(await raw(lb, '/auth/v1/admin/users/not-a-uuid', { ...service, method, body })), method).toEqual([404, 'validation_failed', 'user_id must be an UUID']);
      expect(refusal(await raw(lb, `/auth/v1/admin/users/${unknown}`, { ...service, method, body })), method).toEqual([404, 'user_not_found', 'User not found']);
    }
  });
});
