// Phone sign-ups and sign-ins with SMS codes, as GoTrue answers them (internal/api/phone.go, signup.go, otp.go,
// verify.go, resend.go, user.go, token.go). The SMS are stored in localbase's mailbox (src/mail/sms.ts) instead of
// going to a provider. Decisions and deviations: docs/decisions/034-phone-auth-and-sms-in-the-mailbox.md.
import crypto from 'node:crypto';
import type { Context } from 'hono';
import type { Queryable, Row } from '../db/types.ts';
import { ApiError, validationFailed } from '../http/errors.ts';
import { optBool, optObject, optString } from '../http/body.ts';
import type { Body } from '../http/body.ts';
import { clientIp, rateLimitKey } from '../http/ip.ts';
import { formatPhoneNumber, SmsOutbox } from '../mail/sms.ts';
import { USER_SELECT, userJson } from './format.ts';
import { RateLimiter } from './ratelimit.ts';
import { checkPassword, validateEmail } from './service.ts';
import type { AuthService, TokenResponse } from './service.ts';
import { tokenHash } from './tokens.ts';

export { formatPhoneNumber };

const E164 = /^[1-9][0-9]{1,14}$/;
const INVALID_CHANNEL =
  "Invalid channel, supported values are 'sms' or 'whatsapp'. 'whatsapp' is only supported if Twilio or Twilio Verify is used as the provider.";
const INVALID_TOKEN = () => new ApiError(403, 'otp_expired', 'Token has expired or is invalid');
const PHONE_EXISTS_MSG = 'A user with this phone number has already been registered';

/** GoTrue's validatePhone: "+" and spaces dropped, then 1-15 digits not starting with 0, else 400 validation_failed. */
export function validatePhone(phone: string): string {
  const p = formatPhoneNumber(phone);
  if (!E164.test(p)) throw validationFailed('Invalid phone number format (E.164 required)');
  return p;
}

/** Only "sms" is a channel here ("whatsapp" needs Twilio in GoTrue); absent means "sms". */
function checkChannel(body: Body): void {
  const channel = optString(body, 'channel');
  if (channel !== undefined && channel !== '' && channel !== 'sms') throw validationFailed(INVALID_CHANNEL);
}

/** Per-service state: the hourly SMS limiter (per client address and per phone number) and the outbox. */
interface PhoneState {
  limiter: RateLimiter;
  outbox: SmsOutbox;
}
const states = new WeakMap<AuthService, PhoneState>();
function state(svc: AuthService): PhoneState {
  let s = states.get(svc);
  if (!s) {
    s = { limiter: new RateLimiter(svc.cfg.rateLimits.smsSent, 3600), outbox: new SmsOutbox({ quiet: svc.cfg.quiet }) };
    states.set(svc, s);
  }
  return s;
}

function meta(c: Context): { userAgent?: string; ip: string } {
  return { userAgent: c.req.header('user-agent') ?? undefined, ip: clientIp(c) };
}

export function isPhoneConfirmed(u: Row): boolean {
  return Boolean(u.phone_confirmed_at);
}

export async function findUserByPhone(q: Queryable, phone: string): Promise<Row | undefined> {
  const r = await q.query(`${USER_SELECT} where u.phone = $1 and u.is_sso_user = false`, [phone]);
  return r.rows[0];
}

async function findUserByPhoneChange(q: Queryable, phone: string): Promise<Row | undefined> {
  const r = await q.query(`${USER_SELECT} where u.phone_change = $1 and u.is_sso_user = false`, [phone]);
  return r.rows[0];
}

function isUniqueViolation(err: unknown): boolean {
  return (err as { code?: string }).code === '23505';
}

/** A user signed up with a phone number: provider "phone", no email (GoTrue's NewUser with a phone). */
export async function createPhoneUser(
  q: Queryable,
  p: {
    /** The admin API's chosen id (checked by the caller); a new random one otherwise. */
    id?: string;
    phone: string;
    passwordHash: string | null;
    confirmed: boolean;
    userMetadata?: Record<string, unknown>;
    /** admin API: user_metadata as given, the phone in the identity (GoTrue's admin createUser) */
    admin?: boolean;
  },
): Promise<string> {
  const id = p.id ?? crypto.randomUUID();
  // The identity data GoTrue builds from provider.Claims: sub, (phone for the admin API), and both *_verified flags.
  const identityData: Record<string, unknown> = p.admin
    ? { sub: id, phone: p.phone, email_verified: false, phone_verified: false }
    : { sub: id, email_verified: false, phone_verified: false };
  const data = p.userMetadata ?? {};
  if (!p.admin) for (const [k, v] of Object.entries(data)) if (!(k in identityData)) identityData[k] = v;
  const userMeta = p.admin ? data : { ...identityData, ...data };
  try {
    await q.query(
      `insert into auth.users (instance_id, id, aud, role, phone, encrypted_password, phone_confirmed_at,
         raw_app_meta_data, raw_user_meta_data, created_at, updated_at, is_anonymous)
       values ('00000000-0000-0000-0000-000000000000', $1, 'authenticated', 'authenticated', $2, $3,
         case when $4::boolean then now() end, $5::jsonb, $6::jsonb, now(), now(), false)`,
      [id, p.phone, p.passwordHash, p.confirmed, JSON.stringify({ provider: 'phone', providers: ['phone'] }), JSON.stringify(userMeta)],
    );
  } catch (err) {
    if (isUniqueViolation(err)) throw new ApiError(422, 'phone_exists', PHONE_EXISTS_MSG);
    throw err;
  }
  await q.query(
    `insert into auth.identities (provider_id, user_id, identity_data, provider, last_sign_in_at, created_at, updated_at)
     values ($1, $2, $3::jsonb, 'phone', now(), now(), now())`,
    [id, id, JSON.stringify(identityData)],
  );
  return id;
}

/** GoTrue's ConfirmPhone: phone_confirmed_at set, every pending one-time token of the user dropped. */
export async function confirmPhone(q: Queryable, userId: string): Promise<void> {
  await q.query('update auth.users set phone_confirmed_at = now(), updated_at = now() where id = $1', [userId]);
  await q.query('delete from auth.one_time_tokens where user_id = $1', [userId]);
}

/** Adds or updates the user's phone identity and lists "phone" among app_metadata.providers. */
async function upsertPhoneIdentity(q: Queryable, userId: string, phone: string, phoneVerified: boolean): Promise<void> {
  const r = await q.query(
    `update auth.identities set identity_data = identity_data || jsonb_build_object('phone', $2::text, 'phone_verified', $3::boolean),
       updated_at = now() where user_id = $1 and provider = 'phone'`,
    [userId, phone, phoneVerified],
  );
  if (r.affectedRows > 0) return;
  const identityData = { sub: userId, phone, email_verified: false, phone_verified: phoneVerified };
  await q.query(
    `insert into auth.identities (provider_id, user_id, identity_data, provider, last_sign_in_at, created_at, updated_at)
     values ($1, $2, $3::jsonb, 'phone', now(), now(), now())`,
    [userId, userId, JSON.stringify(identityData)],
  );
  await q.query(
    `update auth.users set raw_app_meta_data = coalesce(raw_app_meta_data, '{}'::jsonb) || jsonb_build_object('providers',
       (select coalesce(jsonb_agg(distinct p), '[]'::jsonb) from jsonb_array_elements_text(
          coalesce(raw_app_meta_data->'providers', '["email"]'::jsonb) || '["phone"]'::jsonb) p))
     where id = $1`,
    [userId],
  );
}

/** The new number becomes the user's number (GoTrue's smsVerify for phone_change, then ConfirmPhoneChange). */
async function confirmPhoneChange(q: Queryable, userId: string, phone: string): Promise<void> {
  await upsertPhoneIdentity(q, userId, phone, true);
  try {
    await q.query(
      `update auth.users set phone = $2, phone_change = '', phone_change_token = '', phone_confirmed_at = now(),
         is_anonymous = false, updated_at = now() where id = $1`,
      [userId, phone],
    );
  } catch (err) {
    if (isUniqueViolation(err)) throw new ApiError(422, 'phone_exists', PHONE_EXISTS_MSG);
    throw err;
  }
  await q.query('delete from auth.one_time_tokens where user_id = $1', [userId]);
}

/** A code of `length` digits from a CSPRNG. */
function newSmsOtp(length: number): string {
  let out = '';
  for (let i = 0; i < length; i++) out += String(crypto.randomInt(0, 10));
  return out;
}

/**
 * GoTrue's sendPhoneConfirmation: refuses within max_frequency of the previous code (429 over_sms_send_rate_limit
 * "For security purposes, you can only request this after N seconds."), counts the hourly SMS limit, stores the
 * code's hash as a one-time token and the SMS in the mailbox. A test number (GOTRUE_SMS_TEST_OTP) gets its fixed
 * code and no SMS. Returns the message id.
 */
async function sendPhoneCode(
  svc: AuthService,
  q: Queryable,
  p: { userId: string; phone: string; kind: 'confirmation' | 'phone_change' | 'reauthentication'; ip: string },
): Promise<string> {
  const sms = svc.cfg.sms;
  const sentAtColumn = `${p.kind}_sent_at`; // confirmation_sent_at, phone_change_sent_at, reauthentication_sent_at
  await svc.assertSendInterval(q, p.userId, sentAtColumn, sms.maxFrequencySeconds, 'over_sms_send_rate_limit');
  let otp = sms.testOtp[p.phone];
  let messageId = 'test-otp';
  if (otp === undefined) {
    const { limiter } = state(svc);
    for (const key of [`ip:${rateLimitKey(p.ip)}`, `to:${p.phone}`]) {
      if (!limiter.take(key)) {
        const err = new ApiError(429, 'over_sms_send_rate_limit', 'SMS rate limit exceeded');
        err.retryAfter = limiter.retryAfter(key);
        throw err;
      }
    }
    otp = newSmsOtp(sms.otpLength);
    const text = sms.template.replace(/\{\{\s*\.Code\s*\}\}/g, otp);
    messageId = await state(svc).outbox.deliver(q, {
      to: p.phone,
      type: p.kind === 'confirmation' ? 'sms' : p.kind,
      body: text,
      token: otp,
    });
  }
  svc.newCodeFor(p.phone);
  const tokenType = `${p.kind}_token`;
  await q.query(
    `insert into auth.one_time_tokens (user_id, token_type, token_hash, relates_to, created_at, updated_at)
     values ($1, $2, $3, $4, now(), now())
     on conflict (user_id, token_type) do update set token_hash = excluded.token_hash,
       relates_to = excluded.relates_to, created_at = now(), updated_at = now()`,
    [p.userId, tokenType, tokenHash(p.phone, otp), p.phone],
  );
  if (p.kind === 'phone_change')
    await q.query('update auth.users set phone_change = $2, phone_change_sent_at = now() where id = $1', [p.userId, p.phone]);
  else await q.query(`update auth.users set ${sentAtColumn} = now() where id = $1`, [p.userId]);
  return messageId;
}

function messageIdBody(messageId: string): Record<string, string> {
  return messageId ? { message_id: messageId } : {};
}

// ---------- POST /signup with a phone ----------

/** POST /signup with `phone` (the caller has already refused a closed instance). */
export async function phoneSignup(svc: AuthService, c: Context, body: Body): Promise<TokenResponse | Record<string, unknown>> {
  const cfg = svc.cfg;
  const password = optString(body, 'password');
  if (!password) throw validationFailed('Signup requires a valid password');
  checkPassword(password, cfg.minPasswordLength);
  if (optString(body, 'email'))
    throw validationFailed('Only an email address or phone number should be provided on signup.');
  checkChannel(body);
  if (optString(body, 'code_challenge')) throw validationFailed('PKCE not supported for phone signups');
  if (!cfg.sms.enabled) throw new ApiError(400, 'phone_provider_disabled', 'Phone signups are disabled');
  const phone = validatePhone(optString(body, 'phone') ?? '');
  const data = optObject(body, 'data') ?? {};
  const ip = clientIp(c);
  svc.limit('signUp', ip);
  const hash = await svc.hashPassword(password);
  return svc.db.transaction(async (tx): Promise<TokenResponse | Record<string, unknown>> => {
    const existing = await findUserByPhone(tx, phone);
    if (existing && isPhoneConfirmed(existing)) {
      if (!cfg.enableConfirmations || cfg.sms.autoconfirm)
        throw new ApiError(422, 'user_already_exists', 'User already registered');
      // Anti-enumeration, as GoTrue's sanitizeUser: a fresh-looking user, nothing of the real one.
      const now = new Date().toISOString();
      return {
        id: crypto.randomUUID(),
        aud: 'authenticated',
        role: '',
        email: '',
        phone,
        confirmation_sent_at: now,
        app_metadata: { provider: 'phone', providers: ['phone'] },
        user_metadata: data,
        identities: [],
        created_at: now,
        updated_at: now,
        is_anonymous: false,
      };
    }
    // An unconfirmed user keeps its password and data: the claim on the number is not proven (as GoTrue).
    const userId = existing
      ? String(existing.id)
      : await createPhoneUser(tx, { phone, passwordHash: hash, confirmed: false, userMetadata: data });
    if (cfg.sms.autoconfirm) await confirmPhone(tx, userId);
    else await sendPhoneCode(svc, tx, { userId, phone, kind: 'confirmation', ip });
    const user = await svc.reloadUser(tx, userId);
    if (isPhoneConfirmed(user) || svc.isConfirmed(user)) return svc.issueSession(tx, userId, 'password', meta(c));
    return userJson(user);
  });
}

// ---------- POST /token?grant_type=password with a phone ----------

export async function phonePasswordGrant(svc: AuthService, c: Context, body: Body): Promise<TokenResponse> {
  if (optString(body, 'email'))
    throw validationFailed('Only an email address or phone number should be provided on login.');
  if (!svc.cfg.sms.enabled) throw new ApiError(400, 'phone_provider_disabled', 'Phone logins are disabled');
  const password = optString(body, 'password');
  if (password === undefined) throw validationFailed('Please provide a password');
  const ip = clientIp(c);
  svc.limit('token', ip); // a password grant: GoTrue's Token limiter
  const phone = formatPhoneNumber(optString(body, 'phone') ?? '');
  const user = await svc.checkPasswordSignIn(await findUserByPhone(svc.db, phone), phone, password, ip);
  if (!isPhoneConfirmed(user)) throw new ApiError(400, 'phone_not_confirmed', 'Phone not confirmed');
  return svc.db.transaction((tx) => svc.issueSession(tx, String(user.id), 'password', meta(c)));
}

// ---------- POST /otp with a phone (signInWithOtp({ phone })) ----------

export async function smsOtp(svc: AuthService, c: Context, body: Body): Promise<Record<string, string>> {
  const cfg = svc.cfg;
  if (optString(body, 'email')) throw validationFailed('Only an email address or phone number should be provided');
  const rawPhone = optString(body, 'phone') ?? '';
  if ((optBool(body, 'create_user') ?? true) === false) {
    const known = await findUserByPhone(svc.db, validatePhone(rawPhone));
    if (!known) throw new ApiError(422, 'otp_disabled', 'Signups not allowed for otp');
  }
  if (!cfg.sms.enabled) throw new ApiError(400, 'phone_provider_disabled', 'Unsupported phone provider');
  checkChannel(body);
  const phone = validatePhone(rawPhone);
  const data = optObject(body, 'data') ?? {};
  const ip = clientIp(c);
  return svc.db.transaction(async (tx) => {
    const user = await findUserByPhone(tx, phone);
    if (!user || !isPhoneConfirmed(user)) {
      // A new user (or one that never confirmed its number) signs up first, as GoTrue's SmsOtp does.
      if (cfg.disableSignup) throw new ApiError(422, 'signup_disabled', 'Signups not allowed for this instance');
      const userId = user
        ? String(user.id)
        : await createPhoneUser(tx, { phone, passwordHash: null, confirmed: false, userMetadata: data });
      if (!cfg.sms.autoconfirm) {
        await sendPhoneCode(svc, tx, { userId, phone, kind: 'confirmation', ip });
        return {};
      }
      await confirmPhone(tx, userId);
      return messageIdBody(await sendPhoneCode(svc, tx, { userId, phone, kind: 'confirmation', ip }));
    }
    return messageIdBody(await sendPhoneCode(svc, tx, { userId: String(user.id), phone, kind: 'confirmation', ip }));
  });
}

// ---------- POST /resend with type sms / phone_change ----------

export async function resendPhone(svc: AuthService, c: Context, body: Body): Promise<Record<string, string>> {
  const type = optString(body, 'type') as 'sms' | 'phone_change';
  const rawEmail = optString(body, 'email');
  const rawPhone = optString(body, 'phone');
  if (!rawPhone && type === 'sms') throw validationFailed('Type provided requires a phone number');
  if (rawEmail && rawPhone) throw validationFailed('Only an email address or phone number should be provided.');
  let user: Row | undefined;
  if (rawPhone) {
    if (!svc.cfg.sms.enabled) throw new ApiError(400, 'phone_provider_disabled', 'Phone logins are disabled');
    user = await findUserByPhone(svc.db, validatePhone(rawPhone));
  } else if (rawEmail) {
    user = await svc.findUserByEmail(svc.db, validateEmail(rawEmail));
  } else {
    throw validationFailed('Missing email address or phone number');
  }
  if (!user) return {};
  if (type === 'sms' && isPhoneConfirmed(user)) return {};
  if (type === 'phone_change' && !user.phone_change) return {};
  const target = user;
  const ip = clientIp(c);
  const messageId = await svc.db.transaction((tx) =>
    type === 'sms'
      ? sendPhoneCode(svc, tx, { userId: String(target.id), phone: String(target.phone), kind: 'confirmation', ip })
      : sendPhoneCode(svc, tx, { userId: String(target.id), phone: String(target.phone_change), kind: 'phone_change', ip }),
  );
  return messageIdBody(messageId);
}

// ---------- POST /verify with a phone ----------

/** POST /verify { phone, token, type: 'sms' | 'phone_change' }: the session, with amr "otp". */
export async function verifyPhone(svc: AuthService, c: Context, body: Body): Promise<TokenResponse> {
  const type = optString(body, 'type') ?? '';
  const token = optString(body, 'token');
  const tokenHashParam = optString(body, 'token_hash');
  const rawPhone = optString(body, 'phone');
  if ((!token && !tokenHashParam) || (token && tokenHashParam))
    throw validationFailed('Verify requires either a token or a token hash');
  if (tokenHashParam) {
    if (rawPhone) throw validationFailed('Only the token_hash and type should be provided');
    throw INVALID_TOKEN(); // SMS codes have no links: no token hash is ever handed out for them
  }
  if (!rawPhone || (type !== 'sms' && type !== 'phone_change'))
    throw validationFailed('Only an email address or phone number should be provided on verify');
  const phone = validatePhone(rawPhone);
  const otp = token ?? ''; // as sent: GoTrue hashes the code untrimmed
  const ip = clientIp(c);
  svc.limit('verify', ip);
  const owner = type === 'sms' ? await findUserByPhone(svc.db, phone) : await findUserByPhoneChange(svc.db, phone);
  // A short code can be guessed: wrong codes per number hold further tries back (docs/decisions/017-…).
  const attempt = svc.attempts.begin('sms', phone, ip, owner ? svc.attempts.isKnownAddress(String(owner.id), ip) : false);
  const tokenType = type === 'sms' ? 'confirmation_token' : 'phone_change_token';
  const outcome = await svc.db
    .transaction(async (tx): Promise<{ tokens: TokenResponse } | { error: ApiError }> => {
      let userId: string;
      const testOtp = svc.cfg.sms.testOtp[phone];
      if (testOtp !== undefined && otp === testOtp) {
        const u = type === 'sms' ? await findUserByPhone(tx, phone) : await findUserByPhoneChange(tx, phone);
        if (!u) {
          attempt.failed();
          return { error: INVALID_TOKEN() };
        }
        userId = String(u.id);
        await tx.query('delete from auth.one_time_tokens where user_id = $1 and token_type = $2', [userId, tokenType]);
      } else {
        try {
          userId = (await svc.consumeOtp(tx, [tokenType], { email: phone, otp }, svc.cfg.sms.otpExpiry)).userId;
        } catch (err) {
          if (err instanceof ApiError) {
            attempt.failed();
            return { error: err };
          }
          throw err;
        }
      }
      attempt.succeeded();
      const user = await svc.findUserById(tx, userId);
      if (!user) return { error: INVALID_TOKEN() };
      if (svc.isBanned(user)) return { error: new ApiError(403, 'user_banned', 'User is banned') };
      if (type === 'sms') {
        if (String(user.phone ?? '') !== phone) return { error: INVALID_TOKEN() };
        await confirmPhone(tx, userId);
        await tx.query('update auth.users set is_anonymous = false where id = $1 and is_anonymous', [userId]);
      } else {
        if (String(user.phone_change ?? '') !== phone) return { error: INVALID_TOKEN() };
        try {
          await confirmPhoneChange(tx, userId, phone);
        } catch (err) {
          if (err instanceof ApiError) return { error: err };
          throw err;
        }
      }
      return { tokens: await svc.issueSession(tx, userId, 'otp', meta(c)) };
    })
    .finally(() => attempt.release());
  if ('error' in outcome) throw outcome.error;
  return outcome.tokens;
}

// ---------- PUT /user with a phone (updateUser({ phone })) ----------

/**
 * Checks a new number given to PUT /user: undefined when none is given or it is the user's own. Phone auth off
 * keeps ADR 030's refusal; a number of another user is 422 phone_exists.
 */
export async function newPhoneForUpdate(svc: AuthService, user: Row, body: Body): Promise<string | undefined> {
  const raw = optString(body, 'phone');
  if (!raw) return undefined;
  if (!svc.cfg.sms.enabled) throw new ApiError(422, 'phone_provider_disabled', 'Phone updates are disabled');
  const phone = validatePhone(raw);
  checkChannel(body);
  if (phone === String(user.phone ?? '')) return undefined;
  const taken = await findUserByPhone(svc.db, phone);
  if (taken && String(taken.id) !== String(user.id)) throw new ApiError(422, 'phone_exists', PHONE_EXISTS_MSG);
  return phone;
}

/** In PUT /user's transaction: with SMS autoconfirm the number changes at once, else a code goes to the new number. */
export async function changePhone(svc: AuthService, c: Context, q: Queryable, userId: string, phone: string): Promise<void> {
  if (svc.cfg.sms.autoconfirm) await confirmPhoneChange(q, userId, phone);
  else await sendPhoneCode(svc, q, { userId, phone, kind: 'phone_change', ip: clientIp(c) });
}

// ---------- GET /reauthenticate for a user without email ----------

/** reauthenticate() of a user with a phone and no email: the nonce goes by SMS (GoTrue's Reauthenticate). */
export async function reauthenticateBySms(svc: AuthService, c: Context, user: Row): Promise<Record<string, string>> {
  if (!isPhoneConfirmed(user)) throw new ApiError(422, 'phone_not_confirmed', 'Please verify your phone first.');
  const messageId = await svc.db.transaction((tx) =>
    sendPhoneCode(svc, tx, { userId: String(user.id), phone: String(user.phone), kind: 'reauthentication', ip: clientIp(c) }),
  );
  return messageIdBody(messageId);
}

/** Who a reauthentication nonce was sent to, and how long it lives: the email, else the phone with the SMS expiry. */
export function nonceRecipient(svc: AuthService, user: Row): { to: string; expirySeconds: number } {
  const email = String(user.email ?? '');
  if (email) return { to: email, expirySeconds: svc.cfg.otpExpiry };
  return { to: String(user.phone ?? ''), expirySeconds: svc.cfg.sms.otpExpiry };
}

// ---------- admin API ----------

/** The admin API's phone and phone_confirm (createUser / updateUserById), as GoTrue's admin handlers. */
export async function adminSetPhone(q: Queryable, userId: string, phone: string | undefined, confirm: boolean | undefined): Promise<void> {
  if (phone !== undefined) {
    await upsertPhoneIdentity(q, userId, phone, confirm === true);
    try {
      await q.query('update auth.users set phone = $2, updated_at = now() where id = $1', [userId, phone]);
    } catch (err) {
      if (isUniqueViolation(err)) throw new ApiError(422, 'phone_exists', PHONE_EXISTS_MSG);
      throw err;
    }
  }
  if (confirm === true) await confirmPhone(q, userId);
}

/** createUser with a phone already registered: GoTrue's own wording for the admin API. */
export async function adminCheckPhoneFree(q: Queryable, phone: string): Promise<void> {
  if (await findUserByPhone(q, phone))
    throw new ApiError(422, 'phone_exists', 'Phone number already registered by another user');
}
