// Password hashing (decision 019): bcrypt runs off the HTTP thread, and the hashes stay GoTrue's and pgcrypto's.
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PASSWORD, anonClient, codeOf, raw, serviceClient, startTestServer, uniqueEmail, type Localbase } from './helpers.ts';

let lb: Localbase;

beforeAll(async () => {
  // One bcrypt at a time whatever the machine's cores, so that the burst below lasts SIGN_INS hashes.
  lb = await startTestServer({ passwordHashConcurrency: 1 });
});

afterAll(async () => {
  await lb?.stop();
});

async function createUser(password: string): Promise<{ id: string; email: string }> {
  const email = uniqueEmail('hash');
  const { data, error } = await serviceClient(lb).auth.admin.createUser({ email, password, email_confirm: true });
  if (error || !data.user) throw error ?? new Error('no user');
  return { id: data.user.id, email };
}

async function signIn(email: string, password: string): Promise<{ ok: boolean; code?: string }> {
  const { data, error } = await anonClient(lb).auth.signInWithPassword({ email, password });
  return { ok: Boolean(data.session) && !error, code: error?.code };
}

describe('a burst of sign-ins', () => {
  it('does not stop the server: other requests keep being answered while the passwords are checked', async () => {
    const SIGN_INS = 12;
    // The server runs in this process: its event loop is the one measured.
    const delay = monitorEventLoopDelay({ resolution: 5 });
    delay.enable();
    const started = performance.now();
    let pending = SIGN_INS;
    // Unknown addresses (each costs one bcrypt comparison, as a wrong password does) with wrong passwords.
    const signIns = Array.from({ length: SIGN_INS }, async () => {
      const res = await raw(lb, '/auth/v1/token?grant_type=password', {
        body: { email: `nobody-${randomBytes(6).toString('hex')}@example.com`, password: 'wrong-password-1' },
      });
      pending -= 1;
      return res;
    });
    // Meanwhile: health checks, one after another, until the last sign-in is answered.
    let healthAnswered = 0;
    while (pending > 0) {
      const health = await raw(lb, '/auth/v1/health');
      expect(health.status).toBe(200);
      if (pending > 0) healthAnswered += 1;
    }
    const burstMs = performance.now() - started;
    delay.disable();
    for (const res of await Promise.all(signIns)) {
      expect(res.status).toBe(400);
      expect(codeOf(res)).toBe('invalid_credentials');
    }
    const maxDelayMs = delay.max / 1e6;
    const context = `burst ${burstMs.toFixed(0)} ms, event-loop delay max ${maxDelayMs.toFixed(0)} ms, ${healthAnswered} health answers`;
    // bcrypt on the HTTP thread blocks it for whole hashes at a time, many back to back, so a health check waits
    // behind them: measured 3–4 answers in the whole burst, and the loop stalled for 525–670 ms at a time (more than
    // one sign-in's share of the burst). Off the thread the server answers a health check in a millisecond or so
    // while each hash takes tens of milliseconds: measured ~500 answers, no stall near one hash. Both figures are
    // relative to the burst itself, so a slow or busy machine scales them alike.
    expect(healthAnswered, context).toBeGreaterThanOrEqual(5 * SIGN_INS);
    expect(maxDelayMs, context).toBeLessThan(burstMs / SIGN_INS);
  });
});

describe('hash compatibility', () => {
  it('a new password is stored as $2a$ cost 10 (as GoTrue does) and pgcrypto crypt() verifies it', async () => {
    const email = uniqueEmail('pgcrypto');
    const { error } = await anonClient(lb).auth.signUp({ email, password: PASSWORD });
    expect(error).toBeNull();
    const { rows } = await lb.db.query<{ hash: string; ok: boolean }>(
      'select encrypted_password as hash, extensions.crypt($2, encrypted_password) = encrypted_password as ok from auth.users where email = $1',
      [email, PASSWORD],
    );
    expect(rows[0]?.hash).toMatch(/^\$2a\$10\$[./A-Za-z0-9]{53}$/);
    expect(rows[0]?.ok).toBe(true);
  });

  it('a password changed by the user and one set by the admin API verify with pgcrypto too', async () => {
    const user = await createUser('first-password-1');
    const { error } = await serviceClient(lb).auth.admin.updateUserById(user.id, { password: 'second-password-2' });
    expect(error).toBeNull();
    const { rows } = await lb.db.query<{ ok: boolean }>(
      'select extensions.crypt($2, encrypted_password) = encrypted_password as ok from auth.users where id = $1',
      [user.id, 'second-password-2'],
    );
    expect(rows[0]?.ok).toBe(true);
    expect(await signIn(user.email, 'second-password-2')).toEqual({ ok: true, code: undefined });
  });

  it('signs in with hashes made elsewhere: pgcrypto ($2a$, as supabase/seed.sql), earlier localbase ($2b$), PHP ($2y$)', async () => {
    const pgcryptoUser = await createUser('placeholder-1');
    await lb.db.query("update auth.users set encrypted_password = extensions.crypt($2, extensions.gen_salt('bf', 10)) where id = $1", [
      pgcryptoUser.id,
      'seeded-password-1',
    ]);
    expect(await signIn(pgcryptoUser.email, 'seeded-password-1')).toEqual({ ok: true, code: undefined });
    expect((await signIn(pgcryptoUser.email, 'seeded-password-2')).code).toBe('invalid_credentials');

    // Made by bcryptjs 3 (localbase before decision 019) for 'old-localbase-password-1'; $2y$ is the same hash
    // under PHP's label.
    const bcryptjsHash = '$2b$10$6B8WokYscZdFqv7TF.K/fO0NljUfW6Jdo3b0Hz0q25TZVYzKNg4k6';
    for (const hash of [bcryptjsHash, bcryptjsHash.replace('$2b$', '$2y$')]) {
      const user = await createUser('placeholder-1');
      await lb.db.query('update auth.users set encrypted_password = $2 where id = $1', [user.id, hash]);
      expect(await signIn(user.email, 'old-localbase-password-1'), hash).toEqual({ ok: true, code: undefined });
      expect((await signIn(user.email, 'old-localbase-password-2')).code).toBe('invalid_credentials');
    }
  });

  it('a malformed stored hash is no match (400 invalid_credentials), not a server error', async () => {
    const user = await createUser('placeholder-1');
    for (const hash of ['', 'not-a-hash', '$2a$10$short', '$2a$99$' + 'a'.repeat(53)]) {
      await lb.db.query('update auth.users set encrypted_password = $2 where id = $1', [user.id, hash]);
      const res = await raw(lb, '/auth/v1/token?grant_type=password', { body: { email: user.email, password: 'placeholder-1' } });
      expect(res.status, `${hash}: ${res.text}`).toBe(400);
      expect(codeOf(res)).toBe('invalid_credentials');
    }
  });
});
