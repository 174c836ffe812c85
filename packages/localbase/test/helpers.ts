// Shared test helpers: start localbase in-process, make supabase-js clients, read the mailbox,
// generate unique e-mails and TOTP codes, and send raw HTTP requests.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { IncomingHttpHeaders, OutgoingHttpHeaders } from 'node:http';
import { fileURLToPath } from 'node:url';
import { createClient, type SupabaseClient } from '@supabase/supabase-js';
import * as OTPAuth from 'otpauth';
import { vi } from 'vitest';
import { dataFolderEntries } from '../src/data-folder.ts';
import { startLocalbase, type Localbase, type LocalbaseOptions } from '../src/index.ts';
import { createScratchDatabase } from './cli.ts';

export type { Localbase, LocalbaseOptions };

/** Empty migrations folder and an empty seed: the suite tests auth only, never the app's schema. */
export const fixturesDir = fileURLToPath(new URL('./fixtures/', import.meta.url));
export const emptyMigrationsDir = fileURLToPath(new URL('./fixtures/empty-migrations/', import.meta.url));
export const emptySeedFile = fileURLToPath(new URL('./fixtures/empty-seed.sql', import.meta.url));

/** When set, every test server runs on this real PostgreSQL server instead of in-memory PGlite. */
export const testDatabaseUrl = process.env.LOCALBASE_TEST_DATABASE_URL || undefined;

export const API_VERSION = '2024-01-01';

const GENEROUS_RATE_LIMITS = {
  signInSignUps: 100_000,
  tokenRefresh: 100_000,
  tokenVerifications: 100_000,
  emailSent: 100_000,
  anonymousUsers: 100_000,
};

/**
 * A database of the file's own on PostgreSQL (for what must not reach the other files on the shared one: a
 * publication, policies, a role setting); on PGlite every server has its own anyway. The shared database is
 * bootstrapped first (serialised with the other files by its advisory lock): roles are cluster-wide, and two first
 * bootstraps of two new databases at once can both try to create them. `options` go to startTestServer; drop() at the end.
 */
export async function ownDatabase(): Promise<{ options: LocalbaseOptions; drop: () => Promise<void> }> {
  if (!testDatabaseUrl) return { options: {}, drop: async () => {} };
  await (await startTestServer()).stop();
  const scratch = await createScratchDatabase(testDatabaseUrl);
  return { options: { databaseUrl: scratch.url }, drop: scratch.drop };
}

/** Removes a data folder and what localbase keeps beside it (storage bytes, signing keys, lock). */
export function removeDataFolder(dir: string): void {
  for (const entry of dataFolderEntries(dir)) rmSync(entry, { recursive: true, force: true });
}

/** Starts a server for one test file. Memory PGlite by default, a real PostgreSQL when LOCALBASE_TEST_DATABASE_URL is set. */
export async function startTestServer(overrides: LocalbaseOptions = {}): Promise<Localbase> {
  // On PostgreSQL each server keeps its storage bytes in its own throwaway folder (several test files run at once).
  const storageDir = testDatabaseUrl && !overrides.storageDir ? mkdtempSync(path.join(tmpdir(), 'localbase-test-storage-')) : undefined;
  const dbOptions: LocalbaseOptions = testDatabaseUrl ? { databaseUrl: testDatabaseUrl, storageDir } : { memory: true };
  let lb: Localbase;
  try {
    lb = await startLocalbase({
      ...dbOptions,
      port: 0,
      quiet: true,
      migrationsDir: emptyMigrationsDir,
      seedFile: emptySeedFile,
      ...overrides,
      // A test file signs in far more than 30 times in 5 minutes: raise the limits unless the file tests them.
      rateLimits: { ...GENEROUS_RATE_LIMITS, ...overrides.rateLimits },
      // ... and mails one address again within a minute (test/email-frequency.test.ts tests the interval).
      emailMaxFrequencySeconds: overrides.emailMaxFrequencySeconds ?? 0,
    });
  } catch (error) {
    if (storageDir) rmSync(storageDir, { recursive: true, force: true }); // a server refused at start keeps nothing
    throw error;
  }
  if (storageDir) {
    const stop = lb.stop.bind(lb);
    lb.stop = async () => {
      await stop();
      rmSync(storageDir, { recursive: true, force: true });
    };
  }
  return lb;
}

const clientAuthOptions = { persistSession: false, autoRefreshToken: false, detectSessionInUrl: false } as const;

/** A supabase-js client with the anon key, as a browser or app would create it. */
export function anonClient(lb: Localbase): SupabaseClient {
  return createClient(lb.url, lb.anonKey, { auth: clientAuthOptions });
}

/** A supabase-js client with the service_role key (admin API). */
export function serviceClient(lb: Localbase): SupabaseClient {
  return createClient(lb.url, lb.serviceRoleKey, { auth: clientAuthOptions });
}

let emailCounter = 0;
/** A unique e-mail per call (also unique across runs, because a shared PostgreSQL keeps its users). */
export function uniqueEmail(prefix = 'user'): string {
  emailCounter += 1;
  return `${prefix}-${Date.now().toString(36)}-${randomBytes(4).toString('hex')}-${emailCounter}@example.com`;
}

export const PASSWORD = 'correct-horse-battery-9';

export interface MailMessage {
  id: string;
  to: string;
  subject: string;
  type: 'signup' | 'magiclink' | 'recovery' | 'email_change' | 'invite' | 'reauthentication';
  html: string;
  text: string;
  links: string[];
  token?: string;
  createdAt: string;
}

/** GET /mailbox/api/messages?to=… — newest first. */
export async function listMail(lb: Localbase, to: string): Promise<MailMessage[]> {
  const res = await fetch(`${lb.url}/mailbox/api/messages?to=${encodeURIComponent(to)}`);
  if (res.status !== 200) throw new Error(`mailbox answered ${res.status}: ${await res.text()}`);
  return (await res.json()) as MailMessage[];
}

/**
 * Waits until the mailbox holds at least `count` messages to `to` (optionally of one type) and returns them, newest
 * first. Mail may be delivered after the HTTP answer, so this polls for a short while.
 */
export async function waitForMail(
  lb: Localbase,
  to: string,
  opts: { type?: MailMessage['type']; count?: number; timeoutMs?: number } = {},
): Promise<MailMessage[]> {
  const count = opts.count ?? 1;
  const deadline = Date.now() + (opts.timeoutMs ?? 5000);
  for (;;) {
    const all = await listMail(lb, to);
    const found = opts.type ? all.filter((m) => m.type === opts.type) : all;
    if (found.length >= count) return found;
    if (Date.now() > deadline) {
      throw new Error(
        `expected ${count} mail(s)${opts.type ? ` of type ${opts.type}` : ''} to ${to}, mailbox has: ` +
          JSON.stringify(all.map((m) => ({ type: m.type, subject: m.subject }))),
      );
    }
    await sleep(50);
  }
}

/** The newest mail to `to` (of a type), waiting for it. */
export async function latestMail(lb: Localbase, to: string, type?: MailMessage['type']): Promise<MailMessage> {
  const [mail] = await waitForMail(lb, to, { type });
  if (!mail) throw new Error('unreachable: waitForMail returned no mail');
  return mail;
}

/** The verify link of a mail (the one pointing at /auth/v1/verify). */
export function verifyLink(mail: MailMessage): URL {
  const link = mail.links.find((l) => l.includes('/auth/v1/verify'));
  if (!link) throw new Error(`mail "${mail.subject}" has no /auth/v1/verify link: ${JSON.stringify(mail.links)}`);
  return new URL(link);
}

/** The token hash of a mail's verify link (`?token=<hash>`), for verifyOtp({ token_hash }). */
export function tokenHashOf(mail: MailMessage): string {
  const hash = verifyLink(mail).searchParams.get('token');
  if (!hash) throw new Error(`verify link without token: ${verifyLink(mail).href}`);
  return hash;
}

/** Current TOTP code for a base32 secret: SHA-1, 6 digits, 30 s (what an authenticator app shows). */
export function totpCode(secret: string, timestamp = Date.now()): string {
  const totp = new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(secret), algorithm: 'SHA1', digits: 6, period: 30 });
  return totp.generate({ timestamp });
}

/** A TOTP code that is certainly wrong now (not within ±1 step). */
export function wrongTotpCode(secret: string): string {
  const valid = new Set([-1, 0, 1].map((s) => totpCode(secret, Date.now() + s * 30_000)));
  for (let n = 0; ; n++) {
    const candidate = String((123456 + n * 7919) % 1_000_000).padStart(6, '0');
    if (!valid.has(candidate)) return candidate;
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

export interface RawResponse {
  status: number;
  headers: Headers;
  text: string;
  /** Parsed JSON body, or undefined when the body is not JSON. */
  json: unknown;
}

export interface RawRequest {
  method?: string;
  /** Object → JSON-encoded; string → sent as is. */
  body?: unknown;
  headers?: Record<string, string>;
  /** apikey header: defaults to the anon key; null sends none. */
  apikey?: string | null;
  /** Bearer token for Authorization; defaults to none. */
  bearer?: string;
  /** Adds X-Supabase-Api-Version: 2024-01-01 like auth-js does (default true). */
  apiVersion?: boolean;
  redirect?: RequestRedirect;
  /**
   * Local address of the client's socket (e.g. '127.0.0.2'): the server sees this peer address. All of 127.0.0.0/8
   * is loopback on Linux, so tests act as a proxy on 127.0.0.2 and as a direct client on 127.0.0.1.
   */
  localAddress?: string;
}

export interface HttpResult {
  status: number;
  statusText: string;
  headers: IncomingHttpHeaders;
  /** name, value, name, value … as received (repeated headers stay separate) */
  rawHeaders: string[];
  body: Buffer;
}

/**
 * One request with node:http on a new connection, optionally from a given local address. Headers given as arrays
 * are sent as several header lines.
 */
export function httpRequest(
  url: string,
  opts: { method?: string; headers?: OutgoingHttpHeaders; body?: string | Buffer; localAddress?: string; signal?: AbortSignal } = {},
): Promise<HttpResult> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, {
      method: opts.method ?? 'GET',
      headers: opts.headers,
      localAddress: opts.localAddress,
      agent: false,
      signal: opts.signal,
    });
    req.on('error', reject);
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('error', reject);
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          statusText: res.statusMessage ?? '',
          headers: res.headers,
          rawHeaders: res.rawHeaders,
          body: Buffer.concat(chunks),
        }),
      );
    });
    req.end(opts.body);
  });
}

/** A fetch that connects from `localAddress` (for supabase-js's `global.fetch`, or raw requests). */
export function fetchFrom(localAddress: string): typeof fetch {
  return async (input, init) => {
    const request = new Request(input, init);
    const body = request.body ? Buffer.from(await request.arrayBuffer()) : undefined;
    const headers: OutgoingHttpHeaders = {};
    request.headers.forEach((value, name) => {
      headers[name] = value;
    });
    const res = await httpRequest(request.url, {
      method: request.method,
      headers,
      body,
      localAddress,
      signal: init?.signal ?? undefined,
    });
    const received = new Headers();
    for (let i = 0; i + 1 < res.rawHeaders.length; i += 2) received.append(res.rawHeaders[i]!, res.rawHeaders[i + 1]!);
    const empty = res.status === 204 || res.status === 304 || request.method === 'HEAD';
    return new Response(empty ? null : new Uint8Array(res.body), { status: res.status, statusText: res.statusText, headers: received });
  };
}

/** A raw HTTP request against the server (path starts with '/'). */
export async function raw(lb: Localbase, path: string, req: RawRequest = {}): Promise<RawResponse> {
  const headers: Record<string, string> = {};
  const apikey = req.apikey === undefined ? lb.anonKey : req.apikey;
  if (apikey !== null) headers.apikey = apikey;
  if (req.bearer) headers.authorization = `Bearer ${req.bearer}`;
  if (req.apiVersion !== false) headers['x-supabase-api-version'] = API_VERSION;
  let body: string | undefined;
  if (req.body !== undefined) {
    body = typeof req.body === 'string' ? req.body : JSON.stringify(req.body);
    headers['content-type'] = 'application/json;charset=UTF-8';
  }
  Object.assign(headers, req.headers ?? {});
  const send = req.localAddress ? fetchFrom(req.localAddress) : fetch;
  const res = await send(lb.url + path, {
    method: req.method ?? (body === undefined ? 'GET' : 'POST'),
    headers,
    body,
    redirect: req.redirect ?? 'manual',
  });
  const text = await res.text();
  let json: unknown;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, text, json };
}

/** The `code` of an error body, or undefined. */
export function codeOf(res: RawResponse): unknown {
  return typeof res.json === 'object' && res.json !== null ? (res.json as Record<string, unknown>).code : undefined;
}

/** Decodes a JWT payload without verifying it (tests inspect claims). */
export function jwtPayload(token: string): Record<string, unknown> {
  const part = token.split('.')[1];
  if (!part) throw new Error('not a JWT');
  return JSON.parse(Buffer.from(part, 'base64url').toString('utf8')) as Record<string, unknown>;
}

/** Signs up (autoconfirm servers) or creates via the admin API a confirmed user, and returns a signed-in client. */
export async function signedInClient(
  lb: Localbase,
  email = uniqueEmail(),
  password = PASSWORD,
): Promise<{ client: SupabaseClient; email: string; password: string }> {
  const admin = serviceClient(lb);
  const created = await admin.auth.admin.createUser({ email, password, email_confirm: true });
  if (created.error) throw created.error;
  const client = anonClient(lb);
  const { error } = await client.auth.signInWithPassword({ email, password });
  if (error) throw error;
  return { client, email, password };
}

/** Direct refresh grant over HTTP (no client state involved). */
export function refreshRaw(lb: Localbase, refreshToken: string): Promise<RawResponse> {
  return raw(lb, '/auth/v1/token?grant_type=refresh_token', { body: { refresh_token: refreshToken } });
}

/** Records every console line written from now on (still printed) until vi.restoreAllMocks(). */
export function captureConsole(): string[] {
  const lines: string[] = [];
  const keep =
    (original: (...args: unknown[]) => void) =>
    (...args: unknown[]): void => {
      lines.push(args.map((a) => (a instanceof Error ? `${a.message}\n${a.stack}` : String(a))).join(' '));
      original(...args);
    };
  for (const name of ['log', 'error', 'warn', 'info'] as const) {
    const original = console[name].bind(console); // taken before the spy replaces it
    vi.spyOn(console, name).mockImplementation(keep(original));
  }
  return lines;
}
