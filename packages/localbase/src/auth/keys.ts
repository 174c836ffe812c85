// JWT signing keys: a JWK set like GoTrue's GOTRUE_JWT_KEYS / the Supabase CLI's signing_keys_path file
// (docs/decisions/029-asymmetric-signing-keys.md). The key whose key_ops include "sign" signs access tokens; every
// key verifies; the public parts of the asymmetric ones are published at /auth/v1/.well-known/jwks.json.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { exportJWK, generateKeyPair } from 'jose';
import type { JWK } from 'jose';

export type SigningAlg = 'ES256' | 'RS256';
export const SIGNING_ALGS: readonly string[] = ['ES256', 'RS256'];

/** A JWK as kept in the key file: private parts included; `localbase_state` marks the standby / retired keys. */
export interface StoredJwk extends JWK {
  localbase_state?: 'standby' | 'previous';
  /** previous keys: when they stopped signing (unix seconds) */
  localbase_retired_at?: number;
}

/** A new private key as `supabase gen signing-key` writes it: kid, alg, use sig, key_ops. */
export async function generateSigningKey(alg: SigningAlg = 'ES256', keyOps: string[] = ['sign', 'verify']): Promise<StoredJwk> {
  const { privateKey } = await generateKeyPair(alg, { extractable: true });
  const jwk = await exportJWK(privateKey);
  return { kid: crypto.randomUUID(), alg, use: 'sig', key_ops: keyOps, ...jwk, ext: true };
}

/** A fresh set: the current key (signs) and a standby (published, becomes current at the next rotation). */
export async function generateKeySet(alg: SigningAlg = 'ES256'): Promise<StoredJwk[]> {
  return [await generateSigningKey(alg), { ...(await generateSigningKey(alg, ['verify'])), localbase_state: 'standby' }];
}

/** The members a public JWK may carry: everything else (d, p, q, dp, dq, qi, k, oth, our own) stays out. */
const PUBLIC_MEMBERS = ['kty', 'crv', 'x', 'y', 'n', 'e'] as const;

/** The public JWK of an asymmetric key (undefined for symmetric ones, which are never published). */
export function publicJwk(jwk: JWK): JWK | undefined {
  if (jwk.kty !== 'EC' && jwk.kty !== 'RSA') return undefined;
  const out: JWK = {};
  for (const m of PUBLIC_MEMBERS) if (jwk[m] !== undefined) (out as Record<string, unknown>)[m] = jwk[m];
  if (jwk.kid) out.kid = jwk.kid;
  if (jwk.alg) out.alg = jwk.alg;
  out.use = 'sig';
  out.key_ops = ['verify'];
  return out;
}

/** Reads a key file: a JSON array of JWKs (the Supabase CLI's format) or a JWK set `{ "keys": [...] }`. */
export function parseKeyFile(text: string, file: string): StoredJwk[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new Error(`${file}: not JSON (expected an array of JWKs)`);
  }
  const keys = Array.isArray(parsed) ? parsed : (parsed as { keys?: unknown } | null)?.keys;
  if (!Array.isArray(keys) || keys.length === 0) throw new Error(`${file}: expected a non-empty array of JWKs`);
  for (const k of keys as StoredJwk[]) {
    if (!k || typeof k !== 'object' || typeof k.kty !== 'string') throw new Error(`${file}: every key needs a "kty"`);
    if (!k.kid) throw new Error(`${file}: every key needs a "kid"`);
    const alg = k.alg ?? (k.kty === 'oct' ? 'HS256' : undefined);
    if (alg !== 'ES256' && alg !== 'RS256' && alg !== 'HS256')
      throw new Error(`${file}: key ${k.kid}: alg must be ES256, RS256 or HS256`);
  }
  const signing = (keys as StoredJwk[]).filter((k) => k.key_ops?.includes('sign')).length;
  if (signing === 0) throw new Error(`${file}: no key has "sign" in its key_ops (the key that signs tokens)`);
  if (signing > 1) throw new Error(`${file}: ${signing} keys have "sign" in their key_ops, only 1 signing key is supported`);
  return keys as StoredJwk[];
}

/**
 * Writes a key file so a crash never leaves a torn one: a temp file (mode 0600) beside it, fsync, then rename
 * (`exclusive`: link instead, which fails when another process created the file first), then fsync the folder.
 * Returns false when `exclusive` and the file already existed.
 */
export function writeKeyFile(file: string, keys: StoredJwk[], opts: { exclusive?: boolean } = {}): boolean {
  const dir = path.dirname(file);
  fs.mkdirSync(dir, { recursive: true });
  const tmp = path.join(dir, `.${path.basename(file)}.${process.pid}.${crypto.randomBytes(4).toString('hex')}.tmp`);
  const fd = fs.openSync(tmp, 'wx', 0o600);
  try {
    fs.writeFileSync(fd, JSON.stringify(keys, null, 2) + '\n');
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  try {
    if (opts.exclusive) {
      try {
        fs.linkSync(tmp, file);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
        throw err;
      }
    } else {
      fs.renameSync(tmp, file);
    }
  } finally {
    fs.rmSync(tmp, { force: true });
  }
  try {
    const dfd = fs.openSync(dir, 'r');
    try {
      fs.fsyncSync(dfd);
    } finally {
      fs.closeSync(dfd);
    }
  } catch {
    /* some file systems cannot fsync a folder */
  }
  return true;
}

/** The key file's keys, created (ES256 current + standby) when it does not exist yet. */
export async function loadOrCreateKeyFile(file: string): Promise<StoredJwk[]> {
  if (!fs.existsSync(file)) {
    writeKeyFile(file, await generateKeySet('ES256'), { exclusive: true });
  }
  return parseKeyFile(fs.readFileSync(file, 'utf8'), file);
}

/**
 * Rotation: the standby key becomes the current one, the current one stays for verification (previous) until
 * tokens signed with it have expired, a new standby is made; previous keys retired more than `maxTokenAge`
 * seconds ago are dropped.
 */
export async function rotateKeys(
  keys: StoredJwk[],
  opts: { maxTokenAge: number; alg?: SigningAlg; now?: number },
): Promise<{ keys: StoredJwk[]; current: StoredJwk; retired?: StoredJwk; dropped: string[] }> {
  const now = opts.now ?? Math.floor(Date.now() / 1000);
  const currentIdx = keys.findIndex((k) => k.key_ops?.includes('sign'));
  const old = currentIdx >= 0 ? keys[currentIdx] : undefined;
  const oldAlg: SigningAlg = old?.alg === 'RS256' ? 'RS256' : 'ES256';
  const alg: SigningAlg = opts.alg ?? oldAlg;
  const standbyIdx = keys.findIndex((k) => k.localbase_state === 'standby' && k.alg === alg && (k.d !== undefined));
  const standby = standbyIdx >= 0 ? keys[standbyIdx]! : await generateSigningKey(alg, ['verify']);
  const { localbase_state: _s, localbase_retired_at: _r, ...rest } = standby;
  const current: StoredJwk = { ...rest, key_ops: ['sign', 'verify'] };
  const retired: StoredJwk | undefined = old
    ? { ...old, key_ops: ['verify'], localbase_state: 'previous', localbase_retired_at: now }
    : undefined;
  const dropped: string[] = [];
  const others = keys.filter((k, i) => {
    if (i === currentIdx || i === standbyIdx) return false;
    if (k.localbase_state === 'standby') return true; // a standby of another algorithm stays a standby
    if (typeof k.localbase_retired_at === 'number' && k.localbase_retired_at + opts.maxTokenAge < now) {
      dropped.push(k.kid ?? '');
      return false;
    }
    return true;
  });
  const newStandby: StoredJwk = { ...(await generateSigningKey(alg, ['verify'])), localbase_state: 'standby' };
  return { keys: [current, newStandby, ...(retired ? [retired] : []), ...others], current, retired, dropped };
}
