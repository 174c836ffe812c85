// Asymmetric signing keys (docs/decisions/029-asymmetric-signing-keys.md): access tokens are signed ES256 with a
// kid, the JWKS lists the public keys (current, standby, previous; never private parts or symmetric keys), the
// official client's getClaims() verifies locally, the legacy HS256 secret still verifies, the key set survives a
// restart, RS256 works from a key file, and a rotation keeps tokens of the previous key valid.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createClient } from '@supabase/supabase-js';
import { SignJWT, createRemoteJWKSet, decodeProtectedHeader, generateKeyPair, jwtVerify } from 'jose';
import type { JWK } from 'jose';
import { DEFAULT_ANON_KEY, DEFAULT_SERVICE_ROLE_KEY, DEFAULT_PUBLISHABLE_KEY } from '../src/index.ts';
import { generateSigningKey } from '../src/auth/keys.ts';
import {
  PASSWORD,
  codeOf,
  fixturesDir,
  jwtPayload,
  raw,
  serviceClient,
  startTestServer,
  uniqueEmail,
  type Localbase,
} from './helpers.ts';
import { cliPath, nodeBin, runCli } from './cli.ts';

const migrationsDir = path.join(fixturesDir, 'migrations-good');
const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'k', 'oth'];

async function signIn(lb: Localbase): Promise<{ access_token: string }> {
  const email = uniqueEmail('keys');
  const created = await serviceClient(lb).auth.admin.createUser({ email, password: PASSWORD, email_confirm: true });
  if (created.error) throw created.error;
  const res = await raw(lb, '/auth/v1/token?grant_type=password', { body: { email, password: PASSWORD } });
  expect(res.status, res.text).toBe(200);
  return res.json as { access_token: string };
}

async function jwks(lb: Localbase): Promise<JWK[]> {
  const res = await raw(lb, '/auth/v1/.well-known/jwks.json');
  expect(res.status).toBe(200);
  return (res.json as { keys: JWK[] }).keys;
}

/**
 * The token's signature passes on a restarted server: /rest/v1 answers, /auth/v1/user refuses it only because an
 * in-memory database forgot the user (never bad_jwt).
 */
async function expectSignatureAccepted(lb: Localbase, token: string): Promise<void> {
  expect((await raw(lb, '/rest/v1/things?select=id', { bearer: token })).status).toBe(200);
  const res = await raw(lb, '/auth/v1/user', { bearer: token });
  if (res.status !== 200) expect(codeOf(res), res.text).toBe('user_not_found');
}

const tmpDirs: string[] = [];
function tmpDir(): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'localbase-keys-'));
  tmpDirs.push(d);
  return d;
}
afterAll(() => {
  for (const d of tmpDirs) fs.rmSync(d, { recursive: true, force: true });
});

describe('a new server (ES256 by default)', () => {
  let lb: Localbase;
  beforeAll(async () => {
    lb = await startTestServer({ migrationsDir });
  });
  afterAll(async () => {
    await lb?.stop();
  });

  it('signs access tokens ES256 with the kid of a key the JWKS publishes, without private parts', async () => {
    const { access_token } = await signIn(lb);
    const header = decodeProtectedHeader(access_token);
    expect(header.alg).toBe('ES256');
    expect(header.kid).toBeTypeOf('string');
    const keys = await jwks(lb);
    expect(keys.length).toBe(2); // current + standby
    expect(keys.map((k) => k.kid)).toContain(header.kid);
    for (const k of keys) {
      expect(k.kty).toBe('EC');
      expect(k.alg).toBe('ES256');
      expect(k.key_ops).toEqual(['verify']);
      for (const m of PRIVATE_MEMBERS) expect(k).not.toHaveProperty(m);
      expect(Object.keys(k).some((m) => m.startsWith('localbase'))).toBe(false);
    }
  });

  it("the official client's getClaims() verifies the token locally: no call to /auth/v1/user", async () => {
    const email = uniqueEmail('claims');
    await serviceClient(lb).auth.admin.createUser({ email, password: PASSWORD, email_confirm: true });
    const calls: string[] = [];
    const spy = vi.fn((input: RequestInfo | URL, init?: RequestInit) => {
      calls.push(typeof input === 'string' ? input : input instanceof URL ? input.href : input.url);
      return fetch(input, init);
    });
    const client = createClient(lb.url, lb.anonKey, {
      auth: { persistSession: false, autoRefreshToken: false, detectSessionInUrl: false },
      global: { fetch: spy },
    });
    const { error } = await client.auth.signInWithPassword({ email, password: PASSWORD });
    expect(error).toBeNull();
    calls.length = 0;
    const first = await client.auth.getClaims();
    expect(first.error).toBeNull();
    expect(first.data?.claims.email).toBe(email);
    expect(first.data?.header.alg).toBe('ES256');
    expect(calls.some((u) => u.includes('/auth/v1/user'))).toBe(false);
    expect(calls.filter((u) => u.includes('/.well-known/jwks.json')).length).toBeLessThanOrEqual(1);
    // The JWKS is cached: a second call makes no request at all.
    calls.length = 0;
    const second = await client.auth.getClaims();
    expect(second.error).toBeNull();
    expect(calls).toEqual([]);
  });

  it('the key set is public, as on hosted Supabase: a third-party verifier fetches it without an apikey', async () => {
    const open = await raw(lb, '/auth/v1/.well-known/jwks.json', { apikey: null });
    expect(open.status, open.text).toBe(200);
    expect((open.json as { keys: JWK[] }).keys.length).toBeGreaterThan(0);
    // jose's remote key set sends no Supabase headers at all.
    const { access_token } = await signIn(lb);
    const keySet = createRemoteJWKSet(new URL(`${lb.url}/auth/v1/.well-known/jwks.json`));
    const { payload } = await jwtVerify(access_token, keySet, { audience: 'authenticated' });
    expect(payload.role).toBe('authenticated');
    // Only reading it is open: the rest of /auth/v1 still asks for a key.
    expect((await raw(lb, '/auth/v1/.well-known/jwks.json', { apikey: null, method: 'POST', body: {} })).status).toBe(401);
    expect((await raw(lb, '/auth/v1/settings', { apikey: null })).status).toBe(401);
  });

  it('ES256 user tokens work on /auth/v1/user and /rest/v1; a token of an unknown key is refused', async () => {
    const { access_token } = await signIn(lb);
    expect((await raw(lb, '/auth/v1/user', { bearer: access_token })).status).toBe(200);
    expect((await raw(lb, '/rest/v1/things?select=id', { bearer: access_token })).status).toBe(200);
    // Same claims, same kid, signed by another ES256 key: refused by both.
    const { privateKey } = await generateKeyPair('ES256');
    const forged = await new SignJWT(jwtPayload(access_token))
      .setProtectedHeader({ alg: 'ES256', kid: decodeProtectedHeader(access_token).kid!, typ: 'JWT' })
      .sign(privateKey);
    const auth = await raw(lb, '/auth/v1/user', { bearer: forged });
    expect([auth.status, codeOf(auth)]).toEqual([403, 'bad_jwt']);
    expect((await raw(lb, '/rest/v1/things?select=id', { bearer: forged })).status).toBe(401);
    // An ES256 token claiming the HS256 secret's place (no kid) is refused too.
    const noKid = await new SignJWT(jwtPayload(access_token)).setProtectedHeader({ alg: 'ES256', typ: 'JWT' }).sign(privateKey);
    expect((await raw(lb, '/auth/v1/user', { bearer: noKid })).status).toBe(403);
  });

  it('the legacy HS256 keys still work as API keys and bearer tokens; the opaque keys too', async () => {
    for (const key of [DEFAULT_ANON_KEY, DEFAULT_SERVICE_ROLE_KEY]) {
      const res = await raw(lb, '/rest/v1/things?select=id', { apikey: key, bearer: key });
      expect(res.status, res.text).toBe(200);
    }
    expect((await raw(lb, '/rest/v1/things?select=id', { apikey: DEFAULT_PUBLISHABLE_KEY })).status).toBe(200);
    const users = await raw(lb, '/auth/v1/admin/users', { apikey: DEFAULT_SERVICE_ROLE_KEY, bearer: DEFAULT_SERVICE_ROLE_KEY });
    expect(users.status, users.text).toBe(200);
  });
});

describe('the key file', () => {
  it('is created once (mode 0600) beside the data folder and kept across restarts; rotation keeps old tokens valid', async () => {
    const dir = tmpDir();
    const file = path.join(dir, 'signing_keys.json');
    const opts = { migrationsDir, signingKeysPath: file };
    let lb = await startTestServer(opts);
    let token: string;
    let firstKid: string;
    try {
      token = (await signIn(lb)).access_token;
      firstKid = decodeProtectedHeader(token).kid!;
    } finally {
      await lb.stop();
    }
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(fs.readdirSync(dir)).toEqual(['signing_keys.json']); // no temp file left
    const stored = JSON.parse(fs.readFileSync(file, 'utf8')) as JWK[];
    expect(stored[0]!.kid).toBe(firstKid);
    const standbyKid = stored[1]!.kid;

    lb = await startTestServer(opts);
    try {
      expect(decodeProtectedHeader((await signIn(lb)).access_token).kid).toBe(firstKid);
      await expectSignatureAccepted(lb, token);
    } finally {
      await lb.stop();
    }

    // localbase keys rotate: the standby signs, the old key stays published and verifying.
    // gen signing-key --append replaces the standby; keys rotate makes it the current key.
    const cli = (...args: string[]) => execFileSync(nodeBin, [cliPath, ...args, '--signing-keys-path', file], { encoding: 'utf8' });
    const appendedKid = /standby key (\S+)/.exec(cli('gen', 'signing-key', '--append'))?.[1];
    expect(appendedKid).toBeTypeOf('string');
    expect(cli('keys', 'rotate')).toContain(appendedKid);
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    lb = await startTestServer(opts);
    try {
      expect(decodeProtectedHeader((await signIn(lb)).access_token).kid).toBe(appendedKid);
      const kids = (await jwks(lb)).map((k) => k.kid);
      expect(kids).toHaveLength(3); // current, new standby, previous
      expect(kids).toContain(firstKid);
      expect(kids).not.toContain(standbyKid);
      await expectSignatureAccepted(lb, token);
    } finally {
      await lb.stop();
    }
  }, 90_000); // three starts and two CLI runs: past 30 s on a busy 2-core machine

  it('keys rotate with a --data-dir or --signing-keys-path that has no key file says so (exit 1) and creates none', () => {
    // A mistyped path used to "rotate" a key file made there and then, telling the operator to restart a server whose
    // keys had not changed.
    const dir = tmpDir();
    const r = runCli(['keys', 'rotate', '--data-dir', path.join(dir, 'typo')]);
    expect(r.code, r.stdout).toBe(1);
    expect(r.stderr).toContain(path.join(dir, 'typo.signing_keys.json'));
    expect(r.stderr).toMatch(/no signing keys file/);
    const other = runCli(['keys', 'rotate', '--signing-keys-path', path.join(dir, 'keys.json')]);
    expect(other.code, other.stdout).toBe(1);
    expect(fs.readdirSync(dir)).toEqual([]);
  });

  it('by default lives beside the data folder (<data-dir>.signing_keys.json), outside it', async () => {
    const dataDir = path.join(tmpDir(), 'data');
    const lb = await startTestServer({ migrationsDir, memory: false, dataDir });
    try {
      expect(lb.signingKeysPath).toBe(`${dataDir}.signing_keys.json`);
      const stored = JSON.parse(fs.readFileSync(`${dataDir}.signing_keys.json`, 'utf8')) as JWK[];
      expect(decodeProtectedHeader((await signIn(lb)).access_token).kid).toBe(stored[0]!.kid);
    } finally {
      await lb.stop();
    }
  });

  it('RS256 from a supplied file (and an HS256 JWK, which verifies but is never published)', async () => {
    const file = path.join(tmpDir(), 'keys.json');
    const rsa = await generateSigningKey('RS256');
    const secret = randomBytes(32);
    const oct = { kty: 'oct', k: secret.toString('base64url'), kid: 'legacy-oct', alg: 'HS256', key_ops: ['verify'] };
    fs.writeFileSync(file, JSON.stringify([rsa, oct]));
    const lb = await startTestServer({ migrationsDir, signingKeysPath: file });
    try {
      const { access_token } = await signIn(lb);
      expect(decodeProtectedHeader(access_token)).toMatchObject({ alg: 'RS256', kid: rsa.kid });
      const keys = await jwks(lb);
      expect(keys.map((k) => k.kid)).toEqual([rsa.kid]);
      for (const m of PRIVATE_MEMBERS) expect(keys[0]).not.toHaveProperty(m);
      expect((await raw(lb, '/rest/v1/things?select=id', { bearer: access_token })).status).toBe(200);
      const viaOct = await new SignJWT(jwtPayload(access_token))
        .setProtectedHeader({ alg: 'HS256', kid: 'legacy-oct', typ: 'JWT' })
        .sign(secret);
      expect((await raw(lb, '/auth/v1/user', { bearer: viaOct })).status).toBe(200);
    } finally {
      await lb.stop();
    }
  });
});
