// The OAuth 2.1 server's admin API, as GoTrue's: /auth/v1/admin/oauth/clients (create, list, get, update, delete,
// regenerate_secret), behind --enable-oauth-server (GOTRUE_OAUTH_SERVER_ENABLED). Clients live in auth.oauth_clients
// (GoTrue's table, src/db/bootstrap.sql); a confidential client's secret is shown once and stored as its SHA-256.
// The authorization flows (/oauth/authorize, /oauth/token, dynamic registration) are not provided: decision 035.
import crypto from 'node:crypto';
import { Hono } from 'hono';
import type { Context } from 'hono';
import { ApiError, validationFailed } from '../http/errors.ts';
import { iso } from './format.ts';
import type { AuthService } from './service.ts';
import type { Row } from '../db/types.ts';

const GRANT_TYPES = ['authorization_code', 'refresh_token'] as const;
/** GoTrue's order (its error messages print this list with Go's %v: "[none client_secret_basic client_secret_post]"). */
const AUTH_METHODS = ['none', 'client_secret_basic', 'client_secret_post'] as const;
const goList = (xs: readonly string[]): string => `[${xs.join(' ')}]`;

type ClientType = 'public' | 'confidential';

/** GoTrue's answer on every OAuth server route while the feature is off. */
export const oauthServerDisabled = (): ApiError => new ApiError(404, 'feature_disabled', 'OAuth server is disabled');

const badJsonBody = (): ApiError => new ApiError(400, 'bad_json', 'Invalid JSON body');

// ---------------------------------------------------------------------------------------------------------------
// URLs read as Go's net/url reads them (url.Parse for redirect URIs, url.ParseRequestURI for client_uri / logo_uri),
// as far as GoTrue's checks can tell the difference.

interface GoUrl {
  scheme: string;
  host: string;
  /** host without port and IPv6 brackets */
  hostname: string;
  fragment: string;
}

class GoUrlError extends Error {}

/** Go's getScheme (the scheme lower-cased, as url.Parse does): letters first, then letters, digits, + - .; a ':' at 0 is an error; anything else means no scheme. */
function goScheme(raw: string): { scheme: string; rest: string } {
  for (let i = 0; i < raw.length; i++) {
    const ch = raw[i]!;
    if (/[a-zA-Z]/.test(ch)) continue;
    if (/[0-9+.-]/.test(ch)) {
      if (i === 0) return { scheme: '', rest: raw };
      continue;
    }
    if (ch === ':') {
      if (i === 0) throw new GoUrlError('missing protocol scheme');
      return { scheme: raw.slice(0, i).toLowerCase(), rest: raw.slice(i + 1) };
    }
    return { scheme: '', rest: raw };
  }
  return { scheme: '', rest: raw };
}

/** Percent escapes must be %XX (Go's unescape). */
function checkEscapes(s: string): void {
  if (/%(?![0-9a-fA-F]{2})/.test(s)) throw new GoUrlError('invalid URL escape');
}

/** Go's parseHost: bracketed IPv6 (with optional :port), else host[:port] with only host-safe characters. */
function goHost(authority: string): { host: string; hostname: string } {
  const at = authority.lastIndexOf('@');
  const host = at >= 0 ? authority.slice(at + 1) : authority;
  if (host.startsWith('[')) {
    const end = host.indexOf(']');
    if (end < 0) throw new GoUrlError("missing ']' in host");
    const port = host.slice(end + 1);
    if (port !== '' && !/^:[0-9]*$/.test(port)) throw new GoUrlError('invalid port');
    return { host, hostname: host.slice(1, end) };
  }
  const colon = host.lastIndexOf(':');
  if (colon >= 0 && !/^:[0-9]*$/.test(host.slice(colon))) throw new GoUrlError('invalid port');
  // Characters Go refuses in a host name (everything but these, and percent escapes checked above).
  if (/[^A-Za-z0-9\-._~!$&'()*+,;=:[\]<>"%\u0080-\uffff]/.test(host)) throw new GoUrlError('invalid character in host name');
  return { host, hostname: colon >= 0 ? host.slice(0, colon) : host };
}

/** url.Parse (viaRequest = false) or url.ParseRequestURI (viaRequest = true, no fragment split). */
function goParse(raw: string, viaRequest: boolean): GoUrl {
  // ASCII control characters are refused anywhere.
  for (let i = 0; i < raw.length; i++) {
    const code = raw.charCodeAt(i);
    if (code < 0x20 || code === 0x7f) throw new GoUrlError('invalid control character in URL');
  }
  let rest = raw;
  let fragment = '';
  if (!viaRequest) {
    const hash = rest.indexOf('#');
    if (hash >= 0) {
      fragment = rest.slice(hash + 1);
      rest = rest.slice(0, hash);
      checkEscapes(fragment);
    }
  }
  if (rest === '' && !viaRequest) return { scheme: '', host: '', hostname: '', fragment };
  const { scheme, rest: afterScheme } = goScheme(rest);
  let path = afterScheme;
  const q = path.indexOf('?');
  if (q >= 0) path = path.slice(0, q);
  // scheme:opaque (no host) is accepted as it is; a relative reference must be a path for ParseRequestURI.
  if (scheme !== '' && !path.startsWith('/')) return { scheme, host: '', hostname: '', fragment };
  if (scheme === '' && viaRequest && !path.startsWith('/')) throw new GoUrlError('invalid URI for request');
  let host = '';
  let hostname = '';
  if ((scheme !== '' || (!viaRequest && !path.startsWith('///'))) && path.startsWith('//')) {
    const authority = path.slice(2).split('/')[0]!;
    ({ host, hostname } = goHost(authority));
  } else if (!scheme && !path.startsWith('/')) {
    // A relative reference whose first segment holds a colon ("a:b" was no scheme because of its first character).
    const first = path.split('/')[0]!;
    if (first.includes(':')) throw new GoUrlError('first path segment in URL cannot contain colon');
  }
  checkEscapes(path);
  return { scheme, host, hostname, fragment };
}

/** GoTrue's redirect URI rule for OAuth clients; the message after "invalid redirect_uri '<uri>': ". */
function redirectUriProblem(uri: string): string | undefined {
  if (uri === '') return 'redirect URI cannot be empty';
  let u: GoUrl;
  try {
    u = goParse(uri, false);
  } catch {
    return 'invalid URL format';
  }
  if (u.scheme === '' || u.host === '') return 'must have scheme and host';
  for (const dangerous of ['javascript', 'data', 'file', 'vbscript', 'about', 'blob'])
    if (u.scheme === dangerous) return `scheme '${u.scheme}' is not allowed for security reasons`;
  if (u.scheme === 'http' && !['localhost', '127.0.0.1', '::1'].includes(u.hostname))
    return 'HTTP scheme only allowed for localhost';
  if (u.fragment !== '') return 'fragment not allowed in redirect URI';
  return undefined;
}

function checkRedirectUris(uris: string[], required: boolean): void {
  if (required && uris.length === 0) throw validationFailed('redirect_uris is required');
  if (uris.length === 0) throw validationFailed('redirect_uris cannot be empty');
  if (uris.length > 10) throw validationFailed('redirect_uris cannot exceed 10 items');
  for (const uri of uris) {
    const problem = redirectUriProblem(uri);
    if (problem) throw validationFailed(`invalid redirect_uri '${uri}': ${problem}`);
  }
}

function checkGrantTypes(types: string[]): void {
  if (types.length === 0) throw validationFailed('grant_types cannot be empty');
  if (types.some((t) => !(GRANT_TYPES as readonly string[]).includes(t)))
    throw validationFailed("grant_types must only contain 'authorization_code' and/or 'refresh_token'");
}

/** Go's len(): bytes, not characters. */
const byteLength = (s: string): number => Buffer.byteLength(s, 'utf8');

function checkClientName(name: string): void {
  if (byteLength(name) > 1024) throw validationFailed('client_name cannot exceed 1024 characters');
}

function checkUri(field: 'client_uri' | 'logo_uri', value: string): void {
  if (value === '') return;
  if (byteLength(value) > 2048) throw validationFailed(`${field} cannot exceed 2048 characters`);
  try {
    goParse(value, true);
  } catch {
    throw validationFailed(`${field} must be a valid URL`);
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Request bodies decoded as Go's encoding/json decodes them into GoTrue's parameter structs: a wrong JSON type is
// "Invalid JSON body" (bad_json); null is the zero value (absent); unknown fields are ignored.

type Json = Record<string, unknown>;

async function readGoJson(c: Context): Promise<Json> {
  const text = await c.req.text();
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    throw badJsonBody(); // including an empty body (Go: EOF)
  }
  if (v === null) return {};
  if (typeof v !== 'object' || Array.isArray(v)) throw badJsonBody();
  return v as Json;
}

/** A string field: undefined when absent or null. */
function goString(body: Json, key: string): string | undefined {
  const v = body[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') throw badJsonBody();
  return v;
}

/** A []string field: undefined when absent or null; a null element decodes as "". */
function goStrings(body: Json, key: string): string[] | undefined {
  const v = body[key];
  if (v === undefined || v === null) return undefined;
  if (!Array.isArray(v)) throw badJsonBody();
  return v.map((x: unknown) => {
    if (x === null) return '';
    if (typeof x !== 'string') throw badJsonBody();
    return x;
  });
}

// ---------------------------------------------------------------------------------------------------------------

/** A new client secret: 32 random bytes, base64url (as GoTrue). */
function newSecret(): string {
  return crypto.randomBytes(32).toString('base64url');
}

/** What is stored: base64url(SHA-256(secret)), GoTrue's hashClientSecret. */
export function hashClientSecret(secret: string): string {
  return crypto.createHash('sha256').update(secret, 'utf8').digest('base64url');
}

/** GoTrue's ValidateClientSecret: the secret's SHA-256 against the stored hash, in constant time. */
export function clientSecretMatches(secret: string, storedHash: string | null): boolean {
  if (!storedHash) return false;
  const stored = Buffer.from(storedHash, 'base64url');
  const calc = crypto.createHash('sha256').update(secret, 'utf8').digest();
  return stored.length === calc.length && crypto.timingSafeEqual(stored, calc);
}

const split = (v: unknown): string[] => (typeof v === 'string' && v !== '' ? v.split(',') : []);

/** GoTrue's OAuthServerClientResponse: its field order; empty strings and lists left out (Go's omitempty). */
function clientJson(row: Row, secret?: string): Record<string, unknown> {
  const out: Record<string, unknown> = { client_id: String(row.id) };
  if (secret) out.client_secret = secret;
  out.client_type = row.client_type;
  const redirects = split(row.redirect_uris);
  if (redirects.length > 0) out.redirect_uris = redirects;
  if (row.token_endpoint_auth_method) out.token_endpoint_auth_method = row.token_endpoint_auth_method;
  const grants = split(row.grant_types);
  if (grants.length > 0) out.grant_types = grants;
  out.response_types = ['code'];
  for (const key of ['client_name', 'client_uri', 'logo_uri'] as const) if (row[key]) out[key] = row[key];
  if (row.registration_type) out.registration_type = row.registration_type;
  out.created_at = iso(row.created_at);
  out.updated_at = iso(row.updated_at);
  return out;
}

const COLUMNS = `id, client_secret_hash, registration_type::text as registration_type, client_type::text as client_type,
  token_endpoint_auth_method, redirect_uris, grant_types, client_name, client_uri, logo_uri, created_at, updated_at`;

/**
 * gofrs/uuid's FromString: canonical or 32 hex digits, either in {braces} or after "urn:uuid:"; any case. Returns the
 * canonical lower-case form, or undefined.
 */
export function parseClientId(raw: string): string | undefined {
  let s = raw;
  if ((s.length === 34 || s.length === 38) && s.startsWith('{') && s.endsWith('}')) s = s.slice(1, -1);
  else if ((s.length === 41 || s.length === 45) && s.startsWith('urn:uuid:')) s = s.slice(9);
  if (s.length === 36 && /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(s)) return s.toLowerCase();
  if (s.length === 32 && /^[0-9a-f]{32}$/i.test(s))
    return `${s.slice(0, 8)}-${s.slice(8, 12)}-${s.slice(12, 16)}-${s.slice(16, 20)}-${s.slice(20)}`.toLowerCase();
  return undefined;
}

/** The routes under /auth/v1/admin/oauth/clients (mounted there by adminRoutes). */
export function oauthClientRoutes(svc: AuthService): Hono {
  const app = new Hono();

  // As GoTrue's router: admin credentials first, then the feature switch, then the client named in the path.
  app.use('*', async (c, next) => {
    await svc.requireAdmin(c.req.header('authorization'));
    if (!svc.cfg.enableOAuthServer) throw oauthServerDisabled();
    await next();
  });

  async function loadClient(c: Context): Promise<Row> {
    const raw = c.req.param('client_id') ?? '';
    if (raw === '') throw validationFailed('client_id is required');
    const id = parseClientId(raw);
    if (!id) throw validationFailed('invalid client_id format');
    const r = await svc.db.query(`select ${COLUMNS} from auth.oauth_clients where id = $1 and deleted_at is null`, [id]);
    const row = r.rows[0];
    if (!row) throw new ApiError(404, 'oauth_client_not_found', 'OAuth client not found');
    return row;
  }

  // Manual registration by an admin (registration_type "manual").
  app.post('/', async (c) => {
    const body = await readGoJson(c);
    const redirectUris = goStrings(body, 'redirect_uris') ?? [];
    const clientTypeIn = goString(body, 'client_type') ?? '';
    const methodIn = goString(body, 'token_endpoint_auth_method') ?? '';
    const grantTypesIn = goStrings(body, 'grant_types') ?? [];
    const clientName = goString(body, 'client_name') ?? '';
    const clientUri = goString(body, 'client_uri') ?? '';
    const logoUri = goString(body, 'logo_uri') ?? '';
    try {
      checkRedirectUris(redirectUris, true);
      if (grantTypesIn.length > 0) checkGrantTypes(grantTypesIn);
      checkClientName(clientName);
      checkUri('client_uri', clientUri);
      checkUri('logo_uri', logoUri);
      if (clientTypeIn !== '' && clientTypeIn !== 'public' && clientTypeIn !== 'confidential')
        throw validationFailed("client_type must be 'public' or 'confidential'");
      if (methodIn !== '' && !(AUTH_METHODS as readonly string[]).includes(methodIn))
        throw validationFailed(`token_endpoint_auth_method must be one of: ${goList(AUTH_METHODS)}`);
      if (clientTypeIn !== '' && methodIn !== '') {
        const expected: ClientType = methodIn === 'none' ? 'public' : 'confidential';
        if (clientTypeIn !== expected)
          throw validationFailed(
            `client_type '${clientTypeIn}' is inconsistent with token_endpoint_auth_method '${methodIn}' (expected client_type '${expected}')`,
          );
      }
    } catch (err) {
      // GoTrue wraps the check's error once more: its message becomes "400: <message>".
      if (err instanceof ApiError) throw validationFailed(`${err.status}: ${err.message}`);
      throw err;
    }
    const clientType: ClientType =
      clientTypeIn !== '' ? (clientTypeIn as ClientType) : methodIn === 'none' ? 'public' : 'confidential';
    const method = methodIn !== '' ? methodIn : clientType === 'public' ? 'none' : 'client_secret_basic';
    const grantTypes = grantTypesIn.length > 0 ? grantTypesIn : [...GRANT_TYPES];
    const secret = clientType === 'confidential' ? newSecret() : undefined;
    const r = await svc.db.query(
      `insert into auth.oauth_clients (id, client_secret_hash, registration_type, client_type, token_endpoint_auth_method,
         redirect_uris, grant_types, client_name, client_uri, logo_uri, created_at, updated_at)
       values ($1, $2, 'manual', $3::auth.oauth_client_type, $4, $5, $6, $7, $8, $9, now(), now())
       returning ${COLUMNS}`,
      [
        crypto.randomUUID(),
        secret ? hashClientSecret(secret) : null,
        clientType,
        method,
        redirectUris.join(','),
        grantTypes.join(','),
        clientName || null,
        clientUri || null,
        logoUri || null,
      ],
    );
    return c.json(clientJson(r.rows[0]!, secret), 201);
  });

  // Every client, newest first: GoTrue's list has no pagination (page / per_page are ignored, no Link or
  // X-Total-Count), and with no client at all its body is {} (the list is left out as empty).
  app.get('/', async (c) => {
    const r = await svc.db.query(
      `select ${COLUMNS} from auth.oauth_clients where deleted_at is null order by created_at desc, id`,
    );
    return c.json(r.rows.length > 0 ? { clients: r.rows.map((row) => clientJson(row)) } : {});
  });

  app.get('/:client_id', async (c) => c.json(clientJson(await loadClient(c))));

  app.put('/:client_id', async (c) => {
    const client = await loadClient(c);
    const body = await readGoJson(c);
    const redirectUris = goStrings(body, 'redirect_uris');
    const grantTypes = goStrings(body, 'grant_types');
    const clientName = goString(body, 'client_name');
    const clientUri = goString(body, 'client_uri');
    const logoUri = goString(body, 'logo_uri');
    const method = goString(body, 'token_endpoint_auth_method');
    if ([redirectUris, grantTypes, clientName, clientUri, logoUri, method].every((v) => v === undefined))
      throw validationFailed('No fields provided for update');
    if (redirectUris) checkRedirectUris(redirectUris, false);
    if (grantTypes) checkGrantTypes(grantTypes);
    if (clientName !== undefined) checkClientName(clientName);
    if (clientUri !== undefined) checkUri('client_uri', clientUri);
    if (logoUri !== undefined) checkUri('logo_uri', logoUri);
    if (method !== undefined && !(AUTH_METHODS as readonly string[]).includes(method))
      throw validationFailed(`invalid token_endpoint_auth_method: must be one of ${goList(AUTH_METHODS)}`);
    if (method !== undefined) {
      const valid = client.client_type === 'public' ? ['none'] : ['client_secret_basic', 'client_secret_post'];
      if (!valid.includes(method))
        throw validationFailed(
          `token_endpoint_auth_method '${method}' is not valid for client_type '${String(client.client_type)}'; valid methods: ${goList(valid)}`,
        );
    }
    // An empty string clears client_name / client_uri / logo_uri (GoTrue stores a nil pointer for "").
    const r = await svc.db.query(
      `update auth.oauth_clients set
         redirect_uris = coalesce($2, redirect_uris),
         grant_types = coalesce($3, grant_types),
         client_name = case when $4::boolean then nullif($5, '') else client_name end,
         client_uri = case when $6::boolean then nullif($7, '') else client_uri end,
         logo_uri = case when $8::boolean then nullif($9, '') else logo_uri end,
         token_endpoint_auth_method = coalesce($10, token_endpoint_auth_method),
         updated_at = now()
       where id = $1 and deleted_at is null
       returning ${COLUMNS}`,
      [
        client.id,
        redirectUris ? redirectUris.join(',') : null,
        grantTypes ? grantTypes.join(',') : null,
        clientName !== undefined,
        clientName ?? null,
        clientUri !== undefined,
        clientUri ?? null,
        logoUri !== undefined,
        logoUri ?? null,
        method ?? null,
      ],
    );
    const row = r.rows[0];
    if (!row) throw new ApiError(404, 'oauth_client_not_found', 'OAuth client not found');
    return c.json(clientJson(row));
  });

  // A soft delete, as GoTrue's: the row stays with deleted_at set and is no longer found.
  app.delete('/:client_id', async (c) => {
    const client = await loadClient(c);
    await svc.db.query(
      'update auth.oauth_clients set deleted_at = now(), updated_at = now() where id = $1 and deleted_at is null',
      [client.id],
    );
    return c.body(null, 204);
  });

  app.post('/:client_id/regenerate_secret', async (c) => {
    const client = await loadClient(c);
    if (client.client_type !== 'confidential') throw validationFailed('Cannot regenerate secret for public client');
    const secret = newSecret();
    const r = await svc.db.query(
      `update auth.oauth_clients set client_secret_hash = $2, updated_at = now()
       where id = $1 and deleted_at is null returning ${COLUMNS}`,
      [client.id, hashClientSecret(secret)],
    );
    const row = r.rows[0];
    if (!row) throw new ApiError(404, 'oauth_client_not_found', 'OAuth client not found');
    return c.json(clientJson(row, secret));
  });

  return app;
}

/**
 * The OAuth 2.1 server's other endpoints (/oauth/authorize, /oauth/token, /oauth/clients/register, /oauth/userinfo,
 * /oauth/authorizations/…, /.well-known/oauth-authorization-server, a user's /user/oauth/grants). Off, they answer as GoTrue's: 404
 * feature_disabled "OAuth server is disabled". On, localbase still does not provide the flows: the same code, with a
 * message saying so (decision 035).
 */
export function oauthServerRoutes(svc: AuthService): Hono {
  const app = new Hono();
  const refuse = (): never => {
    if (!svc.cfg.enableOAuthServer) throw oauthServerDisabled();
    throw new ApiError(
      404,
      'feature_disabled',
      'OAuth server flows are not provided by localbase (only the client management under /admin/oauth/clients)',
    );
  };
  app.all('/oauth', refuse);
  app.all('/oauth/*', refuse);
  app.get('/.well-known/oauth-authorization-server', refuse);
  // A user's grants (supabase.auth.oauth.listGrants / revokeGrant): GoTrue asks for a signed-in user first (the
  // /user routes), then for the OAuth server.
  app.all('/user/oauth/grants', async (c) => {
    await svc.authenticate(c.req.header('authorization'));
    return refuse();
  });
  return app;
}
