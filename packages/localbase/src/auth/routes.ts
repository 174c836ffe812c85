import crypto from 'node:crypto';
import { Hono } from 'hono';
import type { Context } from 'hono';
import type { Row } from '../db/types.ts';
import { ApiError, orDatabaseError, validationFailed } from '../http/errors.ts';
import { optBool, optObject, optString, readJsonObject } from '../http/body.ts';
import type { Body } from '../http/body.ts';
import { userJson } from './format.ts';
import { AuthService, checkPassword, normaliseEmail, pkceMatches, readPkce, validateEmail } from './service.ts';
import type { OtpTokenType, TokenResponse } from './service.ts';
import type { Attempt } from './attempts.ts';
import { mfaRoutes } from './mfa.ts';
import {
  changePhone,
  newPhoneForUpdate,
  nonceRecipient,
  phonePasswordGrant,
  phoneSignup,
  reauthenticateBySms,
  resendPhone,
  smsOtp,
  verifyPhone,
} from './phone.ts';
import { adminRoutes } from './admin.ts';
import { oauthServerRoutes } from './oauth-clients.ts';
import { UUID_RE } from './tokens.ts';
import { clientIp, useClientAddresses } from '../http/ip.ts';

export const GOTRUE_VERSION = 'v2.189.0-localbase';

function meta(c: Context): { userAgent?: string; ip: string } {
  return { userAgent: c.req.header('user-agent') ?? undefined, ip: clientIp(c) };
}

/** Merges user_metadata like GoTrue: keys set to null are removed. */
export function mergeMetadata(current: Record<string, unknown>, patch: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...current };
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = v;
  }
  return out;
}

const VERIFY_TYPES: Record<string, OtpTokenType[]> = {
  signup: ['confirmation_token'],
  invite: ['confirmation_token'],
  recovery: ['recovery_token'],
  magiclink: ['recovery_token'],
  email: ['confirmation_token', 'recovery_token'],
  email_change: ['email_change_token_new', 'email_change_token_current'],
};

/** The OAuth providers GoTrue knows; localbase has every one of them switched off (see GET /settings). */
export const OAUTH_PROVIDERS = [
  'apple', 'azure', 'bitbucket', 'discord', 'facebook', 'figma', 'fly', 'github', 'gitlab', 'google', 'kakao',
  'keycloak', 'linkedin', 'linkedin_oidc', 'notion', 'slack', 'slack_oidc', 'spotify', 'twitch', 'twitter', 'workos',
  'x', 'zoom',
] as const;

/** GoTrue's answer for an OAuth provider: known ones are "not enabled", others "could not be found". */
export function unsupportedProvider(provider: string): ApiError {
  const known = (OAUTH_PROVIDERS as readonly string[]).includes(provider.toLowerCase());
  return validationFailed(
    known ? 'Unsupported provider: provider is not enabled' : `Unsupported provider: Provider ${provider} could not be found`,
  );
}

/** GoTrue's OAuth-style error body ({ error, error_description }), as for a missing refresh_token. */
function oauthError(description: string): ApiError {
  return new ApiError(400, 'validation_failed', description, { error: 'invalid_request', error_description: description });
}

/** The unverified `iss` of a JWT, or undefined when it cannot be read. */
function tokenIssuer(jwt: string): string | undefined {
  try {
    const payload = JSON.parse(Buffer.from(jwt.split('.')[1] ?? '', 'base64url').toString('utf8')) as unknown;
    const iss = (payload as { iss?: unknown } | null)?.iss;
    return typeof iss === 'string' ? iss : undefined;
  } catch {
    return undefined;
  }
}

const OIDC_ISSUERS: Record<string, string> = {
  google: 'https://accounts.google.com',
  facebook: 'https://www.facebook.com',
  kakao: 'https://kauth.kakao.com',
  keycloak: '',
};

/**
 * signInWithIdToken (grant_type=id_token) as GoTrue answers it with every OIDC provider off: the provider is found
 * from `provider` or `issuer` (Apple and Azure from the token's own issuer), then refused as not enabled.
 */
export function idTokenProviderRefusal(provider: string, issuer: string, idToken: string): ApiError {
  const disabled = (iss: string) => new ApiError(400, 'provider_disabled', `Provider (issuer ${JSON.stringify(iss)}) is not enabled`);
  const isApple = (iss: string) => iss === 'https://appleid.apple.com';
  const isAzure = (iss: string) => iss.startsWith('https://login.microsoftonline.com/') || iss.startsWith('https://sts.windows.net/');
  for (const [name, check, label] of [
    ['apple', isApple, 'Apple'],
    ['azure', isAzure, 'Azure'],
  ] as const) {
    if (provider !== name && !check(issuer)) continue;
    const detected = tokenIssuer(idToken);
    if (detected === undefined) return validationFailed(`Unable to detect issuer in ID token for ${label} provider`);
    if (!check(detected)) return validationFailed(`Detected ID token issuer is not an ${label} ID token issuer`);
    if (issuer && issuer !== detected) return validationFailed('Provided issuer does not match ID token issuer');
    return disabled(detected);
  }
  for (const [name, iss] of Object.entries(OIDC_ISSUERS)) {
    if (provider === name || (iss !== '' && issuer === iss)) return disabled(iss);
  }
  return validationFailed(`Custom OIDC provider ${JSON.stringify(provider)} not allowed`);
}

/** GoTrue's answer to a sign-up while GOTRUE_DISABLE_SIGNUP is set. */
const signupDisabled = (): ApiError => new ApiError(422, 'signup_disabled', 'Signups not allowed for this instance');

type VerifyOutcome =
  | { kind: 'session'; tokens: TokenResponse; type: string }
  | { kind: 'code'; code: string }
  | { kind: 'message'; message: string };

export function authRoutes(svc: AuthService): Hono {
  const app = new Hono();
  const cfg = svc.cfg;

  // clientIp(c) below: the TCP peer, a trusted proxy's client-IP header, or Sb-Forwarded-For (src/http/ip.ts).
  app.use('*', useClientAddresses(svc.clientAddresses));

  // Any request that may write invalidates the GET /user read cache, before and after it runs.
  const READS = /^\/(user|health|settings|\.well-known\/jwks\.json)$/;
  app.use('*', async (c, next) => {
    const path = c.req.path.replace(/^\/auth\/v1/, '').replace(/\/$/, '');
    if (c.req.method === 'GET' && READS.test(path)) return next();
    svc.invalidate();
    try {
      await next();
    } finally {
      svc.invalidate();
    }
  });

  app.get('/health', (c) =>
    c.json({
      version: GOTRUE_VERSION,
      name: 'GoTrue',
      description: 'GoTrue is a user registration and authentication API',
    }),
  );

  app.get('/settings', (c) =>
    c.json({
      external: {
        anonymous_users: cfg.enableAnonymousSignIns,
        apple: false,
        azure: false,
        bitbucket: false,
        discord: false,
        facebook: false,
        figma: false,
        fly: false,
        github: false,
        gitlab: false,
        google: false,
        keycloak: false,
        kakao: false,
        linkedin: false,
        linkedin_oidc: false,
        notion: false,
        spotify: false,
        slack: false,
        slack_oidc: false,
        workos: false,
        twitch: false,
        twitter: false,
        x: false,
        email: true,
        phone: cfg.sms.enabled,
        zoom: false,
      },
      disable_signup: cfg.disableSignup,
      mailer_autoconfirm: !cfg.enableConfirmations,
      phone_autoconfirm: cfg.sms.autoconfirm,
      sms_provider: '',
      saml_enabled: false,
      saml_private_key_next_configured: false,
      passkeys_enabled: false,
    }),
  );

  app.get('/.well-known/jwks.json', async (c) => c.json(await svc.keys.publicJwks()));

  // ---------- sign-up ----------
  app.post('/signup', async (c) => {
    const body = await readJsonObject(c);
    const ip = clientIp(c);
    const rawEmail = optString(body, 'email');
    const password = optString(body, 'password');
    const data = optObject(body, 'data') ?? {};
    const phone = optString(body, 'phone');
    // As GoTrue's router: no email and no phone (a password is ignored) is an anonymous sign-in, refused first when
    // anonymous sign-ins are off; then its own per-address limit, then a closed instance refuses any sign-up.
    if (!rawEmail && !phone) {
      if (!cfg.enableAnonymousSignIns)
        throw new ApiError(422, 'anonymous_provider_disabled', 'Anonymous sign-ins are disabled');
      svc.limit('anonymous', ip);
      if (cfg.disableSignup) throw signupDisabled();
      const tokens = await svc.db.transaction(async (tx) => {
        const user = await svc.createAnonymousUser(tx, data);
        return svc.issueSession(tx, String(user.id), 'anonymous', meta(c));
      });
      return c.json(tokens);
    }
    if (cfg.disableSignup) throw signupDisabled();
    if (phone) return c.json(await phoneSignup(svc, c, body)); // src/auth/phone.ts
    if (!rawEmail) throw validationFailed('To signup, please provide your email');
    const email = validateEmail(rawEmail);
    if (!password) throw validationFailed('Signup requires a valid password');
    checkPassword(password, cfg.minPasswordLength);
    svc.limit('signUp', ip);
    const redirectTo = c.req.query('redirect_to');
    const pkce = readPkce(body);
    const hash = await svc.hashPassword(password);

    // the lookup of the address is the sign-up's first statement: GoTrue's message when the database is out of reach
    const signup = svc.db.transaction(async (tx): Promise<TokenResponse | Record<string, unknown>> => {
      const existing = await svc.findUserByEmail(tx, email);
      if (!cfg.enableConfirmations) {
        if (existing && svc.isConfirmed(existing))
          throw new ApiError(422, 'user_already_exists', 'User already registered');
        let userId: string;
        if (existing) {
          userId = String(existing.id);
          await tx.query(
            `update auth.users set encrypted_password = $2, updated_at = now(),
               raw_user_meta_data = coalesce(raw_user_meta_data, '{}'::jsonb) || $3::jsonb where id = $1`,
            [userId, hash, JSON.stringify(data)],
          );
          await svc.confirmEmail(tx, userId);
        } else {
          const u = await svc.createUser(tx, { email, passwordHash: hash, confirmed: true, userMetadata: data });
          userId = String(u.id);
        }
        return svc.issueSession(tx, userId, 'password', meta(c));
      }
      if (existing && svc.isConfirmed(existing)) {
        // Anti-enumeration: answer like a new sign-up, with an obfuscated user and no email.
        const now = new Date().toISOString();
        const fakeId = crypto.randomUUID();
        return {
          id: fakeId,
          aud: 'authenticated',
          role: 'authenticated',
          email,
          phone: '',
          confirmation_sent_at: now,
          app_metadata: { provider: 'email', providers: ['email'] },
          user_metadata: { sub: fakeId, email, email_verified: false, phone_verified: false, ...data },
          identities: [],
          created_at: now,
          updated_at: now,
          is_anonymous: false,
        };
      }
      svc.limitEmail(ip, email);
      let user: Row;
      if (existing) {
        await tx.query(
          `update auth.users set encrypted_password = $2, updated_at = now(),
             raw_user_meta_data = coalesce(raw_user_meta_data, '{}'::jsonb) || $3::jsonb where id = $1`,
          [existing.id, hash, JSON.stringify(data)],
        );
        user = existing;
      } else {
        user = await svc.createUser(tx, { email, passwordHash: hash, confirmed: false, userMetadata: data });
      }
      await svc.sendOtpMail(tx, {
        user,
        to: email,
        mailType: 'signup',
        tokenType: 'confirmation_token',
        redirectTo,
          pkce,
      });
      return userJson(await svc.reloadUser(tx, String(user.id)));
    });
    const result = await orDatabaseError('Database error finding user', signup);
    return c.json(result);
  });

  // ---------- tokens ----------
  app.post('/token', async (c) => {
    const grantType = c.req.query('grant_type');
    // As GoTrue's Token: the grant type (and Web3 being off) is answered before the body is read
    if (grantType === 'web3') throw new ApiError(422, 'web3_provider_disabled', 'Web3 provider is disabled');
    if (!['password', 'refresh_token', 'pkce', 'id_token'].includes(grantType ?? ''))
      throw new ApiError(400, 'invalid_credentials', 'unsupported_grant_type');
    const body = await readJsonObject(c);
    const ip = clientIp(c);
    if (grantType === 'password') {
      const rawEmail = optString(body, 'email');
      const password = optString(body, 'password');
      if (optString(body, 'phone')) return c.json(await phonePasswordGrant(svc, c, body)); // src/auth/phone.ts
      if (!rawEmail) throw validationFailed('Please provide an email address');
      if (password === undefined) throw validationFailed('Please provide a password');
      svc.limit('token', ip); // as GoTrue: a password grant counts with the refreshes (token_refresh), not the sign-ups
      const email = normaliseEmail(rawEmail); // looked up as sent, as GoTrue (no format check here)
      const found = await orDatabaseError('Database error querying schema', svc.findUserByEmail(svc.db, email));
      const user = await svc.checkPasswordSignIn(found, email, password, ip);
      // As GoTrue: an unconfirmed address cannot sign in with a password, whatever the confirmation setting
      // (with confirmations off every sign-up is confirmed at once; admin-created users may not be).
      if (!svc.isConfirmed(user)) throw new ApiError(400, 'email_not_confirmed', 'Email not confirmed');
      const tokens = await svc.db.transaction((tx) => svc.issueSession(tx, String(user.id), 'password', meta(c)));
      return c.json(tokens);
    }
    if (grantType === 'refresh_token') {
      const rt = optString(body, 'refresh_token');
      if (!rt)
        return c.json(
          {
            code: 'validation_failed',
            message: 'refresh_token required',
            error: 'invalid_request',
            error_description: 'refresh_token required',
          },
          400,
        );
      svc.limit('token', ip);
      return c.json(await svc.refresh(rt));
    }
    if (grantType === 'pkce') {
      const authCode = optString(body, 'auth_code');
      const verifier = optString(body, 'code_verifier');
      if (!authCode || !verifier)
        throw validationFailed('invalid request: both auth code and code verifier should be non-empty');
      svc.limit('verify', ip);
      const outcome = await svc.db.transaction(async (tx) => {
        const r = await tx.query(
          `select *, coalesce(auth_code_issued_at, created_at) < now() - interval '300 seconds' as expired
           from auth.flow_state where auth_code = $1 for update`,
          [authCode],
        );
        const flow = r.rows[0];
        if (!flow) return { error: new ApiError(404, 'flow_state_not_found', 'invalid flow state, no valid flow state found') };
        if (flow.expired) {
          await tx.query('delete from auth.flow_state where id = $1', [flow.id]);
          return { error: new ApiError(400, 'flow_state_expired', 'invalid flow state, flow state has expired') };
        }
        if (!pkceMatches(verifier, String(flow.code_challenge), String(flow.code_challenge_method)))
          return {
            error: new ApiError(403, 'bad_code_verifier', 'code challenge does not match previously saved code verifier'),
          };
        await tx.query('delete from auth.flow_state where id = $1', [flow.id]);
        const userId = String(flow.user_id);
        const method = flow.authentication_method === 'recovery' || flow.authentication_method === 'magiclink'
          ? String(flow.authentication_method)
          : 'otp';
        return { tokens: await svc.issueSession(tx, userId, method, meta(c)) };
      });
      if ('error' in outcome) throw outcome.error;
      return c.json(outcome.tokens);
    }
    if (grantType === 'id_token') {
      const idToken = optString(body, 'id_token');
      if (!idToken) throw oauthError('id_token required');
      const provider = optString(body, 'provider') ?? '';
      if (!provider && (!optString(body, 'client_id') || !optString(body, 'issuer')))
        throw oauthError('provider or client_id and issuer required');
      throw idTokenProviderRefusal(provider, optString(body, 'issuer') ?? '', idToken);
    }
    throw new ApiError(400, 'invalid_credentials', 'unsupported_grant_type');
  });

  // ---------- OAuth, SSO: every provider is switched off ----------
  app.get('/authorize', (c) => {
    throw unsupportedProvider(c.req.query('provider') ?? '');
  });
  const samlDisabled = (): never => {
    throw new ApiError(404, 'saml_provider_disabled', 'SAML 2.0 is disabled');
  };
  app.all('/sso', samlDisabled);
  app.all('/sso/*', samlDisabled);
  // Passkeys (WebAuthn sign-in) are not offered: GoTrue with GOTRUE_PASSKEY_ENABLED off checks that first, before
  // any token, on every /passkeys route. (The admin API's passkey routes: admin.ts.)
  const passkeysDisabled = (): never => {
    throw new ApiError(404, 'passkey_disabled', 'Passkeys are disabled');
  };
  app.all('/passkeys', passkeysDisabled);
  app.all('/passkeys/*', passkeysDisabled);

  // ---------- the signed-in user ----------
  app.get('/user', async (c) => {
    const body = await svc.currentUserBody(c.req.header('authorization'));
    return c.body(body, 200, { 'Content-Type': 'application/json' });
  });

  app.put('/user', async (c) => {
    const ctx = await svc.authenticate(c.req.header('authorization'));
    const body = await readJsonObject(c);
    const ip = clientIp(c);
    const data = optObject(body, 'data');
    const password = optString(body, 'password');
    const rawEmail = optString(body, 'email');
    const newPhone = await newPhoneForUpdate(svc, ctx.user, body); // src/auth/phone.ts
    const redirectTo = c.req.query('redirect_to');
    const pkce = readPkce(body);
    const userId = String(ctx.user.id);
    const aal2 = ctx.session.aal === 'aal2';
    const nonce = optString(body, 'nonce');
    if (nonce) {
      // Returned, not thrown: a wrong nonce is counted and may delete the pending codes, which must commit.
      const valid = await svc.db.transaction(async (tx) => {
        try {
          const { to, expirySeconds } = nonceRecipient(svc, ctx.user); // the email, or the phone (src/auth/phone.ts)
          await svc.consumeOtp(tx, ['reauthentication_token'], { email: to, otp: nonce }, expirySeconds);
          return true;
        } catch (err) {
          if (err instanceof ApiError) return false;
          throw err;
        }
      });
      if (!valid) throw new ApiError(400, 'reauthentication_not_valid', 'Requires reauthentication');
    }
    let newHash: string | undefined;
    if (password !== undefined) {
      checkPassword(password, cfg.minPasswordLength);
      if (svc.hasVerifiedFactor(ctx.user) && !aal2)
        throw new ApiError(401, 'insufficient_aal', 'AAL2 session is required to update email or password when MFA is enabled.');
      // As GoTrue: a guest may set a password only together with an email (or phone) in the same request.
      if (ctx.user.is_anonymous && password !== '' && !rawEmail)
        throw new ApiError(422, 'validation_failed', 'Updating password of an anonymous user without an email or phone is not allowed');
      if (await svc.passwordMatches(ctx.user.encrypted_password as string | null, password))
        throw new ApiError(422, 'same_password', 'New password should be different from the old password.');
      newHash = await svc.hashPassword(password);
    }
    let newEmail: string | undefined;
    if (rawEmail !== undefined && normaliseEmail(rawEmail) !== String(ctx.user.email ?? '').toLowerCase()) {
      newEmail = validateEmail(rawEmail);
      if (svc.hasVerifiedFactor(ctx.user) && !aal2)
        throw new ApiError(401, 'insufficient_aal', 'AAL2 session is required to update email or password when MFA is enabled.');
    }
    // GoTrue: a guest adding an email while confirmations are off (mailer autoconfirm) gets it at once, like a
    // sign-up; everyone else confirms the new address from the mail.
    const convertNow = Boolean(ctx.user.is_anonymous) && !cfg.enableConfirmations;
    const updated = await svc.db.transaction(async (tx) => {
      if (data) {
        const cur = await tx.query<{ m: Record<string, unknown> | null }>(
          'select raw_user_meta_data as m from auth.users where id = $1 for update',
          [userId],
        );
        const merged = mergeMetadata(cur.rows[0]?.m ?? {}, data);
        await tx.query('update auth.users set raw_user_meta_data = $2::jsonb, updated_at = now() where id = $1', [
          userId,
          JSON.stringify(merged),
        ]);
      }
      if (newHash) {
        await tx.query('update auth.users set encrypted_password = $2, updated_at = now() where id = $1', [
          userId,
          newHash,
        ]);
        // A password change signs out every other session of the user.
        await tx.query('delete from auth.sessions where user_id = $1 and id <> $2', [userId, ctx.session.id]);
      }
      if (newEmail) {
        const taken = await svc.findUserByEmail(tx, newEmail);
        if (taken && String(taken.id) !== userId)
          throw new ApiError(422, 'email_exists', 'A user with this email address has already been registered');
        if (convertNow) {
          await svc.confirmEmailChange(tx, ctx.user, newEmail);
          return svc.reloadUser(tx, userId);
        }
        svc.limitEmail(ip, newEmail);
        await tx.query(
          'update auth.users set email_change = $2, email_change_confirm_status = 0, updated_at = now() where id = $1',
          [userId, newEmail],
        );
        await tx.query(
          "delete from auth.one_time_tokens where user_id = $1 and token_type in ('email_change_token_new', 'email_change_token_current')",
          [userId],
        );
        await svc.sendOtpMail(tx, {
          user: ctx.user,
          to: newEmail,
          mailType: 'email_change',
          tokenType: 'email_change_token_new',
          redirectTo,
          pkce,
        });
        // double_confirm_changes (Supabase default): the current address confirms too.
        if (ctx.user.email && svc.isConfirmed(ctx.user)) {
          await svc.sendOtpMail(tx, {
            user: ctx.user,
            to: String(ctx.user.email),
            mailType: 'email_change',
            tokenType: 'email_change_token_current',
            redirectTo,
          pkce,
          });
        }
      }
      if (newPhone) await changePhone(svc, c, tx, userId, newPhone);
      return svc.reloadUser(tx, userId);
    });
    return c.json(userJson(updated));
  });

  // reauthenticate(): mails a one-time code (the nonce). localbase, like the Supabase CLI default
  // (secure_password_change off), does not require it for PUT /user; a nonce sent there is checked if present.
  app.get('/reauthenticate', async (c) => {
    const ctx = await svc.authenticate(c.req.header('authorization'));
    const email = String(ctx.user.email ?? '');
    if (!email && ctx.user.phone) return c.json(await reauthenticateBySms(svc, c, ctx.user)); // src/auth/phone.ts
    // As GoTrue: a guest has no address to send the code to; an unconfirmed address is refused too.
    if (!email) throw validationFailed('Reauthentication requires the user to have an email or a phone number');
    if (!svc.isConfirmed(ctx.user)) throw new ApiError(422, 'email_not_confirmed', 'Please verify your email first.');
    svc.limitEmail(clientIp(c), email);
    await svc.db.transaction((tx) =>
      svc.sendOtpMail(tx, { user: ctx.user, to: email, mailType: 'reauthentication', tokenType: 'reauthentication_token' }),
    );
    return c.json({});
  });

  app.post('/logout', async (c) => {
    const ctx = await svc.authenticate(c.req.header('authorization'));
    const scope = c.req.query('scope') ?? 'global';
    const userId = String(ctx.user.id);
    const sessionId = String(ctx.session.id);
    if (scope === 'local') await svc.db.query('delete from auth.sessions where id = $1', [sessionId]);
    else if (scope === 'others')
      await svc.db.query('delete from auth.sessions where user_id = $1 and id <> $2', [userId, sessionId]);
    else if (scope === 'global') await svc.db.query('delete from auth.sessions where user_id = $1', [userId]);
    else throw validationFailed('Unsupported logout scope "' + scope + '"');
    return c.body(null, 204);
  });

  // ---------- emails ----------
  app.post('/recover', async (c) => {
    const body = await readJsonObject(c);
    const rawEmail = optString(body, 'email');
    if (!rawEmail) throw validationFailed('Password recovery requires an email');
    const email = validateEmail(rawEmail);
    svc.limitEmail(clientIp(c), email);
    const redirectTo = c.req.query('redirect_to');
    const pkce = readPkce(body);
    const recovery = svc.db.transaction(async (tx) => {
      const user = await svc.findUserByEmail(tx, email);
      if (!user) return; // no enumeration: the same answer as for a known email
      await svc.sendOtpMail(tx, { user, to: email, mailType: 'recovery', tokenType: 'recovery_token', redirectTo, pkce });
    });
    await orDatabaseError('Unable to process request', recovery);
    return c.json({});
  });

  app.post('/otp', async (c) => {
    const body = await readJsonObject(c);
    const rawEmail = optString(body, 'email');
    if (optString(body, 'phone')) return c.json(await smsOtp(svc, c, body)); // src/auth/phone.ts
    if (!rawEmail) throw validationFailed('An email address is required');
    const email = validateEmail(rawEmail);
    const createUser = optBool(body, 'create_user') ?? true;
    const data = optObject(body, 'data') ?? {};
    svc.limitEmail(clientIp(c), email);
    const redirectTo = c.req.query('redirect_to');
    const pkce = readPkce(body);
    const otp = svc.db.transaction(async (tx) => {
      let user = await svc.findUserByEmail(tx, email);
      if (!user) {
        if (!createUser) throw new ApiError(422, 'otp_disabled', 'Signups not allowed for otp');
        if (cfg.disableSignup) throw signupDisabled();
        user = await svc.createUser(tx, { email, passwordHash: null, confirmed: false, userMetadata: data });
      }
      if (svc.isConfirmed(user))
        await svc.sendOtpMail(tx, { user, to: email, mailType: 'magiclink', tokenType: 'recovery_token', redirectTo, pkce });
      else
        await svc.sendOtpMail(tx, { user, to: email, mailType: 'signup', tokenType: 'confirmation_token', redirectTo, pkce });
    });
    await orDatabaseError('Database error finding user', otp);
    return c.json({});
  });

  app.post('/resend', async (c) => {
    const body = await readJsonObject(c);
    const type = optString(body, 'type');
    const rawEmail = optString(body, 'email');
    if (type === 'sms' || type === 'phone_change') return c.json(await resendPhone(svc, c, body)); // src/auth/phone.ts
    if (type !== 'signup' && type !== 'email_change')
      throw validationFailed('Missing one of these types: signup, email_change, sms, phone_change');
    if (!rawEmail) throw validationFailed('Email is required');
    const email = validateEmail(rawEmail);
    svc.limitEmail(clientIp(c), email);
    const redirectTo = c.req.query('redirect_to');
    const pkce = readPkce(body);
    await svc.db.transaction(async (tx) => {
      if (type === 'signup') {
        const user = await svc.findUserByEmail(tx, email);
        if (!user || svc.isConfirmed(user)) return;
        await svc.sendOtpMail(tx, { user, to: email, mailType: 'signup', tokenType: 'confirmation_token', redirectTo, pkce });
      } else {
        const r = await tx.query(
          `select * from auth.users where (lower(email) = $1 or lower(email_change) = $1) and coalesce(email_change, '') <> ''`,
          [email],
        );
        const user = r.rows[0];
        if (!user) return;
        await svc.sendOtpMail(tx, {
          user,
          to: String(user.email_change),
          mailType: 'email_change',
          tokenType: 'email_change_token_new',
          redirectTo,
          pkce,
        });
      }
    });
    return c.json({});
  });

  // ---------- verify ----------
  async function verify(
    c: Context,
    type: string,
    by: { hash: string } | { email: string; otp: string },
    amrMethod: string,
    viaLink = false,
  ): Promise<VerifyOutcome> {
    const types = VERIFY_TYPES[type];
    if (!types) throw validationFailed(`Verify requires a verification type`);
    const ip = clientIp(c);
    svc.limit('verify', ip);
    // A 6-digit code can be guessed: per recipient, wrong codes hold further tries back (a token_hash cannot).
    let attempt: Attempt | undefined;
    if ('email' in by) {
      const owner = await svc.findUserByEmail(svc.db, by.email);
      attempt = svc.attempts.begin('otp', by.email, ip, owner ? svc.attempts.isKnownAddress(String(owner.id), ip) : false);
    }
    const transaction = svc.db.transaction(async (tx): Promise<VerifyOutcome | { error: ApiError }> => {
      let consumed;
      try {
        consumed = await svc.consumeOtp(tx, types, by);
      } catch (err) {
        if (err instanceof ApiError) {
          attempt?.failed();
          return { error: err };
        }
        throw err;
      }
      attempt?.succeeded();
      const user = await svc.findUserById(tx, consumed.userId);
      if (!user) return { error: new ApiError(403, 'otp_expired', 'Token has expired or is invalid') };
      if (svc.isBanned(user)) return { error: new ApiError(403, 'user_banned', 'User is banned') };
      const userId = String(user.id);
      if (consumed.tokenType === 'confirmation_token' || consumed.tokenType === 'recovery_token') {
        await svc.confirmEmail(tx, userId);
        if (user.invited_at && consumed.tokenType === 'confirmation_token')
          await tx.query('update auth.users set invited_at = coalesce(invited_at, now()) where id = $1', [userId]);
      } else {
        // email change: with two pending tokens the first confirmation only records progress.
        const other = await tx.query(
          "select 1 from auth.one_time_tokens where user_id = $1 and token_type in ('email_change_token_new', 'email_change_token_current')",
          [userId],
        );
        if (other.rows.length > 0) {
          await tx.query('update auth.users set email_change_confirm_status = 1 where id = $1', [userId]);
          return {
            kind: 'message',
            message: 'Confirmation link accepted. Please proceed to confirm link sent to the other email',
          };
        }
        const newEmail = String(user.email_change ?? '');
        if (!newEmail) return { error: new ApiError(403, 'otp_expired', 'Token has expired or is invalid') };
        try {
          await svc.confirmEmailChange(tx, user, newEmail);
        } catch (err) {
          if (err instanceof ApiError) return { error: err };
          throw err;
        }
      }
      if (viaLink && consumed.pkce) {
        // PKCE: the browser gets ?code=, which the client exchanges with its verifier at /token?grant_type=pkce.
        const flow = await tx.query<{ id: string; auth_code: string }>(
          `select id, auth_code from auth.flow_state where user_id = $1 and auth_code_issued_at is null
           order by created_at desc limit 1`,
          [userId],
        );
        if (flow.rows[0]) {
          await tx.query('update auth.flow_state set auth_code_issued_at = now(), updated_at = now() where id = $1', [
            flow.rows[0].id,
          ]);
          return { kind: 'code', code: flow.rows[0].auth_code };
        }
      }
      const tokens = await svc.issueSession(tx, userId, amrMethod, meta(c));
      return { kind: 'session', tokens, type };
    });
    const outcome = await transaction.finally(() => attempt?.release()); // no-op once failed/succeeded was reported
    if ('error' in outcome) throw outcome.error;
    return outcome;
  }

  app.post('/verify', async (c) => {
    const body: Body = await readJsonObject(c);
    const type = optString(body, 'type');
    const token = optString(body, 'token');
    const tokenHash = optString(body, 'token_hash');
    const rawEmail = optString(body, 'email');
    if (!type) throw validationFailed('Verify requires a verification type');
    if (!rawEmail && (optString(body, 'phone') || type === 'sms' || type === 'phone_change'))
      return c.json(await verifyPhone(svc, c, body)); // src/auth/phone.ts
    let outcome: VerifyOutcome;
    if (tokenHash) {
      if (rawEmail) throw validationFailed('Only the token_hash and type should be provided');
      outcome = await verify(c, type, { hash: tokenHash }, 'otp');
    } else if (token) {
      if (!rawEmail) throw validationFailed('Only an email address or phone number should be provided on verify');
      let email: string;
      try {
        email = validateEmail(rawEmail);
      } catch {
        throw new ApiError(422, 'validation_failed', 'Invalid email format'); // GoTrue's verify.go says it so
      }
      outcome = await verify(c, type, { email, otp: token }, 'otp'); // hashed as sent, as GoTrue (no trim)
    } else {
      throw validationFailed('Verify requires either a token or a token hash');
    }
    if (outcome.kind === 'message') return c.json({ msg: outcome.message, code: 200 });
    if (outcome.kind === 'code') throw new ApiError(500, 'unexpected_failure', 'PKCE code outside a link');
    return c.json(outcome.tokens);
  });

  app.get('/verify', async (c) => {
    const type = c.req.query('type') ?? '';
    const token = c.req.query('token') ?? '';
    const redirect = svc.redirectTo(c.req.query('redirect_to'));
    const base = redirect.split('#')[0]!;
    try {
      if (!token) throw new ApiError(403, 'otp_expired', 'Email link is invalid or has expired');
      const method = type === 'recovery' ? 'recovery' : type === 'magiclink' ? 'magiclink' : 'otp';
      const outcome = await verify(c, type, { hash: token }, method, true);
      if (outcome.kind === 'message') {
        return c.redirect(`${base}#${new URLSearchParams({ message: outcome.message })}`, 303);
      }
      if (outcome.kind === 'code') {
        const u = new URL(base);
        u.searchParams.set('code', outcome.code);
        return c.redirect(u.toString(), 303);
      }
      const t = outcome.tokens;
      const frag = new URLSearchParams({
        access_token: t.access_token,
        expires_at: String(t.expires_at),
        expires_in: String(t.expires_in),
        refresh_token: t.refresh_token,
        token_type: 'bearer',
        type,
      });
      return c.redirect(`${base}#${frag}`, 303);
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      const code = err.code === 'otp_expired' ? 'otp_expired' : err.code;
      const desc = err.code === 'otp_expired' ? 'Email link is invalid or has expired' : err.message;
      const error = err.status === 429 ? 'over_request_rate_limit' : 'access_denied';
      return c.redirect(`${base}#${new URLSearchParams({ error, error_code: code, error_description: desc })}`, 303);
    }
  });

  // ---------- identities (manual linking) ----------
  const manualLinkingDisabled = (): ApiError => new ApiError(404, 'manual_linking_disabled', 'Manual linking is disabled');

  // linkIdentity(): with linking on, every OAuth provider is still off in localbase, so the provider is refused.
  app.get('/user/identities/authorize', async (c) => {
    await svc.authenticate(c.req.header('authorization'));
    if (!cfg.enableManualLinking) throw manualLinkingDisabled();
    throw unsupportedProvider(c.req.query('provider') ?? '');
  });

  app.delete('/user/identities/:id', async (c) => {
    const ctx = await svc.authenticate(c.req.header('authorization'));
    if (!cfg.enableManualLinking) throw manualLinkingDisabled();
    const identityId = c.req.param('id');
    if (!UUID_RE.test(identityId)) throw new ApiError(404, 'validation_failed', 'identity_id must be an UUID');
    const userId = String(ctx.user.id);
    await svc.db.transaction(async (tx) => {
      const r = await tx.query<{ id: string; provider: string; email: string | null }>(
        `select id::text as id, provider, identity_data->>'email' as email from auth.identities
         where user_id = $1 order by created_at for update`,
        [userId],
      );
      if (r.rows.length <= 1)
        throw new ApiError(422, 'single_identity_not_deletable', 'User must have at least 1 identity after unlinking');
      const target = r.rows.find((i) => i.id.toLowerCase() === identityId.toLowerCase());
      if (!target) throw new ApiError(422, 'identity_not_found', "Identity doesn't exist");
      await tx.query('delete from auth.identities where id = $1', [target.id]);
      const rest = r.rows.filter((i) => i !== target);
      // app_metadata.providers lists the remaining identities' providers; provider stays the first one.
      const providers = [...new Set(rest.map((i) => i.provider))];
      await tx.query(
        `update auth.users set raw_app_meta_data = coalesce(raw_app_meta_data, '{}'::jsonb)
           || jsonb_build_object('providers', $2::jsonb), updated_at = now() where id = $1`,
        [userId, JSON.stringify(providers)],
      );
      // The user's address follows the identities left (GoTrue's UpdateUserEmailFromIdentities).
      if (target.email && String(ctx.user.email ?? '').toLowerCase() === target.email.toLowerCase()) {
        const next = rest.find((i) => i.email)?.email ?? null;
        try {
          await tx.query('update auth.users set email = $2 where id = $1', [userId, next]);
        } catch (err) {
          if ((err as { code?: string }).code === '23505')
            throw new ApiError(403, 'email_conflict_identity_not_deletable', 'Unable to unlink identity due to email conflict');
          throw err;
        }
      }
    });
    return c.json({});
  });

  app.route('/factors', mfaRoutes(svc));
  app.route('/admin', adminRoutes(svc));
  app.route('/', oauthServerRoutes(svc));

  app.post('/invite', async (c) => {
    await svc.requireAdmin(c.req.header('authorization'));
    const body = await readJsonObject(c);
    const rawEmail = optString(body, 'email');
    if (!rawEmail) throw validationFailed('Invite requires an email address');
    const email = validateEmail(rawEmail);
    const data = optObject(body, 'data') ?? {};
    const redirectTo = c.req.query('redirect_to');
    const pkce = readPkce(body);
    const user = await svc.db.transaction(async (tx) => {
      let u = await svc.findUserByEmail(tx, email);
      if (u && svc.isConfirmed(u))
        throw new ApiError(422, 'email_exists', 'A user with this email address has already been registered');
      if (!u)
        u = await svc.createUser(tx, {
          email,
          passwordHash: null,
          confirmed: false,
          userMetadata: data,
          invited: true,
          metadataAsGiven: true,
        });
      await svc.sendOtpMail(tx, { user: u, to: email, mailType: 'invite', tokenType: 'confirmation_token', redirectTo, pkce });
      return svc.reloadUser(tx, String(u.id));
    });
    return c.json(userJson(user));
  });

  return app;
}
