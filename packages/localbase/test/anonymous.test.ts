// Anonymous (guest) sign-ins as GoTrue's GOTRUE_EXTERNAL_ANONYMOUS_USERS_ENABLED: off by default; when on,
// signInAnonymously() gives a user without email and a session whose token says is_anonymous: true (usable in RLS);
// the guest becomes a permanent user by adding an email (confirmed from the mail, or at once when confirmations are
// off) and then a password, keeping its id and rows. docs/decisions/032-anonymous-sign-ins.md.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { createClient, type SupabaseClient } from '@supabase/supabase-js';
import { cliPath, createScratchDatabase, nodeBin, repoRoot } from './cli.ts';
import {
  PASSWORD,
  anonClient,
  emptySeedFile,
  fetchFrom,
  jwtPayload,
  latestMail,
  listMail,
  raw,
  refreshRaw,
  serviceClient,
  signedInClient,
  sleep,
  startTestServer,
  testDatabaseUrl,
  uniqueEmail,
  verifyLink,
  type Localbase,
} from './helpers.ts';

const migrationsDir = fileURLToPath(new URL('./fixtures/anonymous-migrations/', import.meta.url));

/** A fresh guest: a supabase-js client holding an anonymous session. */
async function guest(lb: Localbase, data?: Record<string, unknown>, client: SupabaseClient = anonClient(lb)) {
  const res = await client.auth.signInAnonymously(data ? { options: { data } } : undefined);
  expect(res.error).toBeNull();
  const session = res.data.session!;
  return { client, session, id: session.user.id, claims: jwtPayload(session.access_token) };
}

/** A one-shot CLI command, without blocking this process (its test server keeps answering meanwhile). */
function runCliAsync(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const env = { ...process.env };
  for (const key of Object.keys(env)) if (key.startsWith('LOCALBASE_') || key === 'DATABASE_URL') delete env[key];
  const child = spawn(nodeBin, [cliPath, ...args], { cwd: repoRoot, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve) => child.once('exit', (code) => resolve({ code, stdout, stderr })));
}

async function accessToken(client: SupabaseClient): Promise<string> {
  const { data } = await client.auth.getSession();
  if (!data.session) throw new Error('no session');
  return data.session.access_token;
}

describe('anonymous sign-ins switched off (the default), also with --disable-signup', () => {
  let lb: Localbase;
  beforeAll(async () => {
    lb = await startTestServer({ disableSignup: true });
  });
  afterAll(async () => {
    await lb?.stop();
  });

  it('GET /settings reports external.anonymous_users: false', async () => {
    const res = await raw(lb, '/auth/v1/settings');
    expect((res.json as { external: Record<string, boolean> }).external.anonymous_users).toBe(false);
  });

  it('signInAnonymously, and a sign-up with a password but no email or phone, answer 422 anonymous_provider_disabled', async () => {
    const { data, error } = await anonClient(lb).auth.signInAnonymously();
    expect(data.session).toBeNull();
    expect([error?.status, error?.code, error?.message]).toEqual([422, 'anonymous_provider_disabled', 'Anonymous sign-ins are disabled']);
    const res = await raw(lb, '/auth/v1/signup', { body: { password: PASSWORD, data: {} } });
    expect(res.status).toBe(422);
    expect(res.json).toMatchObject({ code: 'anonymous_provider_disabled', message: 'Anonymous sign-ins are disabled' });
  });
});

describe('anonymous sign-ins on with --disable-signup', () => {
  let lb: Localbase;
  beforeAll(async () => {
    lb = await startTestServer({ disableSignup: true, enableAnonymousSignIns: true });
  });
  afterAll(async () => {
    await lb?.stop();
  });

  it('signInAnonymously answers 422 signup_disabled', async () => {
    expect((await raw(lb, '/auth/v1/settings')).json).toMatchObject({ external: { anonymous_users: true }, disable_signup: true });
    const { error } = await anonClient(lb).auth.signInAnonymously();
    expect([error?.status, error?.code, error?.message]).toEqual([422, 'signup_disabled', 'Signups not allowed for this instance']);
  });
});

describe('anonymous sign-ins on, email confirmations on', () => {
  let lb: Localbase;
  beforeAll(async () => {
    lb = await startTestServer({
      enableAnonymousSignIns: true,
      enableConfirmations: true,
      migrationsDir,
      seedFile: emptySeedFile,
    });
  });
  afterAll(async () => {
    await lb?.stop();
  });

  it('GET /settings reports external.anonymous_users: true', async () => {
    const res = await raw(lb, '/auth/v1/settings');
    expect(res.json).toMatchObject({ external: { anonymous_users: true, email: true }, mailer_autoconfirm: false });
  });

  it('signInAnonymously gives a guest user and a session with is_anonymous, role authenticated and amr anonymous', async () => {
    const client = anonClient(lb);
    const events: string[] = [];
    client.auth.onAuthStateChange((event) => events.push(event));
    const { data, error } = await client.auth.signInAnonymously({ options: { data: { nickname: 'Guest 1' } } });
    expect(error).toBeNull();
    const user = data.user!;
    expect(user).toMatchObject({
      aud: 'authenticated',
      role: 'authenticated',
      email: '',
      phone: '',
      app_metadata: {},
      user_metadata: { nickname: 'Guest 1' },
      identities: [],
      is_anonymous: true,
    });
    expect(user.email_confirmed_at).toBeUndefined();
    expect(user.last_sign_in_at).toBeTruthy();
    expect(data.session?.token_type).toBe('bearer');
    expect(data.session?.refresh_token).toMatch(/^[a-z2-7]{12}$/);
    const claims = jwtPayload(data.session!.access_token);
    expect(claims).toMatchObject({
      sub: user.id,
      aud: 'authenticated',
      role: 'authenticated',
      email: '',
      phone: '',
      app_metadata: {},
      user_metadata: { nickname: 'Guest 1' },
      aal: 'aal1',
      is_anonymous: true,
    });
    expect(claims.amr).toEqual([{ method: 'anonymous', timestamp: expect.any(Number) }]);
    expect(events).toContain('SIGNED_IN');
    // getUser() reads the same guest back
    const me = await client.auth.getUser();
    expect(me.data.user).toMatchObject({ id: user.id, is_anonymous: true, email: '' });
  });

  it("RLS: a guest keeps its own rows; a policy on auth.jwt() ->> 'is_anonymous' refuses what guests may not do", async () => {
    const g = await guest(lb);
    const note = await g.client.from('guest_notes').insert({ body: 'mine' }).select().single();
    expect(note.error).toBeNull();
    expect(note.data).toMatchObject({ owner: g.id, body: 'mine' });
    const post = await g.client.from('guest_posts').insert({ body: 'hello world' });
    expect([post.status, post.error?.code]).toEqual([403, '42501']);
    // another guest sees nothing of the first one's
    const other = await guest(lb);
    expect((await other.client.from('guest_notes').select('body')).data).toEqual([]);
  });

  it('refresh keeps the guest anonymous; sign-out ends the session', async () => {
    const g = await guest(lb);
    const refreshed = await g.client.auth.refreshSession();
    expect(refreshed.error).toBeNull();
    expect(refreshed.data.session!.refresh_token).not.toBe(g.session.refresh_token);
    expect(jwtPayload(refreshed.data.session!.access_token)).toMatchObject({ sub: g.id, is_anonymous: true });
    const token = refreshed.data.session!.refresh_token;
    expect((await g.client.auth.signOut()).error).toBeNull();
    const again = await raw(lb, '/auth/v1/token?grant_type=refresh_token', { body: { refresh_token: token } });
    expect(again.status).toBe(400);
  });

  it('a guest cannot set a password without an email: 422 validation_failed', async () => {
    const g = await guest(lb);
    const { error } = await g.client.auth.updateUser({ password: PASSWORD });
    expect([error?.status, error?.code, error?.message]).toEqual([
      422,
      'validation_failed',
      'Updating password of an anonymous user without an email or phone is not allowed',
    ]);
    // weak passwords are refused first, as for everyone
    const weak = await g.client.auth.updateUser({ password: '123' });
    expect(weak.error?.code).toBe('weak_password');
  });

  it('a guest cannot ask for a reauthentication code: 400 validation_failed', async () => {
    const g = await guest(lb);
    const { error } = await g.client.auth.reauthenticate();
    expect([error?.status, error?.code, error?.message]).toEqual([
      400,
      'validation_failed',
      'Reauthentication requires the user to have an email or a phone number',
    ]);
  });

  it('a guest cannot enrol an MFA factor: 403 no_authorization', async () => {
    const g = await guest(lb);
    const { error } = await g.client.auth.mfa.enroll({ factorType: 'totp' });
    expect([error?.status, error?.code, error?.message]).toEqual([
      403,
      'no_authorization',
      'Anonymous user not allowed to perform these actions',
    ]);
  });

  it('conversion: updateUser({ email }) mails the new address only; its link makes the same user permanent', async () => {
    const g = await guest(lb, { nickname: 'Guest 2' });
    expect((await g.client.from('guest_notes').insert({ body: 'kept' })).error).toBeNull();
    const email = uniqueEmail('convert');
    const upd = await g.client.auth.updateUser({ email }, { emailRedirectTo: 'http://127.0.0.1:3000/welcome' });
    expect(upd.error).toBeNull();
    expect(upd.data.user).toMatchObject({ id: g.id, email: '', new_email: email, is_anonymous: true });
    expect(upd.data.user?.email_change_sent_at).toBeTruthy();

    const mail = await latestMail(lb, email, 'email_change');
    expect((await listMail(lb, email)).length).toBe(1);
    const link = verifyLink(mail);
    expect(link.searchParams.get('type')).toBe('email_change');
    const res = await fetch(link, { redirect: 'manual' });
    expect(res.status).toBe(303);
    const location = new URL(res.headers.get('location')!);
    expect(location.origin + location.pathname).toBe('http://127.0.0.1:3000/welcome');
    const fragment = new URLSearchParams(location.hash.slice(1));
    expect(fragment.get('type')).toBe('email_change');
    const claims = jwtPayload(fragment.get('access_token')!);
    expect(claims).toMatchObject({ sub: g.id, email, is_anonymous: false, app_metadata: { provider: 'email', providers: ['email'] } });
    expect(claims.amr).toEqual([{ method: 'otp', timestamp: expect.any(Number) }]);

    // the guest's own session, refreshed, is now a permanent user's
    const refreshed = await g.client.auth.refreshSession();
    expect(refreshed.error).toBeNull();
    expect(jwtPayload(refreshed.data.session!.access_token)).toMatchObject({ sub: g.id, is_anonymous: false, email });
    const user = refreshed.data.user!;
    expect(user).toMatchObject({ id: g.id, email, is_anonymous: false, user_metadata: { nickname: 'Guest 2', email_verified: true } });
    expect(user.email_confirmed_at).toBeTruthy();
    expect(user.new_email).toBeUndefined();
    expect(user.identities).toHaveLength(1);
    expect(user.identities![0]).toMatchObject({
      provider: 'email',
      id: g.id,
      identity_data: { sub: g.id, email, email_verified: true, phone_verified: false },
    });
    // same id: the rows are still theirs, and the policy now lets them publish
    expect((await g.client.from('guest_notes').select('body')).data).toEqual([{ body: 'kept' }]);
    expect((await g.client.from('guest_posts').insert({ body: 'now permanent' })).error).toBeNull();

    // then a password: allowed now (the user is no longer anonymous), and it signs in
    expect((await g.client.auth.updateUser({ password: PASSWORD })).error).toBeNull();
    const signIn = await anonClient(lb).auth.signInWithPassword({ email, password: PASSWORD });
    expect(signIn.error).toBeNull();
    expect(signIn.data.user?.id).toBe(g.id);
  });

  it('conversion by the mailed code (verifyOtp type email_change), email and password in one update', async () => {
    const g = await guest(lb);
    const email = uniqueEmail('convert-otp');
    const upd = await g.client.auth.updateUser({ email, password: PASSWORD });
    expect(upd.error).toBeNull();
    expect(upd.data.user).toMatchObject({ new_email: email, is_anonymous: true });
    // not yet confirmed: no password sign-in with the pending address
    expect((await anonClient(lb).auth.signInWithPassword({ email, password: PASSWORD })).error?.code).toBe('invalid_credentials');
    const mail = await latestMail(lb, email, 'email_change');
    expect(mail.token).toMatch(/^\d{6}$/);
    const verified = await g.client.auth.verifyOtp({ email, token: mail.token!, type: 'email_change' });
    expect(verified.error).toBeNull();
    expect(verified.data.user).toMatchObject({ id: g.id, email, is_anonymous: false });
    expect(jwtPayload(verified.data.session!.access_token).is_anonymous).toBe(false);
    const signIn = await anonClient(lb).auth.signInWithPassword({ email, password: PASSWORD });
    expect(signIn.error).toBeNull();
    expect(signIn.data.user?.id).toBe(g.id);
    // MFA is allowed with the permanent user's token
    const enroll = await g.client.auth.mfa.enroll({ factorType: 'totp' });
    expect(enroll.error).toBeNull();
  });

  it('conversion with a PKCE client (as @supabase/ssr): the link answers ?code=, exchanged for the permanent session', async () => {
    const client = createClient(lb.url, lb.anonKey, {
      auth: { persistSession: false, autoRefreshToken: false, detectSessionInUrl: false, flowType: 'pkce' },
    });
    const g = await guest(lb, undefined, client);
    const email = uniqueEmail('convert-pkce');
    const upd = await client.auth.updateUser({ email }, { emailRedirectTo: 'http://127.0.0.1:3000/auth/confirm' });
    expect(upd.error).toBeNull();
    const link = verifyLink(await latestMail(lb, email, 'email_change'));
    expect(link.searchParams.get('token')).toMatch(/^pkce_/);
    const res = await fetch(link, { redirect: 'manual' });
    expect(res.status).toBe(303);
    const location = new URL(res.headers.get('location')!);
    expect(location.pathname).toBe('/auth/confirm');
    const code = location.searchParams.get('code');
    expect(code).toBeTruthy();
    const exchanged = await client.auth.exchangeCodeForSession(code!);
    expect(exchanged.error).toBeNull();
    expect(exchanged.data.user).toMatchObject({ id: g.id, email, is_anonymous: false });
    expect(jwtPayload(exchanged.data.session!.access_token)).toMatchObject({ sub: g.id, is_anonymous: false });
  });

  it("an address that belongs to someone else is refused: 422 email_exists", async () => {
    const { email } = await signedInClient(lb, uniqueEmail('taken'));
    const g = await guest(lb);
    const { error } = await g.client.auth.updateUser({ email });
    expect([error?.status, error?.code]).toEqual([422, 'email_exists']);
  });

  it('admin: updateUserById({ email, email_confirm: true }) makes a guest permanent; without email_confirm it stays a guest', async () => {
    const admin = serviceClient(lb).auth.admin;
    const g = await guest(lb);
    const email = uniqueEmail('admin-convert');
    const upd = await admin.updateUserById(g.id, { email, email_confirm: true });
    expect(upd.error).toBeNull();
    expect(upd.data.user).toMatchObject({ id: g.id, email, is_anonymous: false });
    expect(upd.data.user?.identities?.[0]).toMatchObject({ provider: 'email', identity_data: { email, email_verified: true } });
    const refreshed = await g.client.auth.refreshSession();
    expect(jwtPayload(refreshed.data.session!.access_token)).toMatchObject({ sub: g.id, email, is_anonymous: false });

    const h = await guest(lb);
    const pending = await admin.updateUserById(h.id, { email: uniqueEmail('admin-unconfirmed') });
    expect(pending.error).toBeNull();
    expect(pending.data.user).toMatchObject({ is_anonymous: true });
    expect(pending.data.user?.email_confirmed_at).toBeUndefined();
  });

  it('admin: listUsers shows guests with is_anonymous; deleting one removes its rows by cascade', async () => {
    const g = await guest(lb);
    expect((await g.client.from('guest_notes').insert({ body: 'to be deleted' })).error).toBeNull();
    const admin = serviceClient(lb);
    let found: { is_anonymous?: boolean; email?: string } | undefined;
    for (let page = 1; !found; page++) {
      const list = await admin.auth.admin.listUsers({ page, perPage: 100 });
      expect(list.error).toBeNull();
      found = list.data.users.find((u) => u.id === g.id);
      if (list.data.users.length < 100) break;
    }
    expect(found).toMatchObject({ is_anonymous: true, email: '' });
    const byId = await admin.auth.admin.getUserById(g.id);
    expect(byId.data.user).toMatchObject({ id: g.id, is_anonymous: true, app_metadata: {} });

    expect((await admin.auth.admin.deleteUser(g.id)).error).toBeNull();
    const rows = await lb.db.query('select count(*)::int as n from public.guest_notes where owner = $1', [g.id]);
    expect(rows.rows[0]?.n).toBe(0);
    const refresh = await raw(lb, '/auth/v1/token?grant_type=refresh_token', { body: { refresh_token: g.session.refresh_token } });
    expect(refresh.status).toBe(400);
  });
});

describe('cleanup of old guests', () => {
  let lb: Localbase;
  beforeAll(async () => {
    lb = await startTestServer({ enableAnonymousSignIns: true, migrationsDir, seedFile: emptySeedFile });
  });
  afterAll(async () => {
    await lb?.stop();
  });

  const backdate = (id: string, days: number) =>
    lb.db.query(`update auth.users set created_at = now() - make_interval(days => $2) where id = $1`, [id, days]);
  const exists = async (id: string) =>
    (await lb.db.query('select 1 from auth.users where id = $1', [id])).rows.length === 1;

  it('the running server deletes guests older than the cutoff with their rows; fresh guests and permanent users stay', async () => {
    const old = await guest(lb);
    expect((await old.client.from('guest_notes').insert({ body: 'old guest' })).error).toBeNull();
    const fresh = await guest(lb);
    const converted = await guest(lb);
    expect((await converted.client.auth.updateUser({ email: uniqueEmail('kept') })).error).toBeNull();
    const { client: permanent } = await signedInClient(lb, uniqueEmail('old-permanent'));
    const permanentId = (await permanent.auth.getUser()).data.user!.id;
    for (const id of [old.id, converted.id, permanentId]) await backdate(id, 40);

    const path = '/localbase/v1/auth/delete-guests';
    const refused = await raw(lb, path, { body: { older_than_seconds: 30 * 86_400 } });
    expect(refused.status).toBe(401); // the anon key may not
    const bad = await raw(lb, path, { apikey: lb.serviceRoleKey, body: { older_than_seconds: '30d' } });
    expect(bad.status).toBe(400);

    const res = await raw(lb, path, { apikey: lb.serviceRoleKey, body: { older_than_seconds: 30 * 86_400 } });
    expect(res.status).toBe(200);
    expect((res.json as { deleted: number }).deleted).toBeGreaterThanOrEqual(1);
    expect(await exists(old.id)).toBe(false);
    expect((await lb.db.query('select count(*)::int as n from public.guest_notes where owner = $1', [old.id])).rows[0]?.n).toBe(0);
    expect((await refreshRaw(lb, old.session.refresh_token)).status).toBe(400);
    for (const id of [fresh.id, converted.id, permanentId]) expect(await exists(id)).toBe(true);
    expect((await fresh.client.auth.refreshSession()).error).toBeNull();
  });

  it.runIf(testDatabaseUrl)(
    'on PostgreSQL: `localbase auth delete-guests --database-url` deletes them; a guest locked by a running request is skipped, not waited for',
    async () => {
      const scratch = await createScratchDatabase(testDatabaseUrl!);
      const server = await startTestServer({ databaseUrl: scratch.url, enableAnonymousSignIns: true });
      const client = new pg.Client({ connectionString: scratch.url });
      try {
        const [a, b, c] = [await guest(server), await guest(server), await guest(server)];
        for (const g of [a, b]) await server.db.query(`update auth.users set created_at = now() - interval '40 days' where id = $1`, [g.id]);
        // a request holding b's row: skipped by the batch (skip locked), left for the next run
        await client.connect();
        await client.query('begin');
        await client.query('select 1 from auth.users where id = $1 for update', [b.id]);
        const r = await runCliAsync(['auth', 'delete-guests', '--older-than', '30d', '--database-url', scratch.url]);
        expect(r.code, r.stderr).toBe(0);
        expect(r.stdout).toContain('Deleted 1 guest user(s) created more than 30d ago');
        await client.query('commit');
        const again = await runCliAsync(['auth', 'delete-guests', '--database-url', scratch.url]);
        expect(again.stdout).toContain('Deleted 1 guest user(s)');
        const left = await server.db.query<{ id: string }>('select id::text from auth.users where is_anonymous');
        expect(left.rows.map((x) => x.id)).toEqual([c.id]);
      } finally {
        await client.end().catch(() => {});
        await server.stop();
        await scratch.drop();
      }
    },
    120_000,
  );
});

describe('anonymous sign-ins on, email confirmations off (autoconfirm)', () => {
  let lb: Localbase;
  beforeAll(async () => {
    lb = await startTestServer({ enableAnonymousSignIns: true, rateLimits: { anonymousUsers: 3 } });
  });
  afterAll(async () => {
    await lb?.stop();
  });

  it('updateUser({ email }) converts the guest at once, without a mail', async () => {
    const g = await guest(lb, { nickname: 'Quick' });
    const email = uniqueEmail('autoconfirm');
    const upd = await g.client.auth.updateUser({ email });
    expect(upd.error).toBeNull();
    const user = upd.data.user!;
    expect(user).toMatchObject({ id: g.id, email, is_anonymous: false, user_metadata: { nickname: 'Quick', email_verified: true } });
    expect(user.email_confirmed_at).toBeTruthy();
    expect(user.new_email).toBeUndefined();
    expect(user.identities?.map((i) => i.provider)).toEqual(['email']);
    await sleep(100);
    expect(await listMail(lb, email)).toEqual([]);
    const refreshed = await g.client.auth.refreshSession();
    expect(jwtPayload(refreshed.data.session!.access_token)).toMatchObject({ sub: g.id, email, is_anonymous: false });
    // the token of before the conversion still says anonymous: MFA needs the refreshed one (GoTrue reads the claim)
    const stale = await raw(lb, '/auth/v1/factors', { bearer: g.session.access_token, body: { factor_type: 'totp' } });
    expect([stale.status, (stale.json as { code?: string }).code]).toEqual([403, 'no_authorization']);
    expect((await g.client.auth.updateUser({ password: PASSWORD })).error).toBeNull();
    expect((await anonClient(lb).auth.signInWithPassword({ email, password: PASSWORD })).data.user?.id).toBe(g.id);
  });

  it('its own rate limit per client address: the 4th sign-in of an address in an hour → 429 over_request_rate_limit', async () => {
    const from = (address: string) =>
      createClient(lb.url, lb.anonKey, {
        auth: { persistSession: false, autoRefreshToken: false, detectSessionInUrl: false },
        global: { fetch: fetchFrom(address) },
      });
    // 127.0.0.1 signed in once above; a fresh address gets the whole budget
    for (let i = 0; i < 3; i++) expect((await from('127.0.0.3').auth.signInAnonymously()).error).toBeNull();
    const { error } = await from('127.0.0.3').auth.signInAnonymously();
    expect([error?.status, error?.code, error?.message]).toEqual([429, 'over_request_rate_limit', 'Request rate limit reached']);
    const res = await raw(lb, '/auth/v1/signup', { body: {}, localAddress: '127.0.0.3' });
    expect(res.status).toBe(429);
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(3000);
    // other addresses, and email sign-ups of the same address, are not held back
    expect((await from('127.0.0.4').auth.signInAnonymously()).error).toBeNull();
    expect((await from('127.0.0.3').auth.signUp({ email: uniqueEmail('limited'), password: PASSWORD })).error).toBeNull();
  });

  it('the converted user keeps its access token until it expires or is refreshed', async () => {
    const g = await guest(lb);
    const email = uniqueEmail('stale');
    expect((await g.client.auth.updateUser({ email })).error).toBeNull();
    expect(jwtPayload(await accessToken(g.client)).is_anonymous).toBe(true);
    const me = await raw(lb, '/auth/v1/user', { bearer: g.session.access_token });
    expect(me.json).toMatchObject({ id: g.id, email, is_anonymous: false });
  });
});
