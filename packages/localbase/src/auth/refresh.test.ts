import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadOrBuildTemplate, openPGlite } from '../db/pglite.ts';
import { BOOTSTRAP_SQL } from '../db/bootstrap.ts';
import type { Database } from '../db/types.ts';
import { resolveConfig } from '../index.ts';
import { AuthService } from './service.ts';
import { ApiError } from '../http/errors.ts';

let db: Database;
let svc: AuthService;

beforeAll(async () => {
  const cfg = resolveConfig({ memory: true, quiet: true });
  const tpl = await loadOrBuildTemplate(path.join(cfg.cacheDir), BOOTSTRAP_SQL);
  db = await openPGlite({ loadDataDir: tpl.blob });
  svc = new AuthService(db, cfg, 'http://127.0.0.1:1');
}, 60_000);
afterAll(async () => {
  await db?.close();
});

async function signIn(email: string): Promise<{ rt: string; sessionId: string }> {
  return db.transaction(async (tx) => {
    const u = await svc.createUser(tx, { email, passwordHash: null, confirmed: true });
    const { session, refreshToken } = await svc.createSession(tx, String(u.id), 'password');
    return { rt: refreshToken, sessionId: String(session.id) };
  });
}

async function refreshError(rt: string): Promise<string> {
  try {
    await svc.refresh(rt);
  } catch (err) {
    if (err instanceof ApiError) return err.code;
    throw err;
  }
  return 'no error';
}

/** Moves every revocation of the session further into the past than the reuse interval. */
async function ageRevocations(sessionId: string): Promise<void> {
  await db.query(
    "update auth.refresh_tokens set updated_at = now() - interval '1 minute' where session_id = $1 and revoked",
    [sessionId],
  );
}

describe('refresh token rotation', () => {
  it('rotates on each use; the parent of the active token replays to the active one', async () => {
    const { rt: rt0 } = await signIn('rotate@example.com');
    const r1 = await svc.refresh(rt0);
    expect(r1.refresh_token).not.toBe(rt0);
    expect(r1.refresh_token).toMatch(/^[a-z2-7]{12}$/);
    const again = await svc.refresh(rt0);
    expect(again.refresh_token).toBe(r1.refresh_token);
    const r2 = await svc.refresh(r1.refresh_token);
    expect(r2.refresh_token).not.toBe(r1.refresh_token);
  });

  it('tolerates reuse of an older token within the reuse interval', async () => {
    const { rt: rt0 } = await signIn('window@example.com');
    const r1 = await svc.refresh(rt0);
    await svc.refresh(r1.refresh_token);
    const reuse = await svc.refresh(rt0); // grandparent, revoked a moment ago
    expect(reuse.refresh_token).toMatch(/^[a-z2-7]{12}$/);
  });

  it('later reuse revokes the whole family: refresh_token_already_used, also for the active token', async () => {
    const { rt: rt0, sessionId } = await signIn('family@example.com');
    const r1 = await svc.refresh(rt0);
    const r2 = await svc.refresh(r1.refresh_token);
    await ageRevocations(sessionId);
    expect(await refreshError(rt0)).toBe('refresh_token_already_used');
    expect(await refreshError(r2.refresh_token)).toBe('refresh_token_already_used');
    expect(await refreshError(r1.refresh_token)).toBe('refresh_token_already_used');
  });

  it('unknown tokens and tokens of deleted sessions are not found', async () => {
    expect(await refreshError('aaaaaaaaaaaa')).toBe('refresh_token_not_found');
    const { rt, sessionId } = await signIn('gone@example.com');
    await db.query('delete from auth.sessions where id = $1', [sessionId]);
    expect(await refreshError(rt)).toBe('refresh_token_not_found');
  });

  it('access tokens carry the full claim set', async () => {
    const { rt } = await signIn('claims@example.com');
    const r = await svc.refresh(rt);
    const claims = await svc.keys.verify(r.access_token);
    for (const k of ['sub', 'aud', 'role', 'email', 'phone', 'app_metadata', 'user_metadata', 'aal', 'amr', 'session_id', 'is_anonymous', 'iat', 'exp', 'iss'])
      expect(claims).toHaveProperty(k);
    expect(claims.exp! - claims.iat!).toBe(3600);
    expect(claims.aal).toBe('aal1');
    expect(claims.role).toBe('authenticated');
  });
});
