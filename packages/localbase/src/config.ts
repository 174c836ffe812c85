import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { StoredJwk } from './auth/keys.ts';

/** Supabase CLI's public local-development values (protocol reference §E). */
export const DEFAULT_JWT_SECRET = 'super-secret-jwt-token-with-at-least-32-characters-long';
export const DEFAULT_ANON_KEY =
  'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJpc3MiOiJzdXBhYmFzZS1kZW1vIiwicm9sZSI6ImFub24iLCJleHAiOjE5ODM4MTI5OTZ9.CRXP1A7WOeoJeXxjNni43kdQwgnWNReilDMblYTn_I0';
export const DEFAULT_SERVICE_ROLE_KEY =
  'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJpc3MiOiJzdXBhYmFzZS1kZW1vIiwicm9sZSI6InNlcnZpY2Vfcm9sZSIsImV4cCI6MTk4MzgxMjk5Nn0.EGIM96RAZx35lJzdJsyH-qQwv8Hdp7fsn3W0YpN81IU';
export const DEFAULT_PUBLISHABLE_KEY = 'sb_publishable_ACJWlzQHlZjBrEguHvfOxg_3BJgxAaH';
export const DEFAULT_SECRET_KEY = 'sb_secret_N7UND0UgjKTVK-Uodkm0Hg_xSvEMPvz';

export interface RateLimits {
  /**
   * email and phone sign-ups per IP per window: the CLI's `sign_in_sign_ups`, which it passes to GoTrue as
   * GOTRUE_RATE_LIMIT_OTP, the limit of `/signup` (GoTrue's "sign-ins" here are its OTP ones; a password sign-in is
   * a token grant, counted in tokenRefresh)
   */
  signInSignUps: number;
  /**
   * token grants per IP per window, password sign-ins and refreshes together: GoTrue's Token limiter
   * (GOTRUE_RATE_LIMIT_TOKEN_REFRESH, the CLI's `token_refresh`)
   */
  tokenRefresh: number;
  /** /verify requests per IP per window */
  tokenVerifications: number;
  /** auth emails per IP and per recipient per window */
  emailSent: number;
  /** SMS per IP and per phone number per hour (GOTRUE_RATE_LIMIT_SMS_SENT; the CLI's [auth.rate_limit] sms_sent = 30) */
  smsSent: number;
  /** anonymous sign-ins per IP per hour (GoTrue's GOTRUE_RATE_LIMIT_ANONYMOUS_USERS; not windowSeconds) */
  anonymousUsers: number;
  windowSeconds: number;
}

/** GoTrue's default SMTP_MAX_FREQUENCY (one minute), also hosted Supabase's (decision 141). */
export const DEFAULT_EMAIL_MAX_FREQUENCY_SECONDS = 60;

export const DEFAULT_RATE_LIMITS: RateLimits = {
  signInSignUps: 30,
  tokenRefresh: 150,
  tokenVerifications: 30,
  emailSent: 1000,
  smsSent: 30,
  anonymousUsers: 30,
  windowSeconds: 300,
};

/**
 * Phone sign-ups and sign-ins with SMS codes (docs/decisions/034-phone-auth-and-sms-in-the-mailbox.md). The SMS
 * go to localbase's mailbox (GET /mailbox, /mailbox/api/sms?to=<phone>); nothing leaves the machine.
 */
export interface SmsSettings {
  /** GOTRUE_EXTERNAL_PHONE_ENABLED (the CLI's [auth.sms] enable_signup, default false): phone sign-ups and sign-ins. */
  enabled: boolean;
  /** GOTRUE_SMS_AUTOCONFIRM (the CLI's [auth.sms] enable_confirmations = false, so true): no code needed at sign-up. */
  autoconfirm: boolean;
  /** GOTRUE_SMS_OTP_EXP: seconds an SMS code stays valid (GoTrue's default 60). */
  otpExpiry: number;
  /** GOTRUE_SMS_OTP_LENGTH: digits of an SMS code, 6 to 10 (default 6). */
  otpLength: number;
  /** GOTRUE_SMS_MAX_FREQUENCY in seconds: the least time between two codes to one user (the CLI's max_frequency "5s"). */
  maxFrequencySeconds: number;
  /** GOTRUE_SMS_TEMPLATE: the text, "{{ .Code }}" replaced by the code (default "Your code is {{ .Code }}"). */
  template: string;
  /** GOTRUE_SMS_TEST_OTP: fixed codes per phone number (digits only); no SMS is stored for them. */
  testOtp: Record<string, string>;
}

export const DEFAULT_SMS: SmsSettings = {
  enabled: false,
  autoconfirm: true,
  otpExpiry: 60,
  otpLength: 6,
  maxFrequencySeconds: 5,
  template: 'Your code is {{ .Code }}',
  testOtp: {},
};

/**
 * Per-account protection against distributed guessing (docs/decisions/017-account-guessing-defence.md).
 * Failures are counted per account (and, separately, per address that signed in to it before): after
 * `freeFailures` consecutive failures each further failure blocks the next attempt for 1 s, 2 s, 4 s … up to
 * `maxDelaySeconds`.
 */
export interface AccountProtection {
  /** consecutive failures per account before the delays start */
  freeFailures: number;
  /** cap of the growing delay in seconds; 0 turns the per-account delays off */
  maxDelaySeconds: number;
  /** an account's failures are forgotten after this many seconds without a new one */
  failureWindowSeconds: number;
  /** wrong email codes per recipient before the recipient's pending codes and links are deleted; 0 = never */
  otpMaxAttempts: number;
}

export const DEFAULT_ACCOUNT_PROTECTION: AccountProtection = {
  freeFailures: 5,
  maxDelaySeconds: 60,
  failureWindowSeconds: 900,
  otpMaxAttempts: 5,
};

export interface ResolvedConfig {
  host: string;
  port: number;
  memory: boolean;
  dataDir: string;
  databaseUrl?: string;
  migrationsDir: string;
  seedFile: string;
  quiet: boolean;
  jwtSecret: string;
  /**
   * The JWK set file of the signing keys (the Supabase CLI's signing_keys_path), created with an ES256 key and a
   * standby on first start; undefined with --memory (a fresh set per start) unless given.
   */
  signingKeysPath?: string;
  /** The signing keys (private parts included), loaded at start; tests may pass them. */
  signingKeys?: StoredJwk[];
  anonKey: string;
  serviceRoleKey: string;
  jwtExpiry: number;
  minPasswordLength: number;
  enableConfirmations: boolean;
  /** GOTRUE_DISABLE_SIGNUP: no new users from /signup or OTP. */
  disableSignup: boolean;
  /** GOTRUE_EXTERNAL_ANONYMOUS_USERS_ENABLED: POST /signup without email and phone creates a guest user. */
  enableAnonymousSignIns: boolean;
  /** GOTRUE_SECURITY_MANUAL_LINKING_ENABLED: identities may be linked and unlinked by the user. */
  enableManualLinking: boolean;
  /** GOTRUE_OAUTH_SERVER_ENABLED: the OAuth 2.1 server's admin API (/admin/oauth/clients) answers; off by default. */
  enableOAuthServer: boolean;
  siteUrl: string;
  additionalRedirectUrls: string[];
  rateLimits: RateLimits;
  /** Phone auth and SMS codes. */
  sms: SmsSettings;
  /** Proxies whose client-IP header is believed (IPs and CIDRs); empty = every peer is a client. */
  trustedProxies: string[];
  /** The header a trusted proxy puts the client's address in (default X-Forwarded-For). */
  clientIpHeader: string;
  /** Honour Sb-Forwarded-For on requests made with a secret / service_role apikey. */
  sbForwardedFor: boolean;
  accountProtection: AccountProtection;
  /** Clock of the per-account delays (ms since the epoch); tests inject one. */
  clock: () => number;
  /** Per-request statement timeout of /rest/v1 in ms (0 = none). */
  statementTimeoutMs: number;
  /** PGlite in a worker thread (statement timeout enforced) rather than on the main thread. */
  pgliteWorker: boolean;
  /** /rest/v1: the most rows one request returns (PostgREST's db-max-rows; null = no cap). */
  maxRows: number | null;
  /** /rest/v1: exposed schemas, the first is the default profile (PostgREST's db-schemas). */
  restSchemas: string[];
  smtp?: { host: string; port: number; from: string };
  /** How many bcrypt hashes/comparisons run at once, off the HTTP thread (the rest wait in line). */
  passwordHashConcurrency: number;
  /** /storage/v1: the folder of the objects' bytes (undefined with --memory: a throwaway folder deleted on stop). */
  storageDir?: string;
  /** /storage/v1: the largest object in bytes (a bucket's file_size_limit may only lower it). */
  storageFileSizeLimit: number;
  /** /storage/v1/render/image on (sharp) or off (404, the default as the Supabase CLI's). */
  imageTransformation: boolean;
  repoRoot: string;
  /** Folder for the template snapshot cache. */
  cacheDir: string;
  /** Seconds a mailed OTP / link stays valid (Supabase CLI: 3600). */
  otpExpiry: number;
  /**
   * GOTRUE_SMTP_MAX_FREQUENCY in seconds: the least time between two mails of one kind (confirmation, recovery and
   * sign-in link, email change, reauthentication) to one user; 0 = none. Default 60, GoTrue's (decision 141).
   */
  emailMaxFrequencySeconds: number;
  /** Seconds a revoked refresh token may still be exchanged (Supabase CLI: 10). */
  refreshTokenReuseInterval: number;
  mfaMaxEnrolledFactors: number;
}

function hasWorkspaces(dir: string): boolean {
  const file = path.join(dir, 'package.json');
  if (!fs.existsSync(file)) return false;
  try {
    return Boolean((JSON.parse(fs.readFileSync(file, 'utf8')) as { workspaces?: unknown }).workspaces);
  } catch {
    return false;
  }
}

function walkUp(start: string): string | undefined {
  let dir = path.resolve(start);
  for (;;) {
    if (hasWorkspaces(dir)) return dir;
    const parent = path.dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}

/** The monorepo root: the nearest folder upwards whose package.json has "workspaces". */
export function findRepoRoot(): string {
  return (
    walkUp(process.cwd()) ??
    walkUp(path.dirname(fileURLToPath(import.meta.url))) ??
    process.cwd()
  );
}

/** The SMS settings with GoTrue's corrections: a code length outside 6..10 is 6, test numbers lose "+" and spaces. */
export function resolveSms(given: Partial<SmsSettings> = {}): SmsSettings {
  const s: SmsSettings = { ...DEFAULT_SMS, ...given };
  if (!Number.isInteger(s.otpLength) || s.otpLength < 6 || s.otpLength > 10) s.otpLength = 6;
  if (!(s.otpExpiry > 0)) s.otpExpiry = DEFAULT_SMS.otpExpiry;
  if (!(s.maxFrequencySeconds >= 0)) s.maxFrequencySeconds = DEFAULT_SMS.maxFrequencySeconds;
  if (s.template === '') s.template = DEFAULT_SMS.template;
  s.testOtp = Object.fromEntries(
    Object.entries(s.testOtp).map(([phone, code]) => [phone.replace(/^\+/, '').replaceAll(' ', ''), code]),
  );
  return s;
}

/** GOTRUE_SMS_TEST_OTP's format: "phone:code" pairs separated by commas ("4152127777:123456,4152127778:654321"). */
export function parseTestOtp(value: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const pair of value.split(',').map((p) => p.trim()).filter(Boolean)) {
    const i = pair.lastIndexOf(':');
    if (i <= 0 || i === pair.length - 1) throw new Error(`SMS test OTP: "${pair}" is not phone:code`);
    out[pair.slice(0, i).trim()] = pair.slice(i + 1).trim();
  }
  return out;
}
