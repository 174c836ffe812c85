import crypto from 'node:crypto';
import { SignJWT, decodeJwt, importJWK, jwtVerify, errors as joseErrors } from 'jose';
import type { JWK, JWTHeaderParameters, JWTPayload } from 'jose';
import { publicJwk, type StoredJwk } from './keys.ts';
import { ApiError } from '../http/errors.ts';

export interface AmrEntry {
  method: string;
  timestamp: number;
}

export interface AccessTokenClaims extends JWTPayload {
  sub: string;
  aud: string;
  role: string;
  email: string;
  phone: string;
  app_metadata: Record<string, unknown>;
  user_metadata: Record<string, unknown>;
  aal: 'aal1' | 'aal2';
  amr: AmrEntry[];
  session_id: string;
  is_anonymous: boolean;
  iat: number;
  exp: number;
  iss: string;
}

interface PreparedKeys {
  signing: { kid: string; alg: string; key: CryptoKey | Uint8Array } | undefined;
  /** verification keys by kid (asymmetric: public parts only) */
  byKid: Map<string, { alg: string; key: CryptoKey | Uint8Array }>;
  /** the public JWK set served at /auth/v1/.well-known/jwks.json */
  jwks: { keys: JWK[] };
}

const PRIVATE_ONLY = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth'] as const;

function keyMaterial(jwk: StoredJwk, forSigning: boolean): JWK {
  const out: JWK = {};
  for (const m of ['kty', 'crv', 'x', 'y', 'n', 'e', 'k', ...PRIVATE_ONLY] as const) {
    if (!forSigning && (PRIVATE_ONLY as readonly string[]).includes(m)) continue;
    if (jwk[m] !== undefined) (out as Record<string, unknown>)[m] = jwk[m];
  }
  return out;
}

async function prepare(jwks: StoredJwk[]): Promise<PreparedKeys> {
  const byKid: PreparedKeys['byKid'] = new Map();
  const published: JWK[] = [];
  let signing: PreparedKeys['signing'];
  for (const jwk of jwks) {
    const alg = jwk.alg ?? (jwk.kty === 'oct' ? 'HS256' : '');
    const kid = jwk.kid!;
    if (!signing && jwk.key_ops?.includes('sign'))
      signing = { kid, alg, key: (await importJWK(keyMaterial(jwk, true), alg)) as CryptoKey | Uint8Array };
    byKid.set(kid, { alg, key: (await importJWK(keyMaterial(jwk, false), alg)) as CryptoKey | Uint8Array });
    const pub = publicJwk(jwk);
    if (pub) published.push(pub);
  }
  return { signing, byKid, jwks: { keys: published } };
}

/**
 * Signs and verifies tokens. With a key set (src/auth/keys.ts) its "sign" key signs, with a `kid` in the header;
 * without one (unit tests) the legacy HS256 secret signs. The legacy secret always verifies HS256 tokens without a
 * kid (the CLI's demo anon / service_role keys, tokens of older versions), as GoTrue does.
 */
export class JwtKeys {
  readonly secret: Uint8Array;
  readonly #prepared: Promise<PreparedKeys> | undefined;
  constructor(secret: string, jwks?: StoredJwk[]) {
    this.secret = new TextEncoder().encode(secret);
    this.#prepared = jwks ? prepare(jwks) : undefined;
    // surfaced on first use; keeps an unhandled rejection from killing the process before then
    this.#prepared?.catch(() => undefined);
  }

  /** The public keys (asymmetric only, never private parts). */
  async publicJwks(): Promise<{ keys: JWK[] }> {
    return this.#prepared ? (await this.#prepared).jwks : { keys: [] };
  }

  async sign(claims: Record<string, unknown>): Promise<string> {
    const s = this.#prepared ? (await this.#prepared).signing : undefined;
    if (!s) return new SignJWT(claims as JWTPayload).setProtectedHeader({ alg: 'HS256', typ: 'JWT' }).sign(this.secret);
    return new SignJWT(claims as JWTPayload).setProtectedHeader({ alg: s.alg, kid: s.kid, typ: 'JWT' }).sign(s.key);
  }

  #keyFor = async (header: JWTHeaderParameters): Promise<CryptoKey | Uint8Array> => {
    const set = this.#prepared ? await this.#prepared : undefined;
    // As GoTrue's FindPublicKeyByKid: a kid must name a key of the set; no kid = the legacy HS256 secret.
    if (header.kid !== undefined) {
      const k = set?.byKid.get(header.kid);
      if (k && k.alg === header.alg) return k.key;
    } else if (header.alg === 'HS256') return this.secret;
    throw new joseErrors.JWSSignatureVerificationFailed('no key for this token');
  };

  /**
   * Verifies a token signed by a key of the set (by kid) or an HS256 token signed with the legacy secret; anything else (alg none, other keys, expired) throws bad_jwt.
   * `requireExp`: a token without a numeric `exp` is refused too (user access tokens must expire; API keys may
   * omit it — docs/decisions/018-tokens-without-exp.md). `joseMessages`: a refusal is a plain Error with jose's
   * message, as storage answers it.
   */
  async verify(token: string, opts: { requireExp?: boolean; goTrueClaims?: boolean; joseMessages?: boolean } = {}): Promise<JWTPayload> {
    // GoTrue decodes the claims before it checks the signature (and before exp): their decoding errors come first.
    const mistyped = opts.goTrueClaims ? goTrueClaimTypeError(unverifiedClaims(token)) : undefined;
    if (mistyped) throw new ApiError(403, 'bad_jwt', `invalid JWT: unable to parse or verify signature, ${mistyped}`);
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, this.#keyFor, {
        algorithms: ['HS256', 'ES256', 'RS256'],
        requiredClaims: opts.requireExp ? ['exp'] : undefined,
      }));
    } catch (err) {
      // Storage verifies with jose too and answers its message as it is ("\"exp\" claim timestamp check failed"); a
      // token no key of ours signed fails its signature check there (it falls back to the secret).
      if (opts.joseMessages)
        throw new Error(err instanceof joseErrors.JWSSignatureVerificationFailed ? 'signature verification failed' : (err as Error).message, {
          cause: err,
        });
      let detail = 'signature is invalid';
      if (err instanceof joseErrors.JWTExpired) detail = 'token has invalid claims: token is expired';
      else if (err instanceof joseErrors.JWTClaimValidationFailed && err.claim === 'exp' && err.reason === 'missing')
        detail = 'token has invalid claims: token is missing required claim: exp claim is required';
      else if (err instanceof joseErrors.JWTClaimValidationFailed) detail = `token has invalid claims: ${err.message}`;
      else if (err instanceof joseErrors.JOSEAlgNotAllowed) detail = 'signing method none is invalid';
      else if (err instanceof joseErrors.JWSInvalid || err instanceof joseErrors.JWTInvalid)
        detail = 'token is malformed';
      throw new ApiError(403, 'bad_jwt', `invalid JWT: unable to parse or verify signature, ${detail}`);
    }
    return payload;
  }
}

/** A token's claims without verifying anything ({} when they cannot be read: verification then says why). */
export function unverifiedClaims(token: string): Record<string, unknown> {
  try {
    return decodeJwt(token);
  } catch {
    return {};
  }
}

/** GoTrue's AccessTokenClaims fields (besides the registered claims) and the JSON kind Go decodes each from. */
const GOTRUE_CLAIM_TYPES: Record<string, { kind: 'string' | 'object' | 'array' | 'bool'; goType: string }> = {
  email: { kind: 'string', goType: 'string' },
  phone: { kind: 'string', goType: 'string' },
  app_metadata: { kind: 'object', goType: 'map[string]interface {}' },
  user_metadata: { kind: 'object', goType: 'map[string]interface {}' },
  role: { kind: 'string', goType: 'string' },
  aal: { kind: 'string', goType: 'string' },
  amr: { kind: 'array', goType: '[]models.AMREntry' },
  session_id: { kind: 'string', goType: 'string' },
  is_anonymous: { kind: 'bool', goType: 'bool' },
  client_id: { kind: 'string', goType: 'string' },
  scope: { kind: 'string', goType: 'string' },
};

const jsonKind = (v: unknown): string =>
  Array.isArray(v) ? 'array' : typeof v === 'boolean' ? 'bool' : typeof v === 'object' ? 'object' : typeof v;

/** Go's isValidNumber: what encoding/json takes from a JSON string for a json.Number. */
const GO_NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/;

/**
 * GoTrue decodes a token's claims into its AccessTokenClaims struct (golang-jwt's RegisteredClaims embedded) before
 * it checks the signature; a claim Go cannot decode refuses the token with Go's message. null leaves a field empty.
 * As encoding/json:
 *
 * - a plain type mismatch (a number `sub`, a string `is_anonymous`) is remembered and decoding goes on: the first
 *   one is reported;
 * - a claim with a decoder of its own stops decoding at once: `aud` (a string or a list of strings, else golang-jwt's
 *   "invalid type for claim"), `exp`/`iat`/`nbf` (a number or a string holding one, golang-jwt's NumericDate;
 *   jose's verification still refuses a string holding a number, which GoTrue would take).
 *
 * supabase/auth internal/api/auth.go parseJWTClaims, internal/api/token.go AccessTokenClaims; golang-jwt v5 types.go.
 */
export function goTrueClaimTypeError(claims: Record<string, unknown>): string | undefined {
  const prefix = 'token is malformed: could not JSON decode claim: ';
  let first: string | undefined;
  const mismatch = (name: string, value: unknown, goType: string) =>
    (first ??= `${prefix}json: cannot unmarshal ${jsonKind(value)} into Go struct field AccessTokenClaims.${name} of type ${goType}`);
  for (const [name, value] of Object.entries(claims)) {
    if (value === null) continue;
    if (name === 'aud') {
      if (typeof value === 'string' || (Array.isArray(value) && value.every((v) => typeof v === 'string'))) continue;
      return `${prefix}invalid type for claim`;
    }
    if (name === 'exp' || name === 'iat' || name === 'nbf') {
      if (typeof value === 'number' || (typeof value === 'string' && GO_NUMBER.test(value))) continue;
      const why =
        typeof value === 'string'
          ? `invalid number literal, trying to unmarshal ${JSON.stringify(JSON.stringify(value))} into Number`
          : `cannot unmarshal ${jsonKind(value)} into Go value of type json.Number`;
      return `${prefix}could not parse NumericData: json: ${why}`;
    }
    if (name === 'iss' || name === 'sub' || name === 'jti') {
      if (typeof value !== 'string') mismatch(name, value, 'string');
      continue;
    }
    const want = GOTRUE_CLAIM_TYPES[name];
    if (want && jsonKind(value) !== want.kind) mismatch(name, value, want.goType);
  }
  return first;
}

const BASE32 = 'abcdefghijklmnopqrstuvwxyz234567';

/** GoTrue v1 refresh tokens: 12 lowercase base32 characters. */
export function newRefreshToken(): string {
  const bytes = crypto.randomBytes(12);
  let out = '';
  for (const b of bytes) out += BASE32[b & 31];
  return out;
}

/** A 6-digit one-time code for emails. */
export function newOtp(): string {
  return String(crypto.randomInt(0, 1_000_000)).padStart(6, '0');
}

/** GoTrue's email token hash: hex(sha224(email + otp)). */
export function tokenHash(email: string, otp: string): string {
  return crypto.createHash('sha224').update(email + otp).digest('hex');
}

export const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
