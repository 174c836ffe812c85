// Which claims a Realtime socket or channel acts with, and the Realtime server's own wording for a token it refuses.
import { decodeJwt } from 'jose';
import type { JwtKeys } from '../auth/tokens.ts';
import type { ApiKeyRole } from '../http/app.ts';

export type Claims = Record<string, unknown> & { role: string; exp?: number };

/** A token Realtime refuses: `code` is the upstream error name, `message` its text (both reach the client). */
export class RealtimeTokenError extends Error {
  readonly code: string;
  constructor(code: string, message: string) {
    super(message);
    this.code = code;
  }
  /** The join-reply reason, "Code: message". */
  get reason(): string {
    return `${this.code}: ${this.message}`;
  }
}

export const MISSING_CLAIMS = 'Fields `role` and `exp` are required in JWT';

export class RealtimeTokens {
  readonly #jwt: JwtKeys;
  readonly #keys: Map<string, ApiKeyRole>;
  readonly #now: () => number;

  constructor(jwt: JwtKeys, keys: Map<string, ApiKeyRole>, now: () => number = Date.now) {
    this.#jwt = jwt;
    this.#keys = keys;
    this.#now = now;
  }

  /**
   * The apikey of a socket or REST call: one of the fixed keys (opaque `sb_…` keys included, mapped to their role as
   * Supabase's gateway does), or a JWT with an anon / service_role role signed by our keys. API keys may omit `exp`
   * (decision 018); an expired one is refused.
   */
  async apiKey(key: string | undefined | null): Promise<Claims> {
    if (!key) throw new RealtimeTokenError('InvalidJWTToken', 'API key is missing');
    const fixed = this.#keys.get(key);
    if (fixed) return this.#fixedKeyClaims(key, fixed);
    const claims = await this.#verify(key, false);
    if (claims.role !== 'anon' && claims.role !== 'service_role')
      throw new RealtimeTokenError('InvalidJWTToken', 'The API key is not an anon or service_role key');
    return claims;
  }

  /** A user's access token (or a key given as one): `role` and `exp` are required, as upstream. */
  async accessToken(token: string): Promise<Claims> {
    const fixed = this.#keys.get(token);
    if (fixed) return this.#fixedKeyClaims(token, fixed);
    return this.#verify(token, true);
  }

  async #fixedKeyClaims(key: string, role: ApiKeyRole): Promise<Claims> {
    if (key.startsWith('sb_')) return { role };
    // The legacy JWT keys carry their own claims (iss, exp…).
    return this.#verify(key, false).catch(() => ({ role }) as Claims);
  }

  async #verify(token: string, requireExp: boolean): Promise<Claims> {
    let decoded: Record<string, unknown>;
    try {
      decoded = decodeJwt(token);
    } catch {
      throw new RealtimeTokenError('MalformedJWT', 'The token provided is not a valid JWT');
    }
    try {
      await this.#jwt.verify(token);
    } catch (err) {
      if (err instanceof Error && err.message.includes('token is expired') && typeof decoded.exp === 'number') {
        const ago = Math.max(0, Math.floor(this.#now() / 1000) - decoded.exp);
        throw new RealtimeTokenError('InvalidJWTToken', `Token has expired ${ago} seconds ago`);
      }
      throw new RealtimeTokenError('JwtSignatureError', 'Failed to validate JWT signature');
    }
    if (typeof decoded.role !== 'string' || (requireExp && typeof decoded.exp !== 'number'))
      throw new RealtimeTokenError('InvalidJWTToken', MISSING_CLAIMS);
    return decoded as Claims;
  }
}
