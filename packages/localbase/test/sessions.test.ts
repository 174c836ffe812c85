// Sessions: refresh-token rotation and reuse rules, logout scopes, updateUser, password change, forged tokens.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SignJWT } from 'jose';
import type { AuthChangeEvent } from '@supabase/supabase-js';
import {
  PASSWORD,
  anonClient,
  codeOf,
  jwtPayload,
  raw,
  refreshRaw,
  serviceClient,
  signedInClient,
  sleep,
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

interface TokenBody {
  access_token: string;
  refresh_token: string;
  expires_in: number;
  user: { id: string; email: string };
}

async function signIn(email: string, password = PASSWORD): Promise<TokenBody> {
  const res = await raw(lb, '/auth/v1/token?grant_type=password', { body: { email, password } });
  expect(res.status, res.text).toBe(200);
  return res.json as TokenBody;
}

async function newUser(): Promise<string> {
  const email = uniqueEmail('sess');
  const { error } = await anonClient(lb).auth.signUp({ email, password: PASSWORD });
  expect(error).toBeNull();
  return email;
}

/** GET /user with a bearer token. */
function getUserRaw(token: string) {
  return raw(lb, '/auth/v1/user', { bearer: token });
}

describe('refresh tokens', () => {
  it('rotate on every use through supabase-js, with TOKEN_REFRESHED', async () => {
    const { client } = await signedInClient(lb);
    const events: AuthChangeEvent[] = [];
    client.auth.onAuthStateChange((event) => {
      events.push(event);
    });
    const first = (await client.auth.getSession()).data.session!;
    const r1 = await client.auth.refreshSession();
    expect(r1.error).toBeNull();
    const r2 = await client.auth.refreshSession();
    expect(r2.error).toBeNull();
    const tokens = [first.refresh_token, r1.data.session!.refresh_token, r2.data.session!.refresh_token];
    expect(new Set(tokens).size).toBe(3);
    // Same server session throughout.
    expect(jwtPayload(r2.data.session!.access_token).session_id).toBe(jwtPayload(first.access_token).session_id);
    await sleep(0);
    expect(events.filter((e) => e === 'TOKEN_REFRESHED')).toHaveLength(2);
    const me = await client.auth.getUser();
    expect(me.error).toBeNull();
  });

  it('replays the active token when the parent of the active token is reused', async () => {
    const email = await newUser();
    const s0 = await signIn(email);
    const r1 = await refreshRaw(lb, s0.refresh_token);
    expect(r1.status, r1.text).toBe(200);
    const t1 = (r1.json as TokenBody).refresh_token;
    const r2 = await refreshRaw(lb, t1);
    expect(r2.status, r2.text).toBe(200);
    const t2 = (r2.json as TokenBody).refresh_token;
    expect(t2).not.toBe(t1);

    // t1 is the immediate parent of the active t2: the server answers with the active session again.
    const replay = await refreshRaw(lb, t1);
    expect(replay.status, replay.text).toBe(200);
    const replayed = replay.json as TokenBody;
    expect(replayed.refresh_token).toBe(t2);
    expect((await getUserRaw(replayed.access_token)).status).toBe(200);

    // The active token still works afterwards.
    const next = await refreshRaw(lb, t2);
    expect(next.status, next.text).toBe(200);
  });

  it('concurrent refreshes of one token (several tabs) all succeed with the same new token', async () => {
    const email = await newUser();
    const s0 = await signIn(email);
    const results = await Promise.all(Array.from({ length: 5 }, () => refreshRaw(lb, s0.refresh_token)));
    for (const r of results) expect(r.status, r.text).toBe(200);
    const tokens = new Set(results.map((r) => (r.json as TokenBody).refresh_token));
    expect(tokens.size).toBe(1);
    expect(tokens.has(s0.refresh_token)).toBe(false);
    // The shared new token is the active one.
    const [shared] = [...tokens];
    expect((await refreshRaw(lb, shared!)).status).toBe(200);
  });

  it('refuses an unknown refresh token with refresh_token_not_found (400)', async () => {
    const res = await refreshRaw(lb, 'zzzzzzzzzzzz');
    expect(res.status).toBe(400);
    expect(codeOf(res)).toBe('refresh_token_not_found');
  });

  it('refuses a missing refresh token with a 400 and a code', async () => {
    const res = await raw(lb, '/auth/v1/token?grant_type=refresh_token', { body: {} });
    expect(res.status).toBe(400);
    expect(typeof codeOf(res)).toBe('string');
  });

  // The reuse interval is 10 s (CLI default) and the server offers no clock override, so this waits for real.
  it(
    'revokes the whole family when an old token is reused after the 10 s reuse interval',
    async () => {
      const email = await newUser();
      const s0 = await signIn(email);
      const r1 = await refreshRaw(lb, s0.refresh_token);
      expect(r1.status).toBe(200);
      const t1 = (r1.json as TokenBody).refresh_token;
      const r2 = await refreshRaw(lb, t1);
      expect(r2.status).toBe(200);
      const t2 = (r2.json as TokenBody).refresh_token;

      // Within the interval, reuse of the older ancestor is tolerated (a retry, a second tab).
      const early = await refreshRaw(lb, s0.refresh_token);
      expect(early.status, early.text).toBe(200);

      const fresh = await refreshRaw(lb, t2);
      // t2 may have been superseded by the tolerated reuse above; either way the family is still alive here.
      expect([200, 400]).toContain(fresh.status);

      await sleep(11_000);
      const late = await refreshRaw(lb, s0.refresh_token);
      expect(late.status, late.text).toBe(400);
      expect(codeOf(late)).toBe('refresh_token_already_used');

      // Every token of the family is now dead, including the newest one.
      const candidates = [t2, fresh.status === 200 ? (fresh.json as TokenBody).refresh_token : t2];
      if (early.status === 200) candidates.push((early.json as TokenBody).refresh_token);
      for (const token of candidates) {
        const after = await refreshRaw(lb, token);
        expect(after.status, `token ${token}: ${after.text}`).toBe(400);
      }
    },
    30_000,
  );
});

describe('logout scopes', () => {
  async function threeSessions(): Promise<[TokenBody, TokenBody, TokenBody]> {
    const email = await newUser();
    return [await signIn(email), await signIn(email), await signIn(email)];
  }

  function logout(token: string, scope: string) {
    return raw(lb, `/auth/v1/logout?scope=${scope}`, { method: 'POST', bearer: token });
  }

  it('local revokes only the current session', async () => {
    const [a, b, c] = await threeSessions();
    const res = await logout(a.access_token, 'local');
    expect(res.status).toBe(204);
    const ra = await refreshRaw(lb, a.refresh_token);
    expect(ra.status).toBe(400);
    expect(['session_not_found', 'refresh_token_not_found']).toContain(codeOf(ra));
    const ua = await getUserRaw(a.access_token);
    expect(ua.status).toBe(403);
    expect(codeOf(ua)).toBe('session_not_found');
    expect((await refreshRaw(lb, b.refresh_token)).status).toBe(200);
    expect((await getUserRaw(c.access_token)).status).toBe(200);
  });

  it('others revokes every session but the current one', async () => {
    const [a, b, c] = await threeSessions();
    expect((await logout(a.access_token, 'others')).status).toBe(204);
    expect((await refreshRaw(lb, a.refresh_token)).status).toBe(200);
    for (const s of [b, c]) {
      expect((await refreshRaw(lb, s.refresh_token)).status).toBe(400);
      expect(codeOf(await getUserRaw(s.access_token))).toBe('session_not_found');
    }
  });

  it('global revokes every session of the user (the supabase-js default), emitting SIGNED_OUT', async () => {
    const [a, b] = await threeSessions();
    const { client } = await signedInClient(lb);
    const events: AuthChangeEvent[] = [];
    client.auth.onAuthStateChange((e) => {
      events.push(e);
    });
    const session = (await client.auth.getSession()).data.session!;
    const { error } = await client.auth.signOut();
    expect(error).toBeNull();
    await sleep(0);
    expect(events).toContain('SIGNED_OUT');
    expect((await client.auth.getSession()).data.session).toBeNull();
    expect((await refreshRaw(lb, session.refresh_token)).status).toBe(400);

    expect((await logout(a.access_token, 'global')).status).toBe(204);
    for (const s of [a, b]) {
      expect((await refreshRaw(lb, s.refresh_token)).status).toBe(400);
      expect((await getUserRaw(s.access_token)).status).toBe(403);
    }
  });

  it('getUser on a revoked session signs the client out (session_not_found → AuthSessionMissingError)', async () => {
    const { client } = await signedInClient(lb);
    const session = (await client.auth.getSession()).data.session!;
    expect((await logout(session.access_token, 'local')).status).toBe(204);
    const events: AuthChangeEvent[] = [];
    client.auth.onAuthStateChange((e) => {
      events.push(e);
    });
    const { data, error } = await client.auth.getUser();
    expect(data.user).toBeNull();
    expect(error?.name).toBe('AuthSessionMissingError');
    await sleep(0);
    expect(events).toContain('SIGNED_OUT');
  });

  it('refuses an unknown scope with a 4xx and a code', async () => {
    const [a] = await threeSessions();
    const res = await logout(a.access_token, 'everything');
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(res.status).toBeLessThan(500);
    expect(typeof codeOf(res)).toBe('string');
  });
});

describe('updateUser', () => {
  it('merges metadata, deletes keys set to null, and emits USER_UPDATED', async () => {
    const client = anonClient(lb);
    const email = uniqueEmail('meta');
    const signUp = await client.auth.signUp({
      email,
      password: PASSWORD,
      options: { data: { keep: 'yes', drop: 'soon', nested: { a: 1 } } },
    });
    expect(signUp.error).toBeNull();
    const events: AuthChangeEvent[] = [];
    client.auth.onAuthStateChange((e) => {
      events.push(e);
    });
    const { data, error } = await client.auth.updateUser({ data: { drop: null, added: 42 } });
    expect(error).toBeNull();
    expect(data.user?.user_metadata).toMatchObject({ keep: 'yes', added: 42, nested: { a: 1 } });
    expect(data.user?.user_metadata).not.toHaveProperty('drop');
    await sleep(0);
    expect(events).toContain('USER_UPDATED');
    // The stored session's user is replaced and the server agrees.
    expect((await client.auth.getSession()).data.session?.user.user_metadata).not.toHaveProperty('drop');
    const fresh = await client.auth.getUser();
    expect(fresh.data.user?.user_metadata).toMatchObject({ keep: 'yes', added: 42 });
    expect(fresh.data.user?.user_metadata).not.toHaveProperty('drop');
    // New tokens carry the new metadata.
    const refreshed = await client.auth.refreshSession();
    expect(jwtPayload(refreshed.data.session!.access_token).user_metadata).toMatchObject({ added: 42 });
  });

  it('a password change keeps the current session, logs out the other sessions, and swaps the password', async () => {
    const email = await newUser();
    const other = await signIn(email);
    const client = anonClient(lb);
    expect((await client.auth.signInWithPassword({ email, password: PASSWORD })).error).toBeNull();
    const newPassword = 'a-brand-new-password-7';
    const { error } = await client.auth.updateUser({ password: newPassword });
    expect(error).toBeNull();

    expect((await client.auth.getUser()).error).toBeNull();
    expect((await client.auth.refreshSession()).error).toBeNull();
    const otherRefresh = await refreshRaw(lb, other.refresh_token);
    expect(otherRefresh.status).toBe(400);
    expect(codeOf(await getUserRaw(other.access_token))).toBe('session_not_found');

    const oldPw = await anonClient(lb).auth.signInWithPassword({ email, password: PASSWORD });
    expect(oldPw.error?.code).toBe('invalid_credentials');
    const newPw = await anonClient(lb).auth.signInWithPassword({ email, password: newPassword });
    expect(newPw.error).toBeNull();
  });

  it('refuses a weak new password with weak_password', async () => {
    const { client } = await signedInClient(lb);
    const { error } = await client.auth.updateUser({ password: '123' });
    expect(error?.status).toBe(422);
    expect(error?.code).toBe('weak_password');
  });

  it('refuses updateUser without a session token (no_authorization / bad_jwt, raw)', async () => {
    const res = await raw(lb, '/auth/v1/user', { method: 'PUT', body: { data: { x: 1 } } });
    expect(res.status).toBe(401);
    expect(codeOf(res)).toBe('no_authorization');
    const withAnonKey = await raw(lb, '/auth/v1/user', { method: 'PUT', body: { data: { x: 1 } }, bearer: lb.anonKey });
    expect(withAnonKey.status).toBe(403);
    expect(codeOf(withAnonKey)).toBe('bad_jwt');
  });
});

describe('forged access tokens on GET /user', () => {
  let good: TokenBody;
  let claims: Record<string, unknown>;

  beforeAll(async () => {
    good = await signIn(await newUser());
    claims = jwtPayload(good.access_token);
  });

  it('accepts the genuine token (control)', async () => {
    expect((await getUserRaw(good.access_token)).status).toBe(200);
  });

  it('refuses a token signed with another secret', async () => {
    const forged = await new SignJWT(claims)
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .sign(new TextEncoder().encode('another-secret-that-is-at-least-32-characters'));
    const res = await getUserRaw(forged);
    expect(res.status).toBe(403);
    expect(codeOf(res)).toBe('bad_jwt');
  });

  it('refuses an unsigned alg:none token', async () => {
    const header = Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url');
    const body = Buffer.from(JSON.stringify(claims)).toString('base64url');
    for (const token of [`${header}.${body}.`, `${header}.${body}`]) {
      const res = await getUserRaw(token);
      expect(res.status).toBe(403);
      expect(codeOf(res)).toBe('bad_jwt');
    }
  });

  it('refuses an expired token signed with the right secret', async () => {
    const now = Math.floor(Date.now() / 1000);
    const expired = await new SignJWT({ ...claims, iat: now - 7200, exp: now - 3600 })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .sign(new TextEncoder().encode(lb.jwtSecret));
    const res = await getUserRaw(expired);
    expect(res.status).toBe(403);
    expect(codeOf(res)).toBe('bad_jwt');
  });

  it('refuses a tampered payload', async () => {
    const [h, , s] = good.access_token.split('.');
    const body = Buffer.from(JSON.stringify({ ...claims, role: 'service_role' })).toString('base64url');
    const res = await getUserRaw(`${h}.${body}.${s}`);
    expect(res.status).toBe(403);
    expect(codeOf(res)).toBe('bad_jwt');
  });

  it('refuses garbage and the anon key as a user token', async () => {
    for (const token of ['garbage', 'a.b.c', lb.anonKey]) {
      const res = await getUserRaw(token);
      expect([400, 401, 403]).toContain(res.status);
      expect(typeof codeOf(res)).toBe('string');
    }
  });

  it('a token of a deleted user gives user_not_found', async () => {
    const { client } = await signedInClient(lb);
    const session = (await client.auth.getSession()).data.session!;
    const admin = serviceClient(lb);
    expect((await admin.auth.admin.deleteUser(session.user.id)).error).toBeNull();
    const res = await getUserRaw(session.access_token);
    expect(res.status).toBe(403);
    expect(['user_not_found', 'session_not_found']).toContain(codeOf(res));
  });
});

