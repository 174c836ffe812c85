import crypto from 'node:crypto';
import type { Database, Queryable, Row } from '../db/types.ts';
import type { ResolvedConfig } from '../config.ts';
import { ApiError, validationFailed } from '../http/errors.ts';
import { RateLimiter } from './ratelimit.ts';
import { AttemptGuard } from './attempts.ts';
import { ClientAddressResolver, rateLimitKey } from '../http/ip.ts';
import { PasswordHasher } from './password.ts';
import { JwtKeys, newOtp, newRefreshToken, tokenHash, UUID_RE } from './tokens.ts';
import type { AccessTokenClaims, AmrEntry } from './tokens.ts';
import { USER_SELECT, userJson } from './format.ts';
import { composeMail, Mailbox } from '../mail/mailer.ts';
import type { MailType } from '../mail/mailer.ts';

export const MAX_PASSWORD_LENGTH = 72;
// GoTrue's format check (its mailer's ValidateFormat): a local part of letters, digits and .!#$%&'*+/=?^_`{|}~-, then
// host labels of letters, digits and inner hyphens, 1-63 characters each, separated by single dots (no dot required).
const LOCAL_PART = "[a-zA-Z0-9.!#$%&'*+/=?^_`{|}~-]+";
const HOST_LABEL = '[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?';
const EMAIL_RE = new RegExp(`^${LOCAL_PART}@${HOST_LABEL}(?:\\.${HOST_LABEL})*$`);
// A hash to compare against when the email is unknown, so both paths cost one bcrypt comparison (cost 10, as the
// real ones). A constant: no account has it, and computing it at start-up would block the thread for one hash.
const DUMMY_HASH = '$2a$10$Uz7iofOgX75.jTMgjzol9eety6v5HwEJGNIcPhEkEkqElsUvDKbsS';

export type OtpTokenType =
  | 'confirmation_token'
  | 'recovery_token'
  | 'email_change_token_new'
  | 'email_change_token_current'
  | 'reauthentication_token';

export interface PkceChallenge {
  challenge: string;
  method: 's256' | 'plain';
}

/** Reads code_challenge / code_challenge_method (null when the client uses the implicit flow). */
export function readPkce(body: Record<string, unknown>): PkceChallenge | undefined {
  const challenge = body.code_challenge;
  const method = body.code_challenge_method;
  if ((challenge === undefined || challenge === null || challenge === '') && (method === undefined || method === null || method === ''))
    return undefined;
  if (typeof challenge !== 'string' || typeof method !== 'string' || challenge.length < 43 || challenge.length > 128)
    throw validationFailed('PKCE flow requires code_challenge_method and code_challenge');
  const m = method.toLowerCase();
  if (m !== 's256' && m !== 'plain') throw validationFailed('code challenge method not supported');
  return { challenge, method: m };
}

/** RFC 7636: does the verifier match the stored challenge? */
export function pkceMatches(verifier: string, challenge: string, method: string): boolean {
  const computed = method === 'plain' ? verifier : crypto.createHash('sha256').update(verifier).digest('base64url');
  const a = Buffer.from(computed);
  const b = Buffer.from(challenge);
  return a.length === b.length && crypto.timingSafeEqual(a, b);
}

export interface TokenResponse {
  access_token: string;
  token_type: 'bearer';
  expires_in: number;
  expires_at: number;
  refresh_token: string;
  user: Record<string, unknown>;
}

export interface AuthContext {
  claims: AccessTokenClaims;
  user: Row;
  session: Row;
}

/** GoTrue lowercases an address and never trims it: surrounding spaces fail the format check (decision 174). */
export function normaliseEmail(email: string): string {
  return email.toLowerCase();
}

export function validateEmail(email: string): string {
  const e = normaliseEmail(email);
  if (e.length > 255) throw validationFailed('An email address is too long');
  if (!EMAIL_RE.test(e)) throw validationFailed('Unable to validate email address: invalid format');
  return e;
}

/** Both bounds in UTF-8 bytes, as GoTrue's `len(password)`: bcrypt reads at most 72 bytes of a password. */
export function checkPassword(password: string, minLength: number): void {
  const bytes = Buffer.byteLength(password, 'utf8');
  if (bytes > MAX_PASSWORD_LENGTH)
    throw validationFailed(`Password cannot be longer than ${MAX_PASSWORD_LENGTH} characters`);
  if (bytes < minLength)
    throw new ApiError(422, 'weak_password', `Password should be at least ${minLength} characters.`, {
      weak_password: { reasons: ['length'] },
    });
}

/** Matches a URL against a GoTrue-style allow-list glob: `*` stays within a path segment or host label, `**` crosses. */
export function globMatch(pattern: string, value: string): boolean {
  let re = '';
  for (let i = 0; i < pattern.length; i++) {
    const ch = pattern[i]!;
    if (ch === '*' && pattern[i + 1] === '*') {
      re += '.*';
      i++;
    } else if (ch === '*') re += '[^/.]*';
    else re += ch.replace(/[.+?^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${re}$`).test(value);
}

export class AuthService {
  readonly db: Database;
  readonly cfg: ResolvedConfig;
  readonly keys: JwtKeys;
  readonly mailbox: Mailbox;
  readonly apiUrl: string;
  readonly issuer: string;
  /** bcrypt off the HTTP thread (libuv's thread pool), at most cfg.passwordHashConcurrency at once. */
  readonly passwords: PasswordHasher;
  readonly limits: {
    /** email and phone sign-ups (GoTrue's Signups limiter, GOTRUE_RATE_LIMIT_OTP: the CLI's sign_in_sign_ups) */
    signUp: RateLimiter;
    /** token grants: password sign-ins and refreshes (GoTrue's Token limiter, the CLI's token_refresh) */
    token: RateLimiter;
    verify: RateLimiter;
    email: RateLimiter;
    /** anonymous sign-ins per client address per hour (GoTrue's own limiter for them) */
    anonymous: RateLimiter;
  };
  /** Per-account delays after failed sign-ins and codes (docs/decisions/017-account-guessing-defence.md). */
  readonly attempts: AttemptGuard;
  /** Who the client of a request is (trusted proxies, Sb-Forwarded-For): see src/http/ip.ts. */
  readonly clientAddresses: ClientAddressResolver;
  /** Wrong email codes per recipient since its last code was sent. */
  readonly #otpWrongTries = new Map<string, number>();

  constructor(db: Database, cfg: ResolvedConfig, apiUrl: string) {
    this.db = db;
    this.cfg = cfg;
    this.keys = new JwtKeys(cfg.jwtSecret, cfg.signingKeys);
    this.mailbox = new Mailbox({ quiet: cfg.quiet, smtp: cfg.smtp });
    this.apiUrl = apiUrl;
    this.issuer = `${apiUrl}/auth/v1`;
    this.passwords = new PasswordHasher(cfg.passwordHashConcurrency);
    const w = cfg.rateLimits.windowSeconds;
    this.limits = {
      signUp: new RateLimiter(cfg.rateLimits.signInSignUps, w),
      // GoTrue's Token limiter: every password sign-in and refresh of an address, one budget (token_refresh)
      token: new RateLimiter(cfg.rateLimits.tokenRefresh, w),
      verify: new RateLimiter(cfg.rateLimits.tokenVerifications, w),
      email: new RateLimiter(cfg.rateLimits.emailSent, w),
      anonymous: new RateLimiter(cfg.rateLimits.anonymousUsers, 3600),
    };
    this.attempts = new AttemptGuard(cfg.accountProtection, cfg.clock);
    this.clientAddresses = new ClientAddressResolver(cfg);
  }

  // ---------- rate limits ----------

  /** Counts one request of the client address `ip` (IPv6 clients by their /64). */
  limit(kind: 'signUp' | 'token' | 'verify' | 'anonymous', ip: string): void {
    const key = rateLimitKey(ip);
    if (!this.limits[kind].take(key)) {
      const err = new ApiError(429, 'over_request_rate_limit', 'Request rate limit reached');
      err.retryAfter = this.limits[kind].retryAfter(key);
      throw err;
    }
  }

  /** Counts one email for the sender IP and for the recipient. */
  limitEmail(ip: string, email: string): void {
    const keys = [`ip:${rateLimitKey(ip)}`, `to:${email}`];
    for (const key of keys) {
      if (!this.limits.email.take(key)) {
        const err = new ApiError(429, 'over_email_send_rate_limit', 'email rate limit exceeded');
        err.retryAfter = this.limits.email.retryAfter(key);
        throw err;
      }
    }
  }

  // ---------- redirects ----------

  /** redirect_to if it is the site URL's host or on the allow-list, else the site URL (GoTrue falls back silently). */
  redirectTo(requested: string | undefined | null): string {
    if (!requested) return this.cfg.siteUrl;
    // Go's url.Parse refuses control characters (GoTrue then falls back); the WHATWG parser below would drop a CR/LF
    // and pass the raw text on to a Location header, which cannot carry it.
    // eslint-disable-next-line no-control-regex
    if (/[\u0000-\u001f\u007f]/.test(requested)) return this.cfg.siteUrl;
    let u: URL;
    try {
      u = new URL(requested);
    } catch {
      return this.cfg.siteUrl;
    }
    if (u.protocol !== 'http:' && u.protocol !== 'https:') {
      // Custom app schemes only when explicitly allowed.
      return this.cfg.additionalRedirectUrls.some((p) => globMatch(p, requested)) ? requested : this.cfg.siteUrl;
    }
    try {
      if (new URL(this.cfg.siteUrl).hostname === u.hostname) return requested;
    } catch {
      /* bad site url: only the allow-list can match */
    }
    for (const pattern of this.cfg.additionalRedirectUrls) {
      if (pattern === requested || globMatch(pattern, requested)) return requested;
      // An allowed URL also allows paths below it (e.g. http://host/* style entries without a glob).
      if (!pattern.includes('*') && requested.startsWith(pattern.endsWith('/') ? pattern : pattern + '/'))
        return requested;
    }
    return this.cfg.siteUrl;
  }

  // ---------- users ----------

  async findUserByEmail(q: Queryable, email: string): Promise<Row | undefined> {
    const r = await q.query(`${USER_SELECT} where lower(u.email) = lower($1) and u.is_sso_user = false`, [email]);
    return r.rows[0];
  }

  async findUserById(q: Queryable, id: string): Promise<Row | undefined> {
    if (!UUID_RE.test(id)) return undefined;
    const r = await q.query(`${USER_SELECT} where u.id = $1`, [id]);
    return r.rows[0];
  }

  async reloadUser(q: Queryable, id: string): Promise<Row> {
    const u = await this.findUserById(q, id);
    if (!u) throw new ApiError(404, 'user_not_found', 'User not found');
    return u;
  }

  hashPassword(password: string): Promise<string> {
    return this.passwords.hash(password);
  }

  async passwordMatches(hash: string | null | undefined, password: string): Promise<boolean> {
    if (!hash) {
      await this.passwords.verify(password, DUMMY_HASH);
      return false;
    }
    return this.passwords.verify(password, hash);
  }

  /**
   * A password sign-in's credential check, for an email or a phone (`key`): the per-account attempt guard (unknown
   * accounts too, so that the answers do not tell them apart; refused before the password is checked while the
   * account's failures hold it back), the password, then the ban. Returns the user; the caller checks confirmation.
   */
  async checkPasswordSignIn(user: Row | undefined, key: string, password: string, ip: string): Promise<Row> {
    const attempt = this.attempts.begin('password', key, ip, user ? this.attempts.isKnownAddress(String(user.id), ip) : false);
    let ok: boolean;
    try {
      ok = await this.passwordMatches(user ? (user.encrypted_password as string | null) : null, password);
    } catch (err) {
      attempt.release();
      throw err;
    }
    if (!user || !ok) {
      attempt.failed();
      throw new ApiError(400, 'invalid_credentials', 'Invalid login credentials');
    }
    attempt.succeeded();
    if (this.isBanned(user)) throw new ApiError(400, 'user_banned', 'User is banned');
    return user;
  }

  /** Inserts a user and its email identity. */
  async createUser(
    q: Queryable,
    p: {
      /** The admin API's chosen id (checked by the caller); a new random one otherwise. */
      id?: string;
      email: string;
      passwordHash: string | null;
      confirmed: boolean;
      userMetadata?: Record<string, unknown>;
      appMetadata?: Record<string, unknown>;
      invited?: boolean;
      role?: string;
      /**
       * user_metadata exactly as given (the admin API: create, invite, generate_link), as GoTrue, which puts sub,
       * email, email_verified and phone_verified in the identity only; sign-up and OTP also copy them into user_metadata.
       */
      metadataAsGiven?: boolean;
    },
  ): Promise<Row> {
    const id = p.id ?? crypto.randomUUID();
    const identityData = { sub: id, email: p.email, email_verified: p.confirmed, phone_verified: false };
    // Confirming an address sets email_verified: true in user_metadata, as GoTrue's User.Confirm does.
    const userMeta = p.metadataAsGiven
      ? { ...(p.userMetadata ?? {}), ...(p.confirmed ? { email_verified: true } : {}) }
      : { ...identityData, ...(p.userMetadata ?? {}) };
    const appMeta = { provider: 'email', providers: ['email'], ...(p.appMetadata ?? {}) };
    try {
      await q.query(
        `insert into auth.users (instance_id, id, aud, role, email, encrypted_password, email_confirmed_at, invited_at,
           raw_app_meta_data, raw_user_meta_data, created_at, updated_at, is_anonymous)
         values ('00000000-0000-0000-0000-000000000000', $1, 'authenticated', $2, $3, $4,
           case when $5::boolean then now() end, case when $6::boolean then now() end, $7::jsonb, $8::jsonb, now(), now(), false)`,
        [
          id,
          p.role ?? 'authenticated',
          p.email,
          p.passwordHash,
          p.confirmed,
          p.invited ?? false,
          JSON.stringify(appMeta),
          JSON.stringify(userMeta),
        ],
      );
    } catch (err) {
      if ((err as { code?: string }).code === '23505')
        throw new ApiError(422, 'email_exists', 'A user with this email address has already been registered');
      throw err;
    }
    await q.query(
      `insert into auth.identities (provider_id, user_id, identity_data, provider, last_sign_in_at, created_at, updated_at)
       values ($1, $2, $3::jsonb, 'email', now(), now(), now())`,
      [id, id, JSON.stringify(identityData)],
    );
    return this.reloadUser(q, id);
  }

  /**
   * Inserts an anonymous (guest) user as GoTrue's SignupAnonymously: no email, phone or password, no identity,
   * app_metadata {} and user_metadata exactly as given.
   */
  async createAnonymousUser(q: Queryable, userMetadata: Record<string, unknown>): Promise<Row> {
    const id = crypto.randomUUID();
    await q.query(
      `insert into auth.users (instance_id, id, aud, role, encrypted_password, raw_app_meta_data, raw_user_meta_data,
         created_at, updated_at, is_anonymous)
       values ('00000000-0000-0000-0000-000000000000', $1, 'authenticated', 'authenticated', '', '{}'::jsonb, $2::jsonb,
         now(), now(), true)`,
      [id, JSON.stringify(userMetadata)],
    );
    return this.reloadUser(q, id);
  }

  /**
   * Makes `email` the user's address, confirmed (a completed email change: GoTrue's emailChangeVerify and
   * ConfirmEmailChange). A user without an email identity (a guest) gets one, a guest stops being anonymous, pending
   * one-time tokens are dropped and app_metadata.providers follows the identities. Throws email_exists when another
   * user has the address.
   */
  async confirmEmailChange(q: Queryable, user: Row, email: string): Promise<void> {
    const userId = String(user.id);
    // GoTrue's Confirm marks email_verified in user_metadata for a guest (never confirmed before); localbase keeps
    // copying the address into user_metadata for the others, as before.
    const metadataPatch = user.is_anonymous ? { email_verified: true } : { email };
    try {
      await q.query(
        `update auth.users set email = $2::text, email_change = '', email_change_confirm_status = 0,
           email_change_sent_at = null, email_confirmed_at = coalesce(email_confirmed_at, now()),
           raw_user_meta_data = coalesce(raw_user_meta_data, '{}'::jsonb) || $3::jsonb,
           is_anonymous = false, updated_at = now() where id = $1`,
        [userId, email, JSON.stringify(metadataPatch)],
      );
    } catch (err) {
      if ((err as { code?: string }).code === '23505')
        throw new ApiError(422, 'email_exists', 'A user with this email address has already been registered');
      throw err;
    }
    const updated = await q.query(
      `update auth.identities set identity_data = identity_data || jsonb_build_object('email', $2::text), updated_at = now()
       where user_id = $1 and provider = 'email'`,
      [userId, email],
    );
    if ((updated.affectedRows ?? 0) === 0) {
      const identityData = { sub: userId, email, email_verified: true, phone_verified: false };
      await q.query(
        `insert into auth.identities (provider_id, user_id, identity_data, provider, last_sign_in_at, created_at, updated_at)
         values ($1, $2, $3::jsonb, 'email', now(), now(), now())`,
        [userId, userId, JSON.stringify(identityData)],
      );
    }
    await q.query('delete from auth.one_time_tokens where user_id = $1', [userId]);
    // GoTrue's UpdateAppMetaDataProviders: providers = the identities' providers, provider = the first of them.
    await q.query(
      `update auth.users u set raw_app_meta_data = coalesce(u.raw_app_meta_data, '{}'::jsonb)
         || jsonb_build_object('providers', p.list, 'provider', p.list->0)
       from (select coalesce(jsonb_agg(distinct i.provider), '[]'::jsonb) as list from auth.identities i where i.user_id = $1) p
       where u.id = $1`,
      [userId],
    );
  }

  /** Marks the email confirmed (user_metadata and identity get email_verified: true). */
  async confirmEmail(q: Queryable, userId: string): Promise<void> {
    await q.query(
      `update auth.users set email_confirmed_at = coalesce(email_confirmed_at, now()), updated_at = now(),
         raw_user_meta_data = coalesce(raw_user_meta_data, '{}'::jsonb) || '{"email_verified": true}'::jsonb
       where id = $1`,
      [userId],
    );
    await q.query(
      `update auth.identities set identity_data = identity_data || '{"email_verified": true}'::jsonb, updated_at = now()
       where user_id = $1 and provider = 'email'`,
      [userId],
    );
  }

  isConfirmed(u: Row): boolean {
    return Boolean(u.email_confirmed_at);
  }

  isBanned(u: Row): boolean {
    return u.banned_until instanceof Date
      ? u.banned_until.getTime() > Date.now()
      : Boolean(u.banned_until) && new Date(String(u.banned_until)).getTime() > Date.now();
  }

  // ---------- one-time tokens and mail ----------

  /** Creates (replacing any previous one of the same type) a one-time token, and mails it. */
  async sendOtpMail(
    q: Queryable,
    p: {
      user: Row;
      to: string;
      mailType: MailType;
      tokenType: OtpTokenType;
      redirectTo?: string | null;
      pkce?: PkceChallenge;
    },
  ): Promise<void> {
    const userId = String(p.user.id);
    const column: Partial<Record<OtpTokenType, string>> = {
      confirmation_token: 'confirmation_sent_at',
      recovery_token: 'recovery_sent_at',
      email_change_token_new: 'email_change_sent_at',
      email_change_token_current: 'email_change_sent_at',
      reauthentication_token: 'reauthentication_sent_at',
    };
    const col = column[p.tokenType];
    // GoTrue's SMTP_MAX_FREQUENCY: an invite is not limited; the current address's email-change mail goes with the
    // new address's, which was checked.
    if (col && p.mailType !== 'invite' && p.tokenType !== 'email_change_token_current')
      await this.assertSendInterval(q, userId, col, this.cfg.emailMaxFrequencySeconds, 'over_email_send_rate_limit');
    const otp = newOtp();
    this.newCodeFor(p.to);
    let hash = tokenHash(p.to, otp);
    if (p.pkce) {
      // PKCE: the link's token is marked, and GET /verify answers with ?code= for this flow.
      hash = `pkce_${hash}`;
      await q.query(
        `insert into auth.flow_state (id, user_id, auth_code, code_challenge_method, code_challenge, provider_type,
           authentication_method, created_at, updated_at)
         values ($1, $2, $3, $4, $5, 'email', $6, now(), now())`,
        [crypto.randomUUID(), userId, crypto.randomUUID(), p.pkce.method, p.pkce.challenge, p.mailType],
      );
    }
    await q.query(
      `insert into auth.one_time_tokens (user_id, token_type, token_hash, relates_to, created_at, updated_at)
       values ($1, $2, $3, $4, now(), now())
       on conflict (user_id, token_type) do update set token_hash = excluded.token_hash,
         relates_to = excluded.relates_to, created_at = now(), updated_at = now()`,
      [userId, p.tokenType, hash, p.to],
    );
    if (col) await q.query(`update auth.users set ${col} = now() where id = $1`, [userId]);
    const linkType = p.mailType === 'reauthentication' ? undefined : p.mailType;
    const link = linkType
      ? `${this.apiUrl}/auth/v1/verify?token=${hash}&type=${linkType}&redirect_to=${encodeURIComponent(
          this.redirectTo(p.redirectTo),
        )}`
      : undefined;
    await this.mailbox.deliver(q, composeMail(p.mailType, p.to, link, otp));
  }

  /**
   * GoTrue's validateSentWithinFrequencyLimit, for mails (SMTP_MAX_FREQUENCY) and SMS codes (SMS_MAX_FREQUENCY): a
   * message of one kind (its `*_sent_at` column, from a fixed list, never input) to this user within `seconds` of the
   * previous one is 429 `code`, with GoTrue's words and the whole seconds left. Locks the user's row, so two requests
   * at once cannot both pass. `seconds` 0 = no interval.
   */
  async assertSendInterval(
    q: Queryable,
    userId: string,
    sentAtColumn: string,
    seconds: number,
    code: 'over_email_send_rate_limit' | 'over_sms_send_rate_limit',
  ): Promise<void> {
    if (!(seconds > 0)) return;
    const r = await q.query<{ left: number | string | null }>(
      `select extract(epoch from (${sentAtColumn} + make_interval(secs => $2) - clock_timestamp()))::float8 as left
       from auth.users where id = $1 for update`,
      [userId, seconds],
    );
    const raw = r.rows[0]?.left;
    const left = raw === null || raw === undefined ? null : Number(raw);
    if (left === null || !(left > 0)) return;
    const err = new ApiError(429, code, `For security purposes, you can only request this after ${Math.floor(left)} seconds.`);
    err.retryAfter = Math.max(1, Math.ceil(left));
    throw err;
  }

  /**
   * Finds and consumes a one-time token of one of the given types, or throws otp_expired. `by.email` is the
   * recipient the code was sent to (an email address, or a phone number for SMS codes); `expirySeconds` defaults to
   * the mailed codes' lifetime.
   */
  async consumeOtp(
    q: Queryable,
    types: Array<OtpTokenType | 'phone_change_token'>,
    by: { hash: string } | { email: string; otp: string },
    expirySeconds = this.cfg.otpExpiry,
  ): Promise<{ userId: string; tokenType: OtpTokenType; relatesTo: string; pkce: boolean }> {
    const hash = 'hash' in by ? by.hash : tokenHash(by.email, by.otp);
    const r = await q.query<{
      id: string;
      user_id: string;
      token_type: OtpTokenType;
      relates_to: string;
      fresh: boolean;
      token_hash: string;
    }>(
      `select id, user_id, token_type, relates_to, token_hash, created_at > now() - make_interval(secs => $3) as fresh
       from auth.one_time_tokens where (token_hash = $1 or token_hash = 'pkce_' || $1) and token_type = any($2::text[])
       ${'email' in by ? 'and lower(relates_to) = lower($4)' : ''}
       order by created_at desc limit 1 for update`,
      'email' in by ? [hash, types, expirySeconds, by.email] : [hash, types, expirySeconds],
    );
    const t = r.rows[0];
    if (!t || !t.fresh) {
      if (t) await q.query('delete from auth.one_time_tokens where id = $1', [t.id]);
      else if ('email' in by) await this.#countWrongCode(q, by.email);
      throw new ApiError(403, 'otp_expired', 'Token has expired or is invalid');
    }
    await q.query('delete from auth.one_time_tokens where id = $1', [t.id]);
    return { userId: t.user_id, tokenType: t.token_type, relatesTo: t.relates_to, pkce: t.token_hash.startsWith('pkce_') };
  }

  /** A new code was issued to `email`: it gets the full number of tries. */
  newCodeFor(email: string): void {
    this.#otpWrongTries.delete(normaliseEmail(email));
  }

  /**
   * One wrong 6-digit code for `email`. After otpMaxAttempts of them (counted per recipient, from any address,
   * since its last code was sent) every pending code and link of that recipient is deleted: the user asks for a
   * new one. The caller must commit `q` even though it answers otp_expired.
   */
  async #countWrongCode(q: Queryable, email: string): Promise<void> {
    const max = this.cfg.accountProtection.otpMaxAttempts;
    if (max <= 0) return;
    const key = normaliseEmail(email);
    const tries = (this.#otpWrongTries.get(key) ?? 0) + 1;
    this.#otpWrongTries.delete(key);
    if (tries < max) {
      if (this.#otpWrongTries.size >= 100_000) this.#otpWrongTries.delete(this.#otpWrongTries.keys().next().value!);
      this.#otpWrongTries.set(key, tries);
      return;
    }
    await q.query('delete from auth.one_time_tokens where lower(relates_to) = $1', [key]);
  }

  // ---------- sessions and tokens ----------

  async createSession(
    q: Queryable,
    userId: string,
    method: string,
    meta: { userAgent?: string; ip?: string } = {},
  ): Promise<{ session: Row; refreshToken: string }> {
    const sessionId = crypto.randomUUID();
    const s = await q.query(
      `insert into auth.sessions (id, user_id, created_at, updated_at, aal, user_agent, ip, refreshed_at)
       values ($1, $2, now(), now(), 'aal1', $3, $4, now()) returning *`,
      [sessionId, userId, meta.userAgent ?? null, meta.ip ?? null],
    );
    await this.addAmr(q, sessionId, method);
    // The address signed in to this account: from now on it has its own budget of failed attempts.
    if (meta.ip) this.attempts.rememberAddress(userId, meta.ip);
    const refreshToken = await this.insertRefreshToken(q, userId, sessionId, null);
    await q.query('update auth.users set last_sign_in_at = now(), updated_at = now() where id = $1', [userId]);
    await q.query(
      "update auth.identities set last_sign_in_at = now() where user_id = $1 and provider = 'email'",
      [userId],
    );
    const session = s.rows[0];
    if (!session) throw new Error('insert into auth.sessions returned no row');
    return { session, refreshToken };
  }

  async addAmr(q: Queryable, sessionId: string, method: string): Promise<void> {
    await q.query(
      `insert into auth.mfa_amr_claims (session_id, created_at, updated_at, authentication_method)
       values ($1, now(), now(), $2)
       on conflict (session_id, authentication_method) do update set updated_at = now()`,
      [sessionId, method],
    );
  }

  async insertRefreshToken(q: Queryable, userId: string, sessionId: string, parent: string | null): Promise<string> {
    const token = newRefreshToken();
    await q.query(
      `insert into auth.refresh_tokens (instance_id, token, user_id, revoked, created_at, updated_at, parent, session_id)
       values ('00000000-0000-0000-0000-000000000000', $1, $2, false, now(), now(), $3, $4)`,
      [token, userId, parent, sessionId],
    );
    return token;
  }

  /** Builds the token response. `user` may be passed when the caller has just loaded it and changed nothing since. */
  async tokenResponse(
    q: Queryable,
    userId: string,
    sessionId: string,
    refreshToken: string,
    loadedUser?: Row,
  ): Promise<TokenResponse> {
    const user = loadedUser ?? (await this.reloadUser(q, userId));
    // The session's aal and its authentication methods, newest first, in one round trip.
    const s = await q.query<{ aal: string; amr: Array<{ method: string; ts: number }> | string | null }>(
      `select s.aal, (select json_agg(json_build_object('method', c.authentication_method,
           'ts', floor(extract(epoch from c.updated_at))::int) order by c.updated_at desc)
         from auth.mfa_amr_claims c where c.session_id = s.id) as amr
       from auth.sessions s where s.id = $1`,
      [sessionId],
    );
    const rawAmr = s.rows[0]?.amr;
    const amrList = (typeof rawAmr === 'string' ? JSON.parse(rawAmr) : rawAmr) as Array<{ method: string; ts: number }> | null;
    const amr: AmrEntry[] = (amrList ?? []).map((r) => ({ method: r.method, timestamp: Number(r.ts) }));
    const now = Math.floor(Date.now() / 1000);
    const exp = now + this.cfg.jwtExpiry;
    const uj = userJson(user);
    const claims: AccessTokenClaims = {
      aud: 'authenticated',
      exp,
      iat: now,
      iss: this.issuer,
      sub: userId,
      email: String(uj.email ?? ''),
      phone: String(uj.phone ?? ''),
      app_metadata: uj.app_metadata as Record<string, unknown>,
      user_metadata: uj.user_metadata as Record<string, unknown>,
      role: String(user.role || 'authenticated'),
      aal: s.rows[0]?.aal === 'aal2' ? 'aal2' : 'aal1',
      amr,
      session_id: sessionId,
      is_anonymous: Boolean(user.is_anonymous),
    };
    return {
      access_token: await this.keys.sign(claims),
      token_type: 'bearer',
      expires_in: this.cfg.jwtExpiry,
      expires_at: exp,
      refresh_token: refreshToken,
      user: uj,
    };
  }

  /** Signs a user in: new session (aal1) with the given authentication method. */
  async issueSession(
    q: Queryable,
    userId: string,
    method: string,
    meta: { userAgent?: string; ip?: string },
  ): Promise<TokenResponse> {
    const { session, refreshToken } = await this.createSession(q, userId, method, meta);
    return this.tokenResponse(q, userId, String(session.id), refreshToken);
  }

  /**
   * The refresh_token grant with GoTrue's rotation rules:
   * - an active token is revoked and replaced by a child;
   * - a revoked token whose child is the active token replays to that active token;
   * - a revoked token used within the reuse interval gets a new child;
   * - any other reuse revokes every token of the session (refresh_token_already_used).
   */
  async refresh(presented: string): Promise<TokenResponse> {
    const outcome = await this.db.transaction(async (tx) => {
      const r = await tx.query(
        `select t.*, (t.updated_at > now() - make_interval(secs => $2)) as within_reuse
         from auth.refresh_tokens t where t.token = $1 for update`,
        [presented, this.cfg.refreshTokenReuseInterval],
      );
      const t = r.rows[0];
      if (!t) throw new ApiError(400, 'refresh_token_not_found', 'Invalid Refresh Token: Refresh Token Not Found');
      const sessionId = t.session_id as string | null;
      const s = sessionId
        ? (await tx.query('select * from auth.sessions where id = $1 for update', [sessionId])).rows[0]
        : undefined;
      if (!s || !sessionId)
        throw new ApiError(400, 'session_not_found', 'Invalid Refresh Token: No Valid Session Found');
      const user = await this.findUserById(tx, String(s.user_id));
      if (!user) throw new ApiError(400, 'user_not_found', 'Invalid Refresh Token: User not found');
      if (this.isBanned(user)) throw new ApiError(400, 'user_banned', 'Invalid Refresh Token: User Banned');
      const userId = String(user.id);

      let token: string;
      if (t.revoked) {
        // GoTrue: the session's currently active token is its newest unrevoked one.
        const active = await tx.query<{ token: string; parent: string | null }>(
          'select token, parent from auth.refresh_tokens where session_id = $1 and revoked = false order by id desc limit 1',
          [sessionId],
        );
        if (active.rows[0] && active.rows[0].parent === presented) {
          token = active.rows[0].token;
        } else if (t.within_reuse) {
          token = await this.insertRefreshToken(tx, userId, sessionId, presented);
        } else {
          // Revoke the family. The revocation time is back-dated past the reuse interval so that no token of
          // this session can use the reuse window afterwards: every later attempt is refused the same way.
          await tx.query(
            `update auth.refresh_tokens set revoked = true,
               updated_at = now() - make_interval(secs => $2 + 1) where session_id = $1 and (revoked = false or updated_at > now() - make_interval(secs => $2))`,
            [sessionId, this.cfg.refreshTokenReuseInterval],
          );
          return { error: new ApiError(400, 'refresh_token_already_used', 'Invalid Refresh Token: Already Used') };
        }
      } else {
        await tx.query('update auth.refresh_tokens set revoked = true, updated_at = now() where id = $1', [t.id]);
        token = await this.insertRefreshToken(tx, userId, sessionId, presented);
      }
      await tx.query('update auth.sessions set refreshed_at = now(), updated_at = now() where id = $1', [sessionId]);
      return { response: await this.tokenResponse(tx, userId, sessionId, token, user) };
    });
    // The family revocation must commit before the error is reported, so it is returned, not thrown, above.
    if ('error' in outcome) throw outcome.error;
    return outcome.response;
  }

  // ---------- read cache for GET /user ----------
  // Every auth request that may write bumps `generation` (before and after it runs), which invalidates all cached
  // reads. Writes made outside the auth API (SQL from migrations, psql on a DATABASE_URL server) are seen after at
  // most CACHE_TTL_MS.
  static readonly CACHE_TTL_MS = 2000;
  #generation = 0;
  readonly #userCache = new Map<string, { gen: number; until: number; body: string }>();
  readonly #jwtCache = new Map<string, Partial<AccessTokenClaims>>();

  invalidate(): void {
    this.#generation++;
    this.#userCache.clear();
  }

  /**
   * Verifies a user's access token: signature, and an `exp` that is present and in the future (a token without
   * one is refused: docs/decisions/018-tokens-without-exp.md). Remembers tokens that passed; only those are ever
   * served from this cache or by the GET /user fast path, and their expiry is checked again on every use.
   */
  async verifyCached(token: string): Promise<Partial<AccessTokenClaims>> {
    const hit = this.#jwtCache.get(token);
    if (hit && typeof hit.exp === 'number' && hit.exp > Date.now() / 1000) return hit;
    const payload = (await this.keys.verify(token, { requireExp: true, goTrueClaims: true })) as Partial<AccessTokenClaims>;
    if (this.#jwtCache.size >= 10_000) this.#jwtCache.clear();
    this.#jwtCache.set(token, payload);
    return payload;
  }

  /**
   * The cached GET /user answer for an Authorization header, synchronously, or undefined when anything would need
   * the database or a signature check (then the normal path runs).
   */
  cachedUserBody(authorization: string | undefined): string | undefined {
    if (!authorization || authorization.length < 8 || authorization.slice(0, 7).toLowerCase() !== 'bearer ') return undefined;
    const payload = this.#jwtCache.get(authorization.slice(7).trim());
    if (!payload || typeof payload.exp !== 'number' || payload.exp <= Date.now() / 1000) return undefined;
    const hit = this.#userCache.get(`${payload.sub}:${payload.session_id}`);
    if (!hit || hit.gen !== this.#generation || hit.until <= Date.now() || payload.aud !== 'authenticated') return undefined;
    return hit.body;
  }

  /** GET /user: the serialised user for a bearer token, from the cache when nothing was written since. */
  async currentUserBody(authorization: string | undefined): Promise<string> {
    const m = authorization ? /^bearer\s+(\S+)\s*$/i.exec(authorization) : null;
    if (!m) throw new ApiError(401, 'no_authorization', 'This endpoint requires a valid Bearer token');
    const payload = await this.verifyCached(m[1]!);
    const key = `${payload.sub}:${payload.session_id}`;
    const now = Date.now();
    const hit = this.#userCache.get(key);
    if (hit && hit.gen === this.#generation && hit.until > now && payload.aud === 'authenticated') return hit.body;
    const gen = this.#generation;
    const ctx = await this.authenticate(authorization);
    const body = JSON.stringify(userJson(ctx.user));
    if (this.#userCache.size >= 10_000) this.#userCache.clear();
    this.#userCache.set(key, { gen, until: now + AuthService.CACHE_TTL_MS, body });
    return body;
  }

  /**
   * Validates `Authorization: Bearer <user jwt>` and loads the user and session (GoTrue's requireAuthentication).
   * `notAnonymous`: a token with `is_anonymous: true` is refused as GoTrue's requireNotAnonymous (by the token's
   * claim, so a guest who converted needs a refreshed token).
   */
  async authenticate(authorization: string | undefined, opts: { notAnonymous?: boolean } = {}): Promise<AuthContext> {
    const m = authorization ? /^bearer\s+(\S+)\s*$/i.exec(authorization) : null;
    if (!m) throw new ApiError(401, 'no_authorization', 'This endpoint requires a valid Bearer token');
    const payload = await this.verifyCached(m[1]!);
    if (!payload.sub) throw new ApiError(403, 'bad_jwt', 'invalid claim: missing sub claim');
    if (!UUID_RE.test(payload.sub)) throw new ApiError(400, 'bad_jwt', 'invalid claim: sub claim must be a UUID');
    const aud = payload.aud;
    if (aud !== undefined && aud !== 'authenticated' && !(Array.isArray(aud) && aud.includes('authenticated')))
      throw new ApiError(403, 'bad_jwt', "Token audience doesn't match request audience");
    const user = await this.findUserById(this.db, payload.sub);
    if (!user) throw new ApiError(403, 'user_not_found', 'User from sub claim in JWT does not exist');
    if (!payload.session_id || !UUID_RE.test(payload.session_id))
      throw new ApiError(403, 'session_not_found', 'Session from session_id claim in JWT does not exist');
    const s = await this.db.query('select * from auth.sessions where id = $1 and user_id = $2', [
      payload.session_id,
      payload.sub,
    ]);
    if (!s.rows[0]) throw new ApiError(403, 'session_not_found', 'Session from session_id claim in JWT does not exist');
    if (opts.notAnonymous && payload.is_anonymous === true)
      throw new ApiError(403, 'no_authorization', 'Anonymous user not allowed to perform these actions');
    return { claims: payload as AccessTokenClaims, user, session: s.rows[0] };
  }

  /** Verifies an admin bearer token (service_role). */
  async requireAdmin(authorization: string | undefined): Promise<void> {
    const m = authorization ? /^bearer\s+(\S+)\s*$/i.exec(authorization) : null;
    if (!m) throw new ApiError(401, 'no_authorization', 'This endpoint requires a valid Bearer token');
    const token = m[1]!;
    if (token === this.cfg.serviceRoleKey) return;
    const payload = await this.keys.verify(token, { goTrueClaims: true });
    if (payload.role !== 'service_role' && payload.role !== 'supabase_admin')
      throw new ApiError(403, 'not_admin', 'User not allowed');
  }

  hasVerifiedFactor(u: Row): boolean {
    const f = u.factors_json;
    const list = (typeof f === 'string' ? JSON.parse(f) : f) as Row[] | null;
    return Array.isArray(list) && list.some((x) => x.status === 'verified');
  }
}
