import crypto from 'node:crypto';
import { Hono } from 'hono';
import { Secret, TOTP } from 'otpauth';
import QRCode from 'qrcode';
import { ApiError, validationFailed } from '../http/errors.ts';
import { optString, readJsonObject } from '../http/body.ts';
import type { AuthService } from './service.ts';
import { clientIp } from '../http/ip.ts';
import { UUID_RE } from './tokens.ts';

export const MFA_EXPIRY_SECONDS = 300;
export const TOTP_PERIOD = 30;

export function makeTotp(secretBase32: string, issuer: string, label: string): TOTP {
  return new TOTP({
    issuer,
    label,
    algorithm: 'SHA1',
    digits: 6,
    period: TOTP_PERIOD,
    secret: Secret.fromBase32(secretBase32),
  });
}

/**
 * Checks a TOTP code with ±1 step of skew. Returns the time step it matched, or null.
 * A step at or below lastUsedStep is refused, so each code is accepted once.
 */
export function matchTotpStep(
  totp: TOTP,
  code: string,
  lastUsedStep: number | null,
  nowMs: number = Date.now(),
): number | null {
  if (!/^\d{6}$/.test(code)) return null;
  const delta = totp.validate({ token: code, timestamp: nowMs, window: 1 });
  if (delta === null) return null;
  const step = Math.floor(nowMs / 1000 / TOTP_PERIOD) + delta;
  if (lastUsedStep !== null && step <= lastUsedStep) return null;
  return step;
}

export function mfaRoutes(svc: AuthService): Hono {
  const app = new Hono();
  const issuerDefault = (() => {
    try {
      return new URL(svc.cfg.siteUrl).host;
    } catch {
      return 'localbase';
    }
  })();

  async function purgeExpiredFactors(userId: string): Promise<void> {
    await svc.db.query(
      `delete from auth.mfa_factors where user_id = $1 and status = 'unverified'
       and created_at < now() - make_interval(secs => $2)`,
      [userId, MFA_EXPIRY_SECONDS],
    );
  }

  app.post('/', async (c) => {
    const ctx = await svc.authenticate(c.req.header('authorization'), { notAnonymous: true });
    const body = await readJsonObject(c);
    const factorType = optString(body, 'factor_type');
    const friendlyName = optString(body, 'friendly_name') ?? '';
    const issuer = optString(body, 'issuer') || issuerDefault;
    if (factorType === 'phone') throw new ApiError(422, 'mfa_phone_enroll_not_enabled', 'MFA enroll is disabled for Phone');
    if (factorType === 'webauthn')
      throw new ApiError(422, 'mfa_webauthn_enroll_not_enabled', 'MFA enroll is disabled for WebAuthn');
    if (factorType !== 'totp') throw validationFailed('factor_type needs to be totp, phone or webauthn');
    const userId = String(ctx.user.id);
    await purgeExpiredFactors(userId);
    const factors = (
      await svc.db.query<{ friendly_name: string | null; status: string }>(
        'select friendly_name, status from auth.mfa_factors where user_id = $1',
        [userId],
      )
    ).rows;
    if (factors.some((f) => f.status === 'verified') && ctx.session.aal !== 'aal2')
      throw new ApiError(403, 'insufficient_aal', 'AAL2 required to enroll a new factor');
    if (factors.some((f) => (f.friendly_name ?? '') === friendlyName))
      throw new ApiError(
        422,
        'mfa_factor_name_conflict',
        `A factor with the friendly name "${friendlyName}" for this user already exists`,
      );
    if (factors.length >= svc.cfg.mfaMaxEnrolledFactors)
      throw new ApiError(422, 'too_many_enrolled_mfa_factors', 'Maximum number of verified factors reached, unenroll to continue');
    const secret = new Secret({ size: 20 }).base32;
    const label = String(ctx.user.email || ctx.user.phone || userId);
    const uri = makeTotp(secret, issuer, label).toString();
    const qr = await QRCode.toString(uri, { type: 'svg', errorCorrectionLevel: 'M', margin: 1 });
    const id = crypto.randomUUID();
    await svc.db.query(
      `insert into auth.mfa_factors (id, user_id, friendly_name, factor_type, status, created_at, updated_at, secret)
       values ($1, $2, $3, 'totp', 'unverified', now(), now(), $4)`,
      [id, userId, friendlyName, secret],
    );
    return c.json({
      id,
      type: 'totp',
      friendly_name: friendlyName,
      totp: { qr_code: qr, secret, uri },
    });
  });

  app.post('/:id/challenge', async (c) => {
    const ctx = await svc.authenticate(c.req.header('authorization'), { notAnonymous: true });
    const factorId = wellFormedFactorId(c.req.param('id'));
    await readJsonObject(c, { emptyIsObject: true }); // the client sends {factorId}; ignored, but must be valid JSON
    const userId = String(ctx.user.id);
    await purgeExpiredFactors(userId);
    const id = crypto.randomUUID();
    // The factor is looked up and locked in the transaction that adds the challenge: an unenrolment at the same
    // moment (another request, on PostgreSQL truly concurrent) then either waits for it or is seen as not found,
    // never a challenge inserted for a factor deleted in between (a foreign-key failure, a 500).
    const r = await svc.db.transaction(async (tx) => {
      const f = (await tx.query('select id from auth.mfa_factors where id = $1 and user_id = $2 for update', [factorId, userId])).rows[0];
      if (!f) return null;
      const ch = await tx.query<{ created: number }>(
        `insert into auth.mfa_challenges (id, factor_id, created_at, ip_address) values ($1, $2, now(), $3)
         returning floor(extract(epoch from created_at))::int as created`,
        [id, factorId, clientIp(c)],
      );
      await tx.query('update auth.mfa_factors set last_challenged_at = now(), updated_at = now() where id = $1', [factorId]);
      const row = ch.rows[0];
      if (!row) throw new Error('insert into auth.mfa_challenges returned no row');
      return row;
    });
    if (!r) throw new ApiError(404, 'mfa_factor_not_found', 'Factor not found');
    return c.json({ id, type: 'totp', expires_at: Number(r.created) + MFA_EXPIRY_SECONDS });
  });

  app.post('/:id/verify', async (c) => {
    const ctx = await svc.authenticate(c.req.header('authorization'), { notAnonymous: true });
    const factorId = wellFormedFactorId(c.req.param('id'));
    const body = await readJsonObject(c);
    const challengeId = optString(body, 'challenge_id');
    const code = (optString(body, 'code') ?? '').trim();
    if (!challengeId) throw validationFailed('challenge_id is required');
    const userId = String(ctx.user.id);
    const sessionId = String(ctx.session.id);
    const ip = clientIp(c);
    // Per account: wrong TOTP codes hold further tries back (refused before the code is looked at).
    const attempt = svc.attempts.begin('totp', userId, ip, svc.attempts.isKnownAddress(userId, ip));
    const transaction = svc.db.transaction(async (tx) => {
      const f = (await tx.query('select * from auth.mfa_factors where id = $1 and user_id = $2 for update', [factorId, userId])).rows[0];
      if (!f) return { error: new ApiError(404, 'mfa_factor_not_found', 'Factor not found') };
      const ch = UUID_RE.test(challengeId)
        ? (
            await tx.query(
              `select *, created_at < now() - make_interval(secs => $3) as expired
               from auth.mfa_challenges where id = $1 and factor_id = $2 for update`,
              [challengeId, factorId, MFA_EXPIRY_SECONDS],
            )
          ).rows[0]
        : undefined;
      if (!ch)
        return {
          error: new ApiError(422, 'mfa_factor_not_found', 'MFA factor with the provided challenge ID not found'),
        };
      if (ch.verified_at || ch.ip_address !== ip)
        return { error: new ApiError(422, 'mfa_ip_address_mismatch', 'Challenge and verify IP addresses mismatch.') };
      if (ch.expired) {
        await tx.query('delete from auth.mfa_challenges where id = $1', [challengeId]);
        return {
          error: new ApiError(
            422,
            'mfa_challenge_expired',
            `MFA challenge ${challengeId} has expired, verify against another challenge or create a new challenge.`,
          ),
        };
      }
      const totp = makeTotp(String(f.secret), 'localbase', String(ctx.user.email ?? ''));
      const last = f.last_used_step === null || f.last_used_step === undefined ? null : Number(f.last_used_step);
      const step = matchTotpStep(totp, code, last);
      if (step === null) {
        attempt.failed();
        return { error: new ApiError(422, 'mfa_verification_failed', 'Invalid TOTP code entered') };
      }
      attempt.succeeded();
      await tx.query('update auth.mfa_challenges set verified_at = now() where id = $1', [challengeId]);
      const firstVerification = f.status !== 'verified';
      await tx.query(
        "update auth.mfa_factors set status = 'verified', last_used_step = $2, updated_at = now() where id = $1",
        [factorId, step],
      );
      if (firstVerification) {
        // Other unverified TOTP factors go; other sessions below aal2 are signed out.
        await tx.query(
          "delete from auth.mfa_factors where user_id = $1 and id <> $2 and status = 'unverified' and factor_type = 'totp'",
          [userId, factorId],
        );
        await tx.query("delete from auth.sessions where user_id = $1 and id <> $2 and aal = 'aal1'", [userId, sessionId]);
      }
      await tx.query("update auth.sessions set aal = 'aal2', factor_id = $2, updated_at = now() where id = $1", [
        sessionId,
        factorId,
      ]);
      await svc.addAmr(tx, sessionId, 'totp');
      // Rotate: the session's active refresh tokens are replaced by one new token.
      const active = await tx.query<{ token: string }>(
        'select token from auth.refresh_tokens where session_id = $1 and revoked = false order by id desc limit 1',
        [sessionId],
      );
      await tx.query('update auth.refresh_tokens set revoked = true, updated_at = now() where session_id = $1 and revoked = false', [
        sessionId,
      ]);
      const rt = await svc.insertRefreshToken(tx, userId, sessionId, active.rows[0]?.token ?? null);
      return { tokens: await svc.tokenResponse(tx, userId, sessionId, rt) };
    });
    const outcome = await transaction.finally(() => attempt.release()); // no-op once failed/succeeded was reported
    if ('error' in outcome) throw outcome.error;
    return c.json(outcome.tokens);
  });

  app.delete('/:id', async (c) => {
    const ctx = await svc.authenticate(c.req.header('authorization'), { notAnonymous: true });
    const factorId = wellFormedFactorId(c.req.param('id'));
    const userId = String(ctx.user.id);
    const f = (await svc.db.query('select * from auth.mfa_factors where id = $1 and user_id = $2', [factorId, userId])).rows[0];
    if (!f) throw new ApiError(404, 'mfa_factor_not_found', 'Factor not found');
    if (f.status === 'verified' && ctx.session.aal !== 'aal2')
      throw new ApiError(422, 'insufficient_aal', 'AAL2 required to unenroll verified factor');
    await svc.db.transaction(async (tx) => {
      await tx.query('delete from auth.mfa_factors where id = $1', [factorId]);
      const remaining = await tx.query(
        "select 1 from auth.mfa_factors where user_id = $1 and status = 'verified' limit 1",
        [userId],
      );
      // Sessions that used this factor go back to aal1 (all of them when no verified factor is left).
      await tx.query(
        `update auth.sessions set aal = 'aal1', factor_id = null, updated_at = now()
         where user_id = $1 and (factor_id = $2 or $3::boolean)`,
        [userId, factorId, remaining.rows.length === 0],
      );
      await tx.query(
        `delete from auth.mfa_amr_claims where authentication_method = 'totp'
         and session_id in (select id from auth.sessions where user_id = $1 and aal = 'aal1')`,
        [userId],
      );
    });
    return c.json({ id: factorId });
  });

  return app;
}

/**
 * A factor id from the path, refused as GoTrue's loadFactor refuses it when it is not a UUID (404 validation_failed),
 * before the body is read or the factor looked up; a well-formed id that is not the user's is "Factor not found".
 */
export function wellFormedFactorId(id: string): string {
  if (!UUID_RE.test(id)) throw new ApiError(404, 'validation_failed', 'factor_id must be an UUID');
  return id;
}
