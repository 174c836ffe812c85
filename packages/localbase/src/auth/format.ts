import type { Row } from '../db/types.ts';

export function iso(v: unknown): string | undefined {
  if (v === null || v === undefined || v === '') return undefined;
  const d = v instanceof Date ? v : new Date(String(v));
  return Number.isNaN(d.getTime()) ? undefined : d.toISOString();
}

function obj(v: unknown): Record<string, unknown> {
  if (typeof v === 'string') {
    try {
      return obj(JSON.parse(v));
    } catch {
      return {};
    }
  }
  return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
}

function arr(v: unknown): Row[] {
  if (typeof v === 'string') {
    try {
      return arr(JSON.parse(v));
    } catch {
      return [];
    }
  }
  return Array.isArray(v) ? (v as Row[]) : [];
}

/** SQL selecting a user with its identities and MFA factors as JSON (one round trip). */
export const USER_SELECT = `
  select u.*,
    coalesce((select json_agg(i order by i.created_at) from auth.identities i where i.user_id = u.id), '[]'::json) as identities_json,
    coalesce((select json_agg(f order by f.created_at) from auth.mfa_factors f where f.user_id = u.id), '[]'::json) as factors_json
  from auth.users u`;

export interface FactorJson {
  id: string;
  friendly_name?: string;
  factor_type: string;
  status: string;
  created_at?: string;
  updated_at?: string;
  last_challenged_at: string | null;
  phone: string;
}

export function factorJson(f: Row): FactorJson {
  const out: FactorJson = {
    id: String(f.id),
    factor_type: String(f.factor_type),
    status: String(f.status),
    created_at: iso(f.created_at),
    updated_at: iso(f.updated_at),
    last_challenged_at: iso(f.last_challenged_at) ?? null,
    phone: typeof f.phone === 'string' ? f.phone : '',
  };
  if (typeof f.friendly_name === 'string' && f.friendly_name !== '') out.friendly_name = f.friendly_name;
  return out;
}

export function appMetadata(u: Row): Record<string, unknown> {
  const m = obj(u.raw_app_meta_data);
  // An anonymous user has no provider: GoTrue leaves its app_metadata empty.
  if (u.is_anonymous) return m;
  return { provider: 'email', providers: ['email'], ...m };
}

export function userMetadata(u: Row): Record<string, unknown> {
  return obj(u.raw_user_meta_data);
}

/** The GoTrue user object (protocol §A.4): strings never null, empty timestamps omitted. */
export function userJson(u: Row): Record<string, unknown> {
  const out: Record<string, unknown> = {
    id: u.id,
    aud: u.aud || 'authenticated',
    role: u.role || 'authenticated',
    email: u.email ?? '',
  };
  const put = (key: string, v: unknown) => {
    const t = iso(v);
    if (t) out[key] = t;
  };
  put('email_confirmed_at', u.email_confirmed_at);
  out.phone = u.phone ?? '';
  put('phone_confirmed_at', u.phone_confirmed_at);
  put('confirmation_sent_at', u.confirmation_sent_at);
  put('confirmed_at', u.confirmed_at ?? u.email_confirmed_at);
  put('recovery_sent_at', u.recovery_sent_at);
  if (typeof u.email_change === 'string' && u.email_change !== '') out.new_email = u.email_change;
  put('email_change_sent_at', u.email_change_sent_at);
  put('invited_at', u.invited_at);
  put('last_sign_in_at', u.last_sign_in_at);
  out.app_metadata = appMetadata(u);
  out.user_metadata = userMetadata(u);
  out.identities = arr(u.identities_json).map((i) => ({
    identity_id: i.id,
    id: i.provider_id,
    user_id: i.user_id,
    identity_data: obj(i.identity_data),
    provider: i.provider,
    last_sign_in_at: iso(i.last_sign_in_at),
    created_at: iso(i.created_at),
    updated_at: iso(i.updated_at),
    email: i.email ?? undefined,
  }));
  const factors = arr(u.factors_json);
  if (factors.length > 0) out.factors = factors.map(factorJson);
  out.created_at = iso(u.created_at);
  out.updated_at = iso(u.updated_at);
  put('banned_until', u.banned_until);
  put('deleted_at', u.deleted_at);
  out.is_anonymous = Boolean(u.is_anonymous);
  return out;
}
