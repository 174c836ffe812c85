import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SignJWT, decodeProtectedHeader } from 'jose';
import { generateKeySet, loadOrCreateKeyFile, parseKeyFile, publicJwk, rotateKeys, writeKeyFile } from './keys.ts';
import { JwtKeys } from './tokens.ts';

const SECRET = 'super-secret-jwt-token-with-at-least-32-characters-long';
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'localbase-keys-unit-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('signing keys', () => {
  it('a new set: ES256 current (sign) and standby (verify), both published without private members', async () => {
    const keys = await generateKeySet();
    expect(keys.map((k) => [k.alg, k.key_ops, k.localbase_state])).toEqual([
      ['ES256', ['sign', 'verify'], undefined],
      ['ES256', ['verify'], 'standby'],
    ]);
    const jwt = new JwtKeys(SECRET, keys);
    const { keys: published } = await jwt.publicJwks();
    expect(published.map((k) => k.kid)).toEqual(keys.map((k) => k.kid));
    expect(published.every((k) => k.d === undefined && !('localbase_state' in k))).toBe(true);
    expect(publicJwk({ kty: 'oct', k: 'c2VjcmV0', kid: 'x' })).toBeUndefined();
  });

  it('signs with the current kid and verifies it; the legacy secret still verifies HS256', async () => {
    const keys = await generateKeySet();
    const jwt = new JwtKeys(SECRET, keys);
    const token = await jwt.sign({ sub: 'a', exp: Math.floor(Date.now() / 1000) + 60 });
    expect(decodeProtectedHeader(token)).toMatchObject({ alg: 'ES256', kid: keys[0]!.kid });
    expect((await jwt.verify(token)).sub).toBe('a');
    const legacy = await new JwtKeys(SECRET).sign({ sub: 'b' });
    expect((await jwt.verify(legacy)).sub).toBe('b');
    // another set's token with a kid we do not know is refused
    const other = await new JwtKeys(SECRET, await generateKeySet()).sign({ sub: 'c' });
    await expect(jwt.verify(other)).rejects.toMatchObject({ code: 'bad_jwt' });
    // as GoTrue: an HS256 token signed with the legacy secret but naming an unknown kid is refused
    const withKid = await new SignJWT({ sub: 'd' })
      .setProtectedHeader({ alg: 'HS256', kid: 'nope' })
      .sign(new TextEncoder().encode(SECRET));
    await expect(jwt.verify(withKid)).rejects.toMatchObject({ code: 'bad_jwt' });
  });

  it('rotation: standby → current, old current kept as previous, new standby; old previous keys dropped after expiry', async () => {
    const keys = await generateKeySet();
    const r1 = await rotateKeys(keys, { maxTokenAge: 3600, now: 1000 });
    expect(r1.current.kid).toBe(keys[1]!.kid);
    expect(r1.keys.map((k) => k.key_ops?.includes('sign'))).toEqual([true, false, false]);
    expect(r1.keys[2]).toMatchObject({ kid: keys[0]!.kid, localbase_state: 'previous', localbase_retired_at: 1000 });
    const r2 = await rotateKeys(r1.keys, { maxTokenAge: 3600, now: 2000 });
    expect(r2.keys).toHaveLength(4);
    const r3 = await rotateKeys(r2.keys, { maxTokenAge: 3600, now: 5000 });
    expect(r3.dropped).toEqual([keys[0]!.kid]);
    const r4 = await rotateKeys(r3.keys, { maxTokenAge: 3600, now: 5000, alg: 'RS256' });
    expect(r4.current.alg).toBe('RS256');
  });

  it('the file: created once with mode 0600, never replaced by a second creator; bad files are refused', async () => {
    const file = path.join(dir, 'k.json');
    const a = await loadOrCreateKeyFile(file);
    const b = await loadOrCreateKeyFile(file);
    expect(b).toEqual(a);
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(writeKeyFile(file, await generateKeySet(), { exclusive: true })).toBe(false);
    expect(parseKeyFile(fs.readFileSync(file, 'utf8'), file)).toEqual(a);
    expect(fs.readdirSync(dir)).toEqual(['k.json']);
    expect(() => parseKeyFile('[{"kty":"EC","kid":"x","alg":"ES256","key_ops":["verify"]}]', 'f')).toThrow(/sign/);
    expect(() => parseKeyFile('{', 'f')).toThrow(/JSON/);
    const two = (await generateKeySet()).map((k) => ({ ...k, key_ops: ['sign', 'verify'] }));
    expect(() => parseKeyFile(JSON.stringify(two), 'f')).toThrow(/only 1 signing key/);
  });
});
