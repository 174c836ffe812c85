// The OAuth 2.1 server's admin API (supabase.auth.admin.oauth.*) as GoTrue answers it: clients created, read, listed,
// updated, deleted and given a new secret by the service_role; validation errors with GoTrue's codes and messages;
// other callers refused; with the feature off (the default) 404 feature_disabled. Decision 035.
import { createHash, randomUUID } from 'node:crypto';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SupabaseClient } from '@supabase/supabase-js';
import { createScratchDatabase } from './cli.ts';
import { raw, removeDataFolder, serviceClient, signedInClient, startTestServer, testDatabaseUrl, type Localbase } from './helpers.ts';

let on: Localbase;
let off: Localbase;
let admin: SupabaseClient['auth']['admin'];

beforeAll(async () => {
  on = await startTestServer({ enableOAuthServer: true });
  off = await startTestServer();
  admin = serviceClient(on).auth.admin;
});

afterAll(async () => {
  await on?.stop();
  await off?.stop();
});

const sha256 = (s: string): string => createHash('sha256').update(s).digest('base64url');

async function storedRow(id: string): Promise<Record<string, unknown> | undefined> {
  const r = await on.db.query('select * from auth.oauth_clients where id = $1', [id]);
  return r.rows[0];
}

/** The access token of a new, signed-in ordinary user. */
async function userToken(lb: Localbase): Promise<string> {
  const { client } = await signedInClient(lb);
  const { data } = await client.auth.getSession();
  return data.session!.access_token;
}

/** A request to the admin API with the service_role key. */
function adminRaw(lb: Localbase, path: string, init: { method?: string; body?: unknown } = {}) {
  return raw(lb, `/auth/v1/admin/oauth/clients${path}`, { ...init, apikey: lb.serviceRoleKey, bearer: lb.serviceRoleKey });
}

describe('create', () => {
  it('a confidential client (the default): secret shown once, stored only as its SHA-256', async () => {
    const { data, error } = await admin.oauth.createClient({
      client_name: 'Notes importer',
      client_uri: 'https://importer.example.com',
      redirect_uris: ['https://importer.example.com/callback', 'http://localhost:3000/cb'],
    });
    expect(error).toBeNull();
    expect(data).toMatchObject({
      client_name: 'Notes importer',
      client_uri: 'https://importer.example.com',
      client_type: 'confidential',
      token_endpoint_auth_method: 'client_secret_basic',
      registration_type: 'manual',
      redirect_uris: ['https://importer.example.com/callback', 'http://localhost:3000/cb'],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
    });
    expect(data!.client_id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(data!.client_secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(Date.parse(data!.created_at)).not.toBeNaN();
    expect(data!.updated_at).toBe(data!.created_at);
    expect(data).not.toHaveProperty('logo_uri');

    const row = await storedRow(data!.client_id);
    expect(row?.client_secret_hash).toBe(sha256(data!.client_secret!));
    expect(JSON.stringify(row)).not.toContain(data!.client_secret);

    const got = await admin.oauth.getClient(data!.client_id);
    expect(got.error).toBeNull();
    expect(got.data).not.toHaveProperty('client_secret');
    expect(got.data).toEqual(Object.fromEntries(Object.entries(data!).filter(([k]) => k !== 'client_secret')));
  });

  it('a public client: no secret, token_endpoint_auth_method none (by client_type or by the method)', async () => {
    const byType = await admin.oauth.createClient({
      client_name: 'CLI',
      redirect_uris: ['myapp://callback'],
      client_type: 'public',
    } as Parameters<typeof admin.oauth.createClient>[0]);
    expect(byType.error).toBeNull();
    expect(byType.data).toMatchObject({ client_type: 'public', token_endpoint_auth_method: 'none' });
    expect(byType.data).not.toHaveProperty('client_secret');
    expect((await storedRow(byType.data!.client_id))?.client_secret_hash).toBeNull();

    const byMethod = await admin.oauth.createClient({
      client_name: 'SPA',
      redirect_uris: ['http://127.0.0.1:5173/', 'http://[::1]:8080/cb', 'com.example.app://oauth/cb'],
      token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code'],
    });
    expect(byMethod.error).toBeNull();
    expect(byMethod.data).toMatchObject({
      client_type: 'public',
      token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code'],
    });

    const post = await admin.oauth.createClient({
      client_name: 'Server',
      redirect_uris: ['https://a.example/cb'],
      token_endpoint_auth_method: 'client_secret_post',
    });
    expect(post.data).toMatchObject({ client_type: 'confidential', token_endpoint_auth_method: 'client_secret_post' });
    expect(post.data?.client_secret).toBeTruthy();
  });

  it('answers 201 Created', async () => {
    const res = await adminRaw(on, '', { body: { redirect_uris: ['https://x.example/cb'] } });
    expect(res.status).toBe(201);
    // No client_name: left out of the answer, as GoTrue's omitempty does.
    expect(res.json).not.toHaveProperty('client_name');
  });

  it.each([
    [{ client_name: 'x', redirect_uris: [] }, '400: redirect_uris is required'],
    [{ client_name: 'x' }, '400: redirect_uris is required'],
    [
      { redirect_uris: Array.from({ length: 11 }, (_, i) => `https://x.example/${i}`) },
      '400: redirect_uris cannot exceed 10 items',
    ],
    [{ redirect_uris: ['http://example.com/cb'] }, "400: invalid redirect_uri 'http://example.com/cb': HTTP scheme only allowed for localhost"],
    [{ redirect_uris: ['example.com/cb'] }, "400: invalid redirect_uri 'example.com/cb': must have scheme and host"],
    [{ redirect_uris: ['com.example.app:/oauth'] }, "400: invalid redirect_uri 'com.example.app:/oauth': must have scheme and host"],
    [{ redirect_uris: ['https://x.example/cb#top'] }, "400: invalid redirect_uri 'https://x.example/cb#top': fragment not allowed in redirect URI"],
    [
      { redirect_uris: ['javascript://x.example/%0aalert(1)'] },
      "400: invalid redirect_uri 'javascript://x.example/%0aalert(1)': scheme 'javascript' is not allowed for security reasons",
    ],
    [{ redirect_uris: ['https://x.example:port/cb'] }, "400: invalid redirect_uri 'https://x.example:port/cb': invalid URL format"],
    [{ redirect_uris: [''] }, "400: invalid redirect_uri '': redirect URI cannot be empty"],
    [{ redirect_uris: ['https://x.example/c\nb'] }, "400: invalid redirect_uri 'https://x.example/c\nb': invalid URL format"],
    [{ redirect_uris: ['https://x.example/%zz'] }, "400: invalid redirect_uri 'https://x.example/%zz': invalid URL format"],
    [{ redirect_uris: ['HTTP://evil.example/cb'] }, "400: invalid redirect_uri 'HTTP://evil.example/cb': HTTP scheme only allowed for localhost"],
    [
      { redirect_uris: ['https://x.example/cb'], grant_types: ['client_credentials'] },
      "400: grant_types must only contain 'authorization_code' and/or 'refresh_token'",
    ],
    [{ redirect_uris: ['https://x.example/cb'], client_name: 'é'.repeat(513) }, '400: client_name cannot exceed 1024 characters'],
    [{ redirect_uris: ['https://x.example/cb'], client_uri: 'not a url' }, '400: client_uri must be a valid URL'],
    [{ redirect_uris: ['https://x.example/cb'], logo_uri: 'logo.png' }, '400: logo_uri must be a valid URL'],
    [{ redirect_uris: ['https://x.example/cb'], client_type: 'trusted' }, "400: client_type must be 'public' or 'confidential'"],
    [
      { redirect_uris: ['https://x.example/cb'], token_endpoint_auth_method: 'private_key_jwt' },
      '400: token_endpoint_auth_method must be one of: [none client_secret_basic client_secret_post]',
    ],
    [
      { redirect_uris: ['https://x.example/cb'], client_type: 'public', token_endpoint_auth_method: 'client_secret_basic' },
      "400: client_type 'public' is inconsistent with token_endpoint_auth_method 'client_secret_basic' (expected client_type 'confidential')",
    ],
  ])('refuses %j: 400 validation_failed', async (params, message) => {
    const { data, error } = await admin.oauth.createClient(params as Parameters<typeof admin.oauth.createClient>[0]);
    expect(data).toBeNull();
    expect(error?.status).toBe(400);
    expect(error?.code).toBe('validation_failed');
    expect(error?.message).toBe(message);
  });

  it('a body that is not the right JSON: 400 bad_json "Invalid JSON body"', async () => {
    for (const body of ['', 'nope', '[]', '{"redirect_uris":"https://x.example/cb"}', '{"redirect_uris":["https://x.example/cb"],"client_name":5}']) {
      const res = await adminRaw(on, '', { method: 'POST', body });
      expect(res.status, body).toBe(400);
      expect(res.json, body).toMatchObject({ code: 'bad_json', message: 'Invalid JSON body' });
    }
  });
});

describe('get, update, delete', () => {
  it('updates only the fields given, keeps the secret, deletes, and then no longer finds the client', async () => {
    const created = (
      await admin.oauth.createClient({ client_name: 'Before', redirect_uris: ['https://before.example/cb'] })
    ).data!;
    const id = created.client_id;
    const hashBefore = (await storedRow(id))?.client_secret_hash;

    const logo = await admin.oauth.updateClient(id, { logo_uri: 'https://before.example/logo.png' });
    expect(logo.error).toBeNull();
    expect(logo.data).toMatchObject({ client_name: 'Before', logo_uri: 'https://before.example/logo.png' });
    expect(logo.data).not.toHaveProperty('client_secret');

    const updated = await admin.oauth.updateClient(id, {
      client_name: 'After',
      redirect_uris: ['https://after.example/cb'],
      grant_types: ['authorization_code'],
      token_endpoint_auth_method: 'client_secret_post',
    });
    expect(updated.error).toBeNull();
    expect(updated.data).toMatchObject({
      client_id: id,
      client_name: 'After',
      logo_uri: 'https://before.example/logo.png',
      redirect_uris: ['https://after.example/cb'],
      grant_types: ['authorization_code'],
      token_endpoint_auth_method: 'client_secret_post',
      client_type: 'confidential',
      created_at: created.created_at,
    });
    expect(Date.parse(updated.data!.updated_at)).toBeGreaterThanOrEqual(Date.parse(created.updated_at));
    expect((await storedRow(id))?.client_secret_hash).toBe(hashBefore);

    // "" clears an optional field.
    const cleared = await admin.oauth.updateClient(id, { logo_uri: '' });
    expect(cleared.data).not.toHaveProperty('logo_uri');

    expect((await admin.oauth.getClient(id)).data).toMatchObject({ client_name: 'After' });

    const del = await admin.oauth.deleteClient(id);
    expect(del).toEqual({ data: null, error: null });
    const gone = await admin.oauth.getClient(id);
    expect(gone.data).toBeNull();
    expect(gone.error).toMatchObject({ status: 404, code: 'oauth_client_not_found', message: 'OAuth client not found' });
    expect((await admin.oauth.deleteClient(id)).error?.status).toBe(404);
    expect((await admin.oauth.updateClient(id, { client_name: 'x' })).error?.status).toBe(404);
    // GoTrue deletes softly: the row stays, marked.
    expect((await storedRow(id))?.deleted_at).not.toBeNull();
  });

  it('DELETE answers 204 with no body', async () => {
    const id = (await admin.oauth.createClient({ client_name: 'd', redirect_uris: ['https://d.example/cb'] })).data!.client_id;
    const res = await adminRaw(on, `/${id}`, { method: 'DELETE' });
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
  });

  it('an unknown client is 404 oauth_client_not_found, a malformed id 400 "invalid client_id format"', async () => {
    const unknown = await admin.oauth.getClient(randomUUID());
    expect(unknown.error).toMatchObject({ status: 404, code: 'oauth_client_not_found', message: 'OAuth client not found' });
    for (const bad of ['not-a-uuid', `URN:UUID:${randomUUID()}`, `${randomUUID()}0`]) {
      const malformed = await admin.oauth.getClient(bad);
      expect(malformed.error, bad).toMatchObject({ status: 400, code: 'validation_failed', message: 'invalid client_id format' });
    }
  });

  it('a client id is read as Go reads a UUID (braces, urn:uuid:, 32 hex digits, any case)', async () => {
    const id = (await admin.oauth.createClient({ client_name: 'u', redirect_uris: ['https://u.example/cb'] })).data!.client_id;
    const hex = id.replaceAll('-', '');
    for (const form of [`{${id}}`, `{${hex}}`, `urn:uuid:${id}`, `urn:uuid:${hex}`, hex, id.toUpperCase()]) {
      const res = await adminRaw(on, `/${encodeURIComponent(form)}`);
      expect(res.status, form).toBe(200);
      expect((res.json as { client_id: string }).client_id).toBe(id);
    }
  });

  it.each([
    [{}, 'No fields provided for update'],
    [{ client_name: null }, 'No fields provided for update'],
    [{ redirect_uris: [] }, 'redirect_uris cannot be empty'],
    [{ grant_types: [] }, 'grant_types cannot be empty'],
    [{ redirect_uris: ['http://evil.example/cb'] }, "invalid redirect_uri 'http://evil.example/cb': HTTP scheme only allowed for localhost"],
    [{ client_uri: 'nope' }, 'client_uri must be a valid URL'],
    [{ token_endpoint_auth_method: 'tls' }, 'invalid token_endpoint_auth_method: must be one of [none client_secret_basic client_secret_post]'],
    [
      { token_endpoint_auth_method: 'none' },
      "token_endpoint_auth_method 'none' is not valid for client_type 'confidential'; valid methods: [client_secret_basic client_secret_post]",
    ],
  ])('update refuses %j: 400 validation_failed', async (params, message) => {
    const id = (await admin.oauth.createClient({ client_name: 'v', redirect_uris: ['https://v.example/cb'] })).data!.client_id;
    const { data, error } = await admin.oauth.updateClient(id, params as Parameters<typeof admin.oauth.updateClient>[1]);
    expect(data).toBeNull();
    expect(error).toMatchObject({ status: 400, code: 'validation_failed', message });
  });

  it('a public client keeps token_endpoint_auth_method none', async () => {
    const id = (await admin.oauth.createClient({ client_name: 'p', redirect_uris: ['myapp://cb'], token_endpoint_auth_method: 'none' }))
      .data!.client_id;
    const { error } = await admin.oauth.updateClient(id, { token_endpoint_auth_method: 'client_secret_basic' });
    expect(error).toMatchObject({
      status: 400,
      message: "token_endpoint_auth_method 'client_secret_basic' is not valid for client_type 'public'; valid methods: [none]",
    });
  });
});

describe('regenerate_secret', () => {
  it('gives a new secret; the stored hash is the new one and the old secret no longer matches', async () => {
    const created = (await admin.oauth.createClient({ client_name: 'r', redirect_uris: ['https://r.example/cb'] })).data!;
    const { data, error } = await admin.oauth.regenerateClientSecret(created.client_id);
    expect(error).toBeNull();
    expect(data?.client_id).toBe(created.client_id);
    expect(data?.client_secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(data?.client_secret).not.toBe(created.client_secret);
    const hash = (await storedRow(created.client_id))?.client_secret_hash;
    expect(hash).toBe(sha256(data!.client_secret!));
    expect(hash).not.toBe(sha256(created.client_secret!));
    // Only shown when made: a later read has none.
    expect((await admin.oauth.getClient(created.client_id)).data).not.toHaveProperty('client_secret');
  });

  it('a public client has no secret to regenerate; an unknown client is 404', async () => {
    const id = (await admin.oauth.createClient({ client_name: 'p', redirect_uris: ['myapp://cb'], token_endpoint_auth_method: 'none' }))
      .data!.client_id;
    const pub = await admin.oauth.regenerateClientSecret(id);
    expect(pub.error).toMatchObject({ status: 400, code: 'validation_failed', message: 'Cannot regenerate secret for public client' });
    const unknown = await admin.oauth.regenerateClientSecret(randomUUID());
    expect(unknown.error).toMatchObject({ status: 404, code: 'oauth_client_not_found' });
  });
});

describe('list', () => {
  it('every client, newest first, without pagination (as GoTrue: page and per_page ignored, no Link header)', async () => {
    await on.db.query('delete from auth.oauth_clients');
    // No client at all: GoTrue's body is {} (the empty list is left out).
    const empty = await adminRaw(on, '');
    expect(empty.status).toBe(200);
    expect(empty.json).toEqual({});
    const none = await admin.oauth.listClients();
    expect(none.error).toBeNull();
    expect(none.data).toEqual({ nextPage: null, lastPage: 0, total: 0 });

    const ids: string[] = [];
    for (let i = 0; i < 3; i++)
      ids.push((await admin.oauth.createClient({ client_name: `l${i}`, redirect_uris: ['https://l.example/cb'] })).data!.client_id);
    const deleted = ids.shift()!;
    await admin.oauth.deleteClient(deleted);

    const { data, error } = await admin.oauth.listClients({ page: 1, perPage: 1 });
    expect(error).toBeNull();
    expect(data.clients.map((c) => c.client_id)).toEqual([...ids].reverse());
    expect(data.clients.every((c) => !('client_secret' in c))).toBe(true);
    expect(data).toMatchObject({ nextPage: null, lastPage: 0, total: 0 });

    const res = await adminRaw(on, '?page=2&per_page=1');
    expect(res.status).toBe(200);
    expect(res.headers.get('link')).toBeNull();
    expect(res.headers.get('x-total-count')).toBeNull();
    expect((res.json as { clients: unknown[] }).clients).toHaveLength(2);
  });
});

describe('who may call it', () => {
  it('a signed-in user is refused with 403 not_admin, no token with 401', async () => {
    const token = await userToken(on);
    const marker = `refused-${randomUUID()}`;
    for (const [method, path] of [
      ['GET', ''],
      ['POST', ''],
      ['GET', `/${randomUUID()}`],
      ['PUT', `/${randomUUID()}`],
      ['DELETE', `/${randomUUID()}`],
      ['POST', `/${randomUUID()}/regenerate_secret`],
    ] as const) {
      const user = await raw(on, `/auth/v1/admin/oauth/clients${path}`, {
        method,
        bearer: token,
        body: method === 'GET' || method === 'DELETE' ? undefined : { client_name: marker, redirect_uris: ['https://x.example/cb'] },
      });
      expect(user.status, `${method} ${path}`).toBe(403);
      expect(user.json).toMatchObject({ code: 'not_admin', message: 'User not allowed' });
      const anon = await raw(on, `/auth/v1/admin/oauth/clients${path}`, { method });
      expect(anon.status, `${method} ${path}`).toBe(401);
    }
    const made = await on.db.query('select 1 from auth.oauth_clients where client_name = $1', [marker]);
    expect(made.rows).toHaveLength(0);
  });

  it('the anon key alone cannot read the table through /rest/v1', async () => {
    const res = await raw(on, '/rest/v1/oauth_clients?select=*', { headers: { 'accept-profile': 'auth' } });
    expect(res.status).not.toBe(200);
  });
});

describe('feature off (the default)', () => {
  it('every route answers 404 feature_disabled "OAuth server is disabled" to the admin', async () => {
    const offAdmin = serviceClient(off).auth.admin;
    const list = await offAdmin.oauth.listClients();
    expect(list.data).toEqual({ clients: [] });
    expect(list.error).toMatchObject({ status: 404, code: 'feature_disabled', message: 'OAuth server is disabled' });
    const create = await offAdmin.oauth.createClient({ client_name: 'x', redirect_uris: ['https://x.example/cb'] });
    expect(create.error).toMatchObject({ status: 404, code: 'feature_disabled', message: 'OAuth server is disabled' });
    for (const call of [
      offAdmin.oauth.getClient(randomUUID()),
      offAdmin.oauth.updateClient(randomUUID(), { client_name: 'y' }),
      offAdmin.oauth.deleteClient(randomUUID()),
      offAdmin.oauth.regenerateClientSecret(randomUUID()),
    ])
      expect((await call).error).toMatchObject({ status: 404, code: 'feature_disabled' });
  });

  it('still asks for admin credentials first (as GoTrue): a user gets 403', async () => {
    const token = await userToken(off);
    const res = await raw(off, '/auth/v1/admin/oauth/clients', { bearer: token });
    expect(res.status).toBe(403);
    expect(res.json).toMatchObject({ code: 'not_admin' });
  });
});

describe('the authorization flows (not provided)', () => {
  const paths: [string, string][] = [
    ['GET', '/auth/v1/oauth/authorize?client_id=x&response_type=code'],
    ['POST', '/auth/v1/oauth/token'],
    ['POST', '/auth/v1/oauth/clients/register'],
    ['GET', '/auth/v1/oauth/userinfo'],
    ['GET', `/auth/v1/oauth/authorizations/${randomUUID()}`],
    ['GET', '/auth/v1/.well-known/oauth-authorization-server'],
  ];

  it('feature off: 404 feature_disabled "OAuth server is disabled", as GoTrue', async () => {
    for (const [method, path] of paths) {
      const res = await raw(off, path, { method, body: method === 'POST' ? {} : undefined });
      expect(res.status, path).toBe(404);
      expect(res.json, path).toMatchObject({ code: 'feature_disabled', message: 'OAuth server is disabled' });
    }
  });

  it('feature on: still 404 feature_disabled, saying that localbase does not provide them', async () => {
    for (const [method, path] of paths) {
      const res = await raw(on, path, { method, body: method === 'POST' ? {} : undefined });
      expect(res.status, path).toBe(404);
      expect(res.json, path).toMatchObject({ code: 'feature_disabled' });
      expect((res.json as { message: string }).message, path).toMatch(/not provided by localbase/);
    }
  });
});

describe("a user's OAuth grants (supabase.auth.oauth.listGrants / revokeGrant)", () => {
  it('feature off: 404 feature_disabled "OAuth server is disabled", as GoTrue', async () => {
    const { client } = await signedInClient(off);
    const list = await client.auth.oauth.listGrants();
    expect(list.error).toMatchObject({ status: 404, code: 'feature_disabled', message: 'OAuth server is disabled' });
    const revoke = await client.auth.oauth.revokeGrant({ clientId: randomUUID() });
    expect(revoke.error).toMatchObject({ status: 404, code: 'feature_disabled', message: 'OAuth server is disabled' });
  });

  it('feature on: still 404 feature_disabled, saying that localbase does not provide the flows', async () => {
    const { client } = await signedInClient(on);
    const list = await client.auth.oauth.listGrants();
    expect(list.error).toMatchObject({ status: 404, code: 'feature_disabled' });
    expect(list.error?.message).toMatch(/not provided by localbase/);
  });

  it('asks for a signed-in user first, as GET /user does', async () => {
    const user = await raw(off, '/auth/v1/user');
    const grants = await raw(off, '/auth/v1/user/oauth/grants');
    expect([grants.status, grants.json]).toEqual([user.status, user.json]);
  });
});

describe('a database made by an older localbase', () => {
  it('gets auth.oauth_clients at the next start', async () => {
    // Its own database on PostgreSQL too: dropping the table and re-running the bootstrap (which grants the API
    // roles on every table in public) must not touch the database the other test files share.
    const dir = testDatabaseUrl ? undefined : await mkdtemp(join(tmpdir(), 'localbase-oauth-'));
    const scratch = testDatabaseUrl ? await createScratchDatabase(testDatabaseUrl) : undefined;
    const opts = scratch
      ? { databaseUrl: scratch.url, enableOAuthServer: true }
      : { memory: false, dataDir: dir, enableOAuthServer: true };
    try {
      let lb = await startTestServer(opts);
      // What an older localbase left: no table, no types, and its own bootstrap version.
      await lb.db.query('drop table if exists auth.oauth_clients');
      await lb.db.query('drop type if exists auth.oauth_client_type');
      await lb.db.query('drop type if exists auth.oauth_registration_type');
      await lb.db.query("update localbase.meta set value = 'older' where key = 'bootstrap_hash'");
      await lb.stop();

      lb = await startTestServer(opts);
      try {
        const { data, error } = await serviceClient(lb).auth.admin.oauth.createClient({
          client_name: 'after upgrade',
          redirect_uris: ['https://up.example/cb'],
        });
        expect(error).toBeNull();
        expect(data?.client_secret).toBeTruthy();
      } finally {
        await lb.stop();
      }
    } finally {
      if (dir) removeDataFolder(dir);
      await scratch?.drop();
    }
  });
});
