// Helpers for the /rest/v1 suite (test/rest-*.test.ts): a server on the rest fixture schema, two signed-in users
// with profiles, and a unique run tag that isolates this file's rows on a shared PostgreSQL database.
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import type { SupabaseClient } from '@supabase/supabase-js';
import { anonClient, emptySeedFile, serviceClient, signedInClient, startTestServer, uniqueEmail, type Localbase, type LocalbaseOptions } from './helpers.ts';

export const restMigrationsDir = fileURLToPath(new URL('./fixtures/rest-migrations/', import.meta.url));

/**
 * Sets (or, with null, resets) one of PostgREST's in-database settings on the authenticator role for this server's
 * database only, then reloads the server's cache. Roles are cluster-wide: a plain `alter role … set` would reach
 * every server of the suite on the same PostgreSQL cluster (db-tx-end = rollback once rolled back another file's
 * inserts while they still answered 201).
 */
export async function setAuthenticatorSetting(lb: Localbase, name: 'db_tx_end' | 'db_plan_enabled', value: string | null): Promise<void> {
  await lb.db.query(
    value === null
      ? `do $$ begin execute format('alter role authenticator in database %I reset %s', current_database(), 'pgrst.${name}'); end $$`
      : `do $$ begin execute format('alter role authenticator in database %I set %s = %L', current_database(), 'pgrst.${name}', '${value.replaceAll("'", "''")}'); end $$`,
  );
  await lb.reloadSchema();
}

export function startRestServer(overrides: LocalbaseOptions = {}): Promise<Localbase> {
  return startTestServer({ migrationsDir: restMigrationsDir, seedFile: emptySeedFile, restSchemas: ['public', 'rt_other'], ...overrides });
}

/** A tag unique to this run and file: every row a test writes carries it, every count filters on it. */
export function runTag(prefix = 'run'): string {
  return `${prefix}-${Date.now().toString(36)}-${randomBytes(4).toString('hex')}`;
}

export interface RestUser {
  client: SupabaseClient;
  id: string;
  email: string;
  token: string;
}

/** A confirmed, signed-in user with a rt_profiles row (inserted by the user, through RLS). */
export async function restUser(lb: Localbase, name: string, run: string): Promise<RestUser> {
  const { client, email } = await signedInClient(lb, uniqueEmail(name));
  const { data } = await client.auth.getSession();
  const session = data.session;
  if (!session) throw new Error('no session after sign-in');
  const ins = await client.from('rt_profiles').insert({ id: session.user.id, display_name: name, run });
  if (ins.error) throw new Error(`profile insert: ${JSON.stringify(ins.error)}`);
  return { client, id: session.user.id, email, token: session.access_token };
}

export interface RestFixture {
  lb: Localbase;
  run: string;
  alice: RestUser;
  bob: RestUser;
  anon: SupabaseClient;
  service: SupabaseClient;
}

export async function restFixture(overrides: LocalbaseOptions = {}): Promise<RestFixture> {
  const lb = await startRestServer(overrides);
  const run = runTag();
  const [alice, bob] = [await restUser(lb, 'alice', run), await restUser(lb, 'bob', run)];
  return { lb, run, alice, bob, anon: anonClient(lb), service: serviceClient(lb) };
}

/** fetch against /rest/v1 with the anon apikey and an optional bearer; returns status, headers and parsed body. */
export async function restRaw(
  lb: Localbase,
  path: string,
  init: { method?: string; body?: string; headers?: Record<string, string>; bearer?: string; apikey?: string } = {},
): Promise<{ status: number; headers: Headers; text: string; json: unknown }> {
  const headers: Record<string, string> = { apikey: init.apikey ?? lb.anonKey, ...(init.headers ?? {}) };
  if (init.bearer) headers.authorization = `Bearer ${init.bearer}`;
  if (init.body !== undefined && !Object.keys(headers).some((h) => h.toLowerCase() === 'content-type')) headers['content-type'] = 'application/json';
  const res = await fetch(`${lb.url}/rest/v1/${path}`, { method: init.method ?? 'GET', headers, body: init.body });
  const text = await res.text();
  let json: unknown;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, text, json };
}

export const codeOfBody = (json: unknown): unknown => (typeof json === 'object' && json !== null ? (json as { code?: unknown }).code : undefined);
