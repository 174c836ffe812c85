import { Hono } from 'hono';
import { ApiError, orDatabaseError, validationFailed } from '../http/errors.ts';
import { optBool, optObject, optString, readJsonObject } from '../http/body.ts';
import type { Body } from '../http/body.ts';
import { factorJson, USER_SELECT, userJson } from './format.ts';
import { checkPassword, validateEmail } from './service.ts';
import type { AuthService, OtpTokenType } from './service.ts';
import { newOtp, tokenHash, UUID_RE } from './tokens.ts';
import type { Queryable, Row } from '../db/types.ts';
import { wellFormedFactorId } from './mfa.ts';
import { oauthClientRoutes } from './oauth-clients.ts';
import { adminCheckPhoneFree, adminSetPhone, createPhoneUser, validatePhone } from './phone.ts';

/** Parses a GoTrue ban_duration ("24h", "1h30m", "none") into seconds; null = unban. */
export function parseBanDuration(v: string): number | null {
  if (v === 'none') return null;
  const re = /(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)/g;
  const units: Record<string, number> = { ns: 1e-9, us: 1e-6, µs: 1e-6, ms: 1e-3, s: 1, m: 60, h: 3600 };
  let total = 0;
  let consumed = 0;
  for (const m of v.matchAll(re)) {
    // both groups always take part in a match; the unit alternatives are exactly the keys of units
    const unit = units[m[2]!];
    if (unit === undefined) throw validationFailed('invalid format for ban duration');
    total += Number(m[1]) * unit;
    consumed += m[0].length;
  }
  if (consumed !== v.length || consumed === 0) throw validationFailed('invalid format for ban duration');
  return total;
}

/**
 * A page / per_page query value read as GoTrue reads it (Go's strconv.ParseUint, base 10, 64 bits): absent or empty
 * is the default; anything but decimal digits, or more than 2^64-1, is refused with its
 * 400 validation_failed "Bad Pagination Parameters: strconv.ParseUint: parsing "<value>": <reason>".
 */
export function parsePageParam(raw: string | undefined, fallback: number): number {
  if (raw === undefined || raw === '') return fallback;
  let reason: string | undefined;
  if (!/^[0-9]+$/.test(raw)) reason = 'invalid syntax';
  else if (BigInt(raw) > 0xffff_ffff_ffff_ffffn) reason = 'value out of range';
  if (reason) throw validationFailed(`Bad Pagination Parameters: strconv.ParseUint: parsing ${JSON.stringify(raw)}: ${reason}`);
  return Number(raw);
}

const NIL_UUID = '00000000-0000-0000-0000-000000000000';
/** `$2a$`/`$2b$`/`$2y$`… with a cost of 4–31, 22 characters of salt and 31 of hash (Go's bcrypt.Cost accepts these). */
const BCRYPT_HASH_RE = /^\$2[a-z]?\$(0[4-9]|[12][0-9]|3[01])\$[./A-Za-z0-9]{53}$/;

export function adminRoutes(svc: AuthService): Hono {
  const app = new Hono();

  // Only on the admin routes themselves, so that unknown paths still answer 404.
  const admin = async (c: { req: { header(name: string): string | undefined } }, next: () => Promise<void>) => {
    await svc.requireAdmin(c.req.header('authorization'));
    await next();
  };
  app.use('/users', admin);
  app.use('/users/:id', admin);
  app.use('/generate_link', admin);
  // The OAuth 2.1 server's clients (admin check and feature switch inside, in GoTrue's order).
  app.route('/oauth/clients', oauthClientRoutes(svc));

  async function applyUserAttributes(q: Queryable, userId: string, body: Body): Promise<void> {
    const password = optString(body, 'password');
    const rawEmail = optString(body, 'email');
    const emailConfirm = optBool(body, 'email_confirm');
    const rawPhone = optString(body, 'phone');
    const phone = rawPhone ? validatePhone(rawPhone) : undefined;
    const userMeta = optObject(body, 'user_metadata') ?? optObject(body, 'data');
    const appMeta = optObject(body, 'app_metadata');
    const ban = optString(body, 'ban_duration');
    const role = optString(body, 'role');
    if (password !== undefined) {
      checkPassword(password, svc.cfg.minPasswordLength);
      await q.query('update auth.users set encrypted_password = $2 where id = $1', [
        userId,
        await svc.hashPassword(password),
      ]);
    }
    if (rawEmail !== undefined) {
      const email = validateEmail(rawEmail);
      const taken = await svc.findUserByEmail(q, email);
      if (taken && String(taken.id) !== userId)
        throw new ApiError(422, 'email_exists', 'A user with this email address has already been registered');
      await q.query('update auth.users set email = $2 where id = $1', [userId, email]);
      const updated = await q.query(
        `update auth.identities set identity_data = identity_data || jsonb_build_object('email', $2::text)
         where user_id = $1 and provider = 'email'`,
        [userId, email],
      );
      // As GoTrue: a user without an email identity (a guest) gets one; a guest whose new address is confirmed by
      // the admin (email_confirm) stops being anonymous.
      if ((updated.affectedRows ?? 0) === 0) {
        const identityData = { sub: userId, email, email_verified: emailConfirm === true, phone_verified: false };
        await q.query(
          `insert into auth.identities (provider_id, user_id, identity_data, provider, last_sign_in_at, created_at, updated_at)
           values ($1, $2, $3::jsonb, 'email', now(), now(), now())`,
          [userId, userId, JSON.stringify(identityData)],
        );
      }
      if (emailConfirm === true) await q.query('update auth.users set is_anonymous = false where id = $1', [userId]);
    }
    if (emailConfirm === true) await svc.confirmEmail(q, userId);
    await adminSetPhone(q, userId, phone, optBool(body, 'phone_confirm'));
    // As GoTrue's UpdateUserMetaData / UpdateAppMetaData: given keys are set, keys given as null are removed.
    const merge = (column: string) =>
      `update auth.users set ${column} = (coalesce(${column}, '{}'::jsonb)
         - (select coalesce(array_agg(key), '{}'::text[]) from jsonb_each($2::jsonb) where value = 'null'::jsonb))
         || (select coalesce(jsonb_object_agg(key, value), '{}'::jsonb) from jsonb_each($2::jsonb) where value <> 'null'::jsonb)
       where id = $1`;
    if (userMeta) await q.query(merge('raw_user_meta_data'), [userId, JSON.stringify(userMeta)]);
    if (appMeta) await q.query(merge('raw_app_meta_data'), [userId, JSON.stringify(appMeta)]);
    if (ban !== undefined) {
      const secs = parseBanDuration(ban);
      await q.query(
        'update auth.users set banned_until = case when $2::float8 is null then null else now() + make_interval(secs => $2::float8) end where id = $1',
        [userId, secs],
      );
      if (secs !== null) await q.query('delete from auth.sessions where user_id = $1', [userId]);
    }
    if (role !== undefined) await q.query('update auth.users set role = $2 where id = $1', [userId, role]);
    await q.query('update auth.users set updated_at = now() where id = $1', [userId]);
  }

  app.get('/users', async (c) => {
    const page = Math.max(1, parsePageParam(c.req.query('page'), 1));
    const perPage = Math.min(1000, Math.max(1, parsePageParam(c.req.query('per_page'), 50)));
    const count = svc.db.query<{ n: number }>('select count(*)::int as n from auth.users');
    const total = Number((await orDatabaseError('Database error finding users', count)).rows[0]?.n ?? 0);
    const r = await svc.db.query(`${USER_SELECT} order by u.created_at desc, u.id limit $1 offset $2`, [
      perPage,
      (page - 1) * perPage,
    ]);
    const lastPage = Math.max(1, Math.ceil(total / perPage));
    const url = new URL(c.req.url);
    const link = (p: number, rel: string) => {
      url.searchParams.set('page', String(p));
      url.searchParams.set('per_page', String(perPage));
      return `<${url.pathname}${url.search}>; rel="${rel}"`;
    };
    const links = [];
    if (page < lastPage) links.push(link(page + 1, 'next'));
    links.push(link(lastPage, 'last'));
    c.header('X-Total-Count', String(total));
    c.header('Link', links.join(', '));
    return c.json({ aud: 'authenticated', users: r.rows.map(userJson) });
  });

  app.post('/users', async (c) => {
    const body = await readJsonObject(c);
    const rawEmail = optString(body, 'email');
    const rawPhone = optString(body, 'phone');
    if (!rawEmail && !rawPhone) throw validationFailed('Cannot create a user without either an email or phone');
    const email = rawEmail ? validateEmail(rawEmail) : undefined;
    const phone = rawPhone ? validatePhone(rawPhone) : undefined;
    const password = optString(body, 'password');
    if (password !== undefined) checkPassword(password, svc.cfg.minPasswordLength);
    // A chosen id (supabase-js `id`), checked as GoTrue's uuid.FromString and nil check
    const rawId = optString(body, 'id');
    const id = rawId === undefined || rawId === '' ? undefined : rawId.toLowerCase();
    if (id !== undefined && !UUID_RE.test(id)) throw validationFailed('ID must conform to the uuid v4 format');
    if (id === NIL_UUID) throw validationFailed('ID cannot be a nil uuid');
    // An imported password's hash (GoTrue's password_hash): bcrypt as Go's bcrypt.Cost reads it (ADR 171)
    const passwordHash = optString(body, 'password_hash');
    if (password !== undefined && passwordHash) throw validationFailed('Only a password or a password hash should be provided');
    if (passwordHash) {
      if (passwordHash.startsWith('$argon2') || passwordHash.startsWith('$fbscrypt'))
        throw validationFailed('localbase verifies bcrypt password hashes only: give a bcrypt password_hash or the password');
      if (!BCRYPT_HASH_RE.test(passwordHash)) throw new ApiError(500, 'unexpected_failure', 'Error creating user');
    }
    const hash = password !== undefined ? await svc.hashPassword(password) : passwordHash || null;
    const user = await svc.db.transaction(async (tx) => {
      if (email && (await svc.findUserByEmail(tx, email)))
        throw new ApiError(422, 'email_exists', 'A user with this email address has already been registered');
      if (phone) await adminCheckPhoneFree(tx, phone);
      // GoTrue's insert of a taken id fails in its transaction: 500 "Database error creating new user"
      if (id !== undefined && (await tx.query('select 1 from auth.users where id = $1', [id])).rows.length > 0)
        throw new ApiError(500, 'unexpected_failure', 'Database error creating new user');
      const userMetadata = optObject(body, 'user_metadata') ?? optObject(body, 'data') ?? {};
      const appMetadata = optObject(body, 'app_metadata') ?? {};
      const phoneConfirm = optBool(body, 'phone_confirm') === true;
      let u;
      if (email) {
        u = await svc.createUser(tx, {
          id,
          email,
          passwordHash: hash,
          confirmed: optBool(body, 'email_confirm') === true,
          userMetadata,
          appMetadata,
          metadataAsGiven: true,
        });
        // A phone as well: a second identity, app_metadata.providers ["email", "phone"].
        // GoTrue's admin createUser leaves phone_verified false in the identity even with phone_confirm.
        if (phone) await adminSetPhone(tx, String(u.id), phone, undefined);
        if (phoneConfirm) await adminSetPhone(tx, String(u.id), undefined, true);
      } else {
        const created = await createPhoneUser(tx, { id, phone: phone!, passwordHash: hash, confirmed: phoneConfirm, userMetadata, admin: true });
        if (Object.keys(appMetadata).length > 0)
          await applyUserAttributes(tx, created, { app_metadata: appMetadata });
        u = await svc.reloadUser(tx, created);
      }
      const ban = optString(body, 'ban_duration');
      const role = optString(body, 'role');
      if (ban !== undefined || role !== undefined)
        await applyUserAttributes(tx, String(u.id), { ban_duration: ban, role });
      return svc.reloadUser(tx, String(u.id));
    });
    return c.json(userJson(user));
  });

  /**
   * GoTrue's loadUser, the middleware of every /admin/users/{user_id} route: it runs before the handler reads a body.
   * A malformed id is 404 validation_failed, an unknown user 404 user_not_found.
   */
  const loadUser = async (id: string): Promise<Row> => {
    if (!UUID_RE.test(id)) throw new ApiError(404, 'validation_failed', 'user_id must be an UUID');
    const u = await orDatabaseError('Database error loading user', svc.findUserById(svc.db, id));
    if (!u) throw new ApiError(404, 'user_not_found', 'User not found');
    return u;
  };

  app.get('/users/:id', async (c) => {
    return c.json(userJson(await loadUser(c.req.param('id'))));
  });

  app.put('/users/:id', async (c) => {
    const id = c.req.param('id');
    await loadUser(id);
    const body = await readJsonObject(c);
    const user = await svc.db.transaction(async (tx) => {
      if (!(await svc.findUserById(tx, id))) throw new ApiError(404, 'user_not_found', 'User not found');
      await applyUserAttributes(tx, id, body);
      return svc.reloadUser(tx, id);
    });
    return c.json(userJson(user));
  });

  app.delete('/users/:id', async (c) => {
    const id = c.req.param('id');
    await loadUser(id);
    const body = await readJsonObject(c, { emptyIsObject: true }); // GoTrue reads a body only when there is one
    const soft = optBool(body, 'should_soft_delete') ?? false;
    const r = soft
      ? await svc.db.transaction(async (tx) => {
          await tx.query('delete from auth.sessions where user_id = $1', [id]);
          return tx.query(
            `update auth.users set deleted_at = now(), email = null, encrypted_password = null, updated_at = now(),
               raw_user_meta_data = '{}'::jsonb where id = $1`,
            [id],
          );
        })
      : await svc.db.query('delete from auth.users where id = $1', [id]);
    if (r.affectedRows === 0) throw new ApiError(404, 'user_not_found', 'User not found');
    return c.json({});
  });

  app.use('/users/:id/factors', admin);
  app.use('/users/:id/factors/:factorId', admin);

  app.get('/users/:id/factors', async (c) => {
    const id = c.req.param('id');
    await loadUser(id);
    const r = await svc.db.query('select * from auth.mfa_factors where user_id = $1 order by created_at', [id]);
    return c.json(r.rows.map(factorJson));
  });

  app.delete('/users/:id/factors/:factorId', async (c) => {
    // As GoTrue: the user is loaded first (its id a UUID, the user existing), then the factor.
    const id = c.req.param('id');
    await loadUser(id);
    const factorId = wellFormedFactorId(c.req.param('factorId'));
    const r = await svc.db.transaction(async (tx) => {
      const del = await tx.query('delete from auth.mfa_factors where id = $1 and user_id = $2', [factorId, id]);
      if (del.affectedRows > 0)
        await tx.query(
          "update auth.sessions set aal = 'aal1', factor_id = null, updated_at = now() where user_id = $1 and factor_id = $2",
          [id, factorId],
        );
      return del;
    });
    if (r.affectedRows === 0) throw new ApiError(404, 'mfa_factor_not_found', 'Factor not found');
    return c.json({ id: factorId });
  });

  // Custom OAuth/OIDC providers are not offered: GoTrue with them off answers this after the admin check.
  app.use('/custom-providers', admin);
  app.use('/custom-providers/*', admin);
  const customProvidersDisabled = (): never => {
    throw new ApiError(404, 'feature_disabled', 'Custom OAuth providers are disabled');
  };
  app.all('/custom-providers', customProvidersDisabled);
  app.all('/custom-providers/*', customProvidersDisabled);

  // Passkeys are not offered: as GoTrue with them off, a user (loaded as GoTrue's loadUser) has none.
  app.use('/users/:id/passkeys', admin);
  app.use('/users/:id/passkeys/:passkeyId', admin);
  const passkeyOwner = async (id: string) => {
    await loadUser(id);
  };
  app.get('/users/:id/passkeys', async (c) => {
    await passkeyOwner(c.req.param('id'));
    return c.json([]);
  });
  app.delete('/users/:id/passkeys/:passkeyId', async (c) => {
    await passkeyOwner(c.req.param('id'));
    throw new ApiError(404, 'validation_failed', 'Passkey not found');
  });

  app.post('/generate_link', async (c) => {
    const body = await readJsonObject(c);
    const type = optString(body, 'type');
    const rawEmail = optString(body, 'email');
    if (!rawEmail) throw validationFailed('Unable to validate email address: invalid format');
    const email = validateEmail(rawEmail);
    const password = optString(body, 'password');
    const data = optObject(body, 'data') ?? {};
    const redirect = svc.redirectTo(optString(body, 'redirect_to') ?? c.req.query('redirect_to'));
    const kinds: Record<string, { tokenType: OtpTokenType; verifyType: string }> = {
      signup: { tokenType: 'confirmation_token', verifyType: 'signup' },
      invite: { tokenType: 'confirmation_token', verifyType: 'invite' },
      magiclink: { tokenType: 'recovery_token', verifyType: 'magiclink' },
      recovery: { tokenType: 'recovery_token', verifyType: 'recovery' },
      email_change_new: { tokenType: 'email_change_token_new', verifyType: 'email_change' },
      email_change_current: { tokenType: 'email_change_token_current', verifyType: 'email_change' },
    };
    const kind = type ? kinds[type] : undefined;
    if (!kind) throw validationFailed('Invalid email action link type requested');
    const newEmailRaw = optString(body, 'new_email');
    if (type?.startsWith('email_change') && !newEmailRaw)
      throw validationFailed('The new_email address is required');
    if (type === 'signup') {
      if (!password) throw validationFailed('Signup requires a valid password');
      checkPassword(password, svc.cfg.minPasswordLength);
    }
    const hash = password ? await svc.hashPassword(password) : null;
    const result = await svc.db.transaction(async (tx) => {
      let user = await svc.findUserByEmail(tx, email);
      if (!user) {
        if (type !== 'signup' && type !== 'invite' && type !== 'magiclink')
          throw new ApiError(404, 'user_not_found', 'User with this email not found');
        user = await svc.createUser(tx, {
          email,
          passwordHash: hash,
          confirmed: false,
          userMetadata: data,
          invited: type === 'invite',
          metadataAsGiven: true,
        });
      } else if (type === 'signup' || type === 'invite') {
        if (svc.isConfirmed(user))
          throw new ApiError(422, 'email_exists', 'A user with this email address has already been registered');
      }
      const userId = String(user.id);
      let to = email;
      if (type?.startsWith('email_change')) {
        const newEmail = validateEmail(newEmailRaw ?? '');
        const taken = await svc.findUserByEmail(tx, newEmail);
        if (taken) throw new ApiError(422, 'email_exists', 'A user with this email address has already been registered');
        await tx.query('update auth.users set email_change = $2, email_change_sent_at = now() where id = $1', [
          userId,
          newEmail,
        ]);
        if (type === 'email_change_new') to = newEmail;
      }
      const otp = newOtp();
      const hashed = tokenHash(to, otp);
      svc.newCodeFor(to);
      await tx.query(
        `insert into auth.one_time_tokens (user_id, token_type, token_hash, relates_to, created_at, updated_at)
         values ($1, $2, $3, $4, now(), now())
         on conflict (user_id, token_type) do update set token_hash = excluded.token_hash,
           relates_to = excluded.relates_to, created_at = now(), updated_at = now()`,
        [userId, kind.tokenType, hashed, to],
      );
      const u = await svc.reloadUser(tx, userId);
      return {
        ...userJson(u),
        action_link: `${svc.apiUrl}/auth/v1/verify?token=${hashed}&type=${kind.verifyType}&redirect_to=${encodeURIComponent(redirect)}`,
        email_otp: otp,
        hashed_token: hashed,
        redirect_to: redirect,
        verification_type: kind.verifyType,
      };
    });
    return c.json(result);
  });

  return app;
}
