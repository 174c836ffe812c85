import crypto from 'node:crypto';
import { SignJWT, jwtVerify, errors as joseErrors } from 'jose';
import type { JWTPayload } from 'jose';
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

export class JwtKeys {
  readonly secret: Uint8Array;
  constructor(secret: string) {
    this.secret = new TextEncoder().encode(secret);
  }

  sign(claims: Record<string, unknown>): Promise<string> {
    return new SignJWT(claims as JWTPayload).setProtectedHeader({ alg: 'HS256', typ: 'JWT' }).sign(this.secret);
  }

  /**
   * Verifies an HS256 token signed with our secret; anything else (alg none, other keys, expired) throws bad_jwt.
   * `requireExp`: a token without a numeric `exp` is refused too (user access tokens must expire; API keys may
   * omit it — docs/decisions/018-tokens-without-exp.md).
   */
  async verify(token: string, opts: { requireExp?: boolean } = {}): Promise<JWTPayload> {
    try {
      const { payload } = await jwtVerify(token, this.secret, {
        algorithms: ['HS256'],
        requiredClaims: opts.requireExp ? ['exp'] : undefined,
      });
      return payload;
    } catch (err) {
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
  }
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
