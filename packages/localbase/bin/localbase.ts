#!/usr/bin/env node
// localbase CLI: `localbase start [flags]` — a Supabase-compatible backend over embedded PostgreSQL — and the
// Supabase CLI's everyday commands: db reset, migration new, gen types typescript, status.
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { startLocalbase, resolveConfig, DataDirLockedError, MigrationError } from '../src/index.ts';
import type { LocalbaseOptions } from '../src/index.ts';
import type { ResolvedConfig } from '../src/config.ts';
import { parseTestOtp } from '../src/config.ts';
import { deleteGuests, formatStatus, newMigration, resetDatabase, statusOf } from '../src/commands.ts';
import { parseAge } from '../src/auth/cleanup.ts';
import { generateTypescript, generateTypescriptFromMigrations } from '../src/gen/index.ts';
import { openPg } from '../src/db/pg.ts';
import { SIGNING_ALGS, generateSigningKey, loadOrCreateKeyFile, rotateKeys, writeKeyFile } from '../src/auth/keys.ts';
import type { SigningAlg } from '../src/auth/keys.ts';

const HELP = `Usage: localbase <command> [options]

Commands (the Supabase CLI's names):
  start                         run the server (the default command)
  status [-o pretty|env|json]   URLs and keys of the configured server, and whether it answers (exit 1 if not)
  db reset                      drop all data and schemas, re-run the migrations and the seed; a server running
                                on the data folder (found at --port) resets its own database
  migration new <name>          create <migrations-dir>/<YYYYMMDDHHMMSS>_<name>.sql (UTC) and print its path
  gen signing-key               print a new private JWK (ES256) for a signing keys file
      [--algorithm ES256|RS256] [--append]
                                --append: add it to the --signing-keys-path file as the standby key (replacing
                                the standby of that algorithm)
  keys rotate [--algorithm A]   rotate the signing keys file: the standby key signs from the next start, the
                                current one stays published for verification until tokens signed with it expire,
                                a new standby is made (restart the server to use it)
  auth delete-guests            delete the anonymous (guest) users created more than --older-than ago (default
      [--older-than 30d]        30d; also 12h, 90m, 3600s) and, by cascade, their rows; prints how many. On
                                PostgreSQL directly (safe while the server runs); a PGlite folder held by a running
                                server (found at --port) is cleaned by that server
  gen types typescript          print the database's TypeScript types (Database, Tables<…>, Enums<…>, Constants)
      [--schema S]…             schemas to describe, repeatable or comma-separated, default public
      [--db-url U]              read a live PostgreSQL database as it is; without it the migrations are applied to
                                a throwaway in-memory PGlite (no server needed, nothing is touched)
      [--local]                 accepted for the Supabase CLI's sake (the default already is local)
      [--postgrest-version V]   the __InternalSupabase marker, default 13 ('' leaves it out)

Options (environment variable in brackets; each command reads the ones it needs):
  --port N                      HTTP port, default 54321 [LOCALBASE_PORT]
  --host H                      listen address, default 127.0.0.1 [LOCALBASE_HOST]
  --memory                      in-memory database (nothing is kept) [LOCALBASE_MEMORY=1]
  --data-dir D                  PGlite data folder, default <repo>/.localbase/data [LOCALBASE_DATA_DIR]
  --database-url U              use a PostgreSQL server instead of PGlite [DATABASE_URL]
  --migrations-dir D            default <repo>/supabase/migrations [LOCALBASE_MIGRATIONS_DIR]
  --seed-file F                 default <repo>/supabase/seed.sql [LOCALBASE_SEED_FILE]
  --site-url U                  default http://127.0.0.1:3000 [LOCALBASE_SITE_URL]
  --redirect-url U              extra allowed redirect URL (repeatable) [LOCALBASE_REDIRECT_URLS, comma-separated]
  --enable-confirmations        require email confirmation on sign-up [LOCALBASE_ENABLE_CONFIRMATIONS=1]
  --disable-signup              no new users from sign-up or OTP; admin create/invite still work [LOCALBASE_DISABLE_SIGNUP=1]
  --enable-anonymous-sign-ins   guest users: POST /signup without email and phone (signInAnonymously) creates an
                                anonymous user, as the CLI's [auth] enable_anonymous_sign_ins
                                [LOCALBASE_ENABLE_ANONYMOUS_SIGN_INS=1]
  --enable-manual-linking       users may unlink identities (DELETE /user/identities/{id}) [LOCALBASE_ENABLE_MANUAL_LINKING=1]
  --enable-oauth-server         the OAuth 2.1 server's client admin API (/auth/v1/admin/oauth/clients); off by default
                                as in GoTrue: 404 feature_disabled [LOCALBASE_ENABLE_OAUTH_SERVER=1]
  --enable-phone-signup         phone sign-ups and sign-ins (password or SMS code); the SMS go to the mailbox, default
                                off as the CLI's [auth.sms] enable_signup [LOCALBASE_ENABLE_PHONE_SIGNUP=1]
  --sms-confirmations           a phone sign-up needs the SMS code before it gets a session (default: confirmed at
                                once, as the CLI's [auth.sms] enable_confirmations = false) [LOCALBASE_SMS_CONFIRMATIONS=1]
  --sms-otp-expiry SECONDS      how long an SMS code is valid, default 60 [LOCALBASE_SMS_OTP_EXPIRY]
  --sms-otp-length N            digits of an SMS code, 6 to 10, default 6 [LOCALBASE_SMS_OTP_LENGTH]
  --sms-max-frequency SECONDS   least time between two SMS codes to a user, default 5 [LOCALBASE_SMS_MAX_FREQUENCY]
  --sms-template T              the SMS text, default "Your code is {{ .Code }}" [LOCALBASE_SMS_TEMPLATE]
  --sms-test-otp LIST           fixed codes for test numbers, no SMS sent: 4152127777:123456,… [LOCALBASE_SMS_TEST_OTP]
  --jwt-secret S                the legacy HS256 secret: tokens signed with it (the anon / service_role keys)
                                still verify [LOCALBASE_JWT_SECRET]
  --signing-keys-path F         JWK set file of the access-token signing keys (ES256, RS256 or HS256; the Supabase
                                CLI's signing_keys_path), created with an ES256 key and a standby when missing;
                                default <data-dir>.signing_keys.json, with --memory a fresh set per start
                                [LOCALBASE_SIGNING_KEYS_PATH]
  --anon-key K                  [LOCALBASE_ANON_KEY]
  --service-role-key K          [LOCALBASE_SERVICE_ROLE_KEY]
  --jwt-expiry SECONDS          default 3600 [LOCALBASE_JWT_EXPIRY]
  --min-password-length N       default 6 [LOCALBASE_MIN_PASSWORD_LENGTH]
  --rate-limit-sign-in N        sign-ups per IP per window, default 30, as the CLI's sign_in_sign_ups (GoTrue's
                                OTP limit) [LOCALBASE_RATE_LIMIT_SIGN_IN]
  --rate-limit-refresh N        token grants per IP per window, password sign-ins and refreshes together, default
                                150, as the CLI's token_refresh [LOCALBASE_RATE_LIMIT_REFRESH]
  --rate-limit-verify N         default 30 [LOCALBASE_RATE_LIMIT_VERIFY]
  --rate-limit-email N          default 1000 [LOCALBASE_RATE_LIMIT_EMAIL]
  --rate-limit-sms N            SMS per IP and per phone number per hour, default 30 [LOCALBASE_RATE_LIMIT_SMS]
  --rate-limit-anonymous-users N
                                anonymous sign-ins per IP per hour (not per window), default 30
                                [LOCALBASE_RATE_LIMIT_ANONYMOUS_USERS]
  --rate-limit-window SECONDS   default 300 [LOCALBASE_RATE_LIMIT_WINDOW]
  --trusted-proxies LIST        reverse proxies / gateways whose client-IP header is believed: comma-separated IPs
                                and CIDRs, IPv4 and IPv6 (e.g. 127.0.0.1,10.0.0.0/8); default none: every TCP
                                peer is a client [LOCALBASE_TRUSTED_PROXIES]
  --client-ip-header NAME       the header those proxies put the client's address in, read from the right,
                                default X-Forwarded-For [LOCALBASE_CLIENT_IP_HEADER]
  --no-sb-forwarded-for         ignore Sb-Forwarded-For (by default honoured on requests whose apikey is the secret /
                                service_role key, as hosted Supabase's IP address forwarding) [LOCALBASE_SB_FORWARDED_FOR=0]
  --account-free-failures N     failed sign-ins / codes per account before delays start, default 5
                                [LOCALBASE_ACCOUNT_FREE_FAILURES]
  --account-max-delay SECONDS   the per-account delay after each further failure doubles from 1 s up to this,
                                default 60, 0 = no per-account delays [LOCALBASE_ACCOUNT_MAX_DELAY]
  --account-failure-window SECONDS
                                an account's failures are forgotten after this long without one, default 900
                                [LOCALBASE_ACCOUNT_FAILURE_WINDOW]
  --email-max-frequency SECONDS least time between two mails of one kind (sign-up confirmation, sign-in link or
                                password reset, email change, reauthentication) to a user, default 60 as GoTrue's
                                SMTP_MAX_FREQUENCY (the CLI's [auth.email] max_frequency), 0 = none
                                [LOCALBASE_EMAIL_MAX_FREQUENCY]
  --otp-max-attempts N          wrong email codes per recipient before its pending codes and links are deleted,
                                default 5, 0 = never [LOCALBASE_OTP_MAX_ATTEMPTS]
  --smtp-host H --smtp-port N --smtp-from A
                                also send auth emails over plain SMTP (e.g. Mailpit); the mailbox keeps a copy
                                [LOCALBASE_SMTP_HOST, LOCALBASE_SMTP_PORT (default 1025), LOCALBASE_SMTP_FROM]
  --max-rows N                  /rest/v1: most rows per response, default 1000, 0 = no cap [LOCALBASE_MAX_ROWS]
  --statement-timeout MS        /rest/v1: cancel a request's query after MS ms (500, SQLSTATE 57014), default 8000,
                                0 = none; on PostgreSQL also auth's and storage's statements (auth: 504
                                request_timeout) [LOCALBASE_STATEMENT_TIMEOUT]
  --pglite-main-thread          run PGlite on the main thread instead of a worker thread: no statement timeout, and
                                a long query stalls every request; --memory then keeps the data in WASM memory
                                instead of a throwaway temp folder [LOCALBASE_PGLITE_MAIN_THREAD=1]
  --password-hash-concurrency N
                                bcrypt computations (sign-ins, new passwords) run at once off the HTTP thread, the
                                rest wait in line; default: CPU cores - 1, between 1 and 3
                                [LOCALBASE_PASSWORD_HASH_CONCURRENCY]
  --storage-dir DIR             /storage/v1: the folder of the objects' bytes, default <data-dir>.storage (beside the
                                data folder), with --memory a throwaway folder deleted on stop (or by the next
                                --memory start, if this one was killed) [LOCALBASE_STORAGE_DIR]
  --storage-file-size-limit SIZE
                                /storage/v1: the largest object, e.g. 50MiB, 20MB or bytes; a bucket's
                                file_size_limit may only lower it; default 50MiB as the Supabase CLI
                                [LOCALBASE_STORAGE_FILE_SIZE_LIMIT]
  --image-transformation        /storage/v1/render/image: resize and convert images (width, height, resize, quality,
                                format) with sharp, as a project with the Supabase CLI's [storage.image_transformation]
                                enabled = true; off by default as in the CLI (the render routes answer 404);
                                --no-image-transformation turns it off [LOCALBASE_IMAGE_TRANSFORMATION=true|false]
  --schemas A,B                 /rest/v1: exposed schemas, the first is the default, default public [LOCALBASE_SCHEMAS]
  --quiet                       no request log lines [LOCALBASE_QUIET=1]
  -h, --help
`;

/** `localbase status | db reset | migration new | gen types`: resolved like `start`, from the same flags. */
async function runCommand(words: string[], cfg: ResolvedConfig, v: Record<string, unknown>): Promise<void> {
  const [command, sub, arg, lang] = words;
  if (command === 'status') {
    const output = (v.output as string | undefined) ?? 'pretty';
    if (output !== 'pretty' && output !== 'env' && output !== 'json') fail(`status: -o must be pretty, env or json`);
    const status = await statusOf(cfg);
    process.stdout.write(formatStatus(status, output));
    if (!status.running) {
      if (output !== 'pretty') console.error(`localbase: ${status.detail}`);
      process.exitCode = 1;
    }
    return;
  }
  if (command === 'db' && sub === 'reset') {
    const report = await resetDatabase(cfg, (m) => console.log(`[localbase] ${m}`));
    console.log(
      `Reset ${report.location}: ${report.applied.length} migration(s) applied${report.seeded ? ', seed applied' : ''}.`,
    );
    return;
  }
  if (command === 'migration' && sub === 'new') {
    if (!arg) fail('usage: localbase migration new <name>');
    const file = newMigration(cfg.migrationsDir, arg);
    console.log(`Created new migration at ${path.relative(process.cwd(), file) || file}`);
    return;
  }
  if ((command === 'gen' && sub === 'signing-key') || (command === 'keys' && sub === 'rotate')) {
    const algorithm = (v.algorithm as string | undefined) ?? undefined;
    if (algorithm !== undefined && !SIGNING_ALGS.includes(algorithm)) fail('--algorithm must be ES256 or RS256');
    const alg = algorithm as SigningAlg | undefined;
    const file = cfg.signingKeysPath;
    if (command === 'gen') {
      const key = await generateSigningKey(alg ?? 'ES256', v.append ? ['verify'] : ['sign', 'verify']);
      if (!v.append) {
        process.stdout.write(JSON.stringify(key, null, 2) + '\n');
        return;
      }
      if (!file) fail('gen signing-key --append: no signing keys file (--signing-keys-path, or a data folder)');
      const keys = await loadOrCreateKeyFile(file);
      // The new key replaces the standby of its algorithm (never used to sign, so no token needs the old one).
      const kept = keys.filter((k) => !(k.localbase_state === 'standby' && k.alg === key.alg));
      writeKeyFile(file, [...kept, { ...key, localbase_state: 'standby' }]);
      console.log(`Added standby key ${key.kid} (${key.alg}) to ${file}; restart the server to publish it.`);
      return;
    }
    if (!file) fail('keys rotate: no signing keys file (--signing-keys-path, or a data folder rather than --memory)');
    // Rotating a file made just now changes no server's keys: a missing file is a mistyped --data-dir or path.
    if (!fs.existsSync(file))
      fail(`keys rotate: no signing keys file at ${file} (a server creates it on its first start): pass the --data-dir or --signing-keys-path the server uses`);
    const r = await rotateKeys(await loadOrCreateKeyFile(file), { maxTokenAge: cfg.jwtExpiry, alg });
    writeKeyFile(file, r.keys);
    console.log(`Rotated ${file}: ${r.current.kid} (${r.current.alg}) signs from the next start` +
      (r.retired ? `; ${r.retired.kid} stays for verification until tokens signed with it expire` : '') +
      (r.dropped.length ? `; dropped expired key(s) ${r.dropped.join(', ')}` : '') + '. Restart the server.');
    return;
  }
  if (command === 'gen' && sub === 'types') {
    const language = arg ?? (v.lang as string | undefined) ?? lang;
    if (language !== 'typescript') fail(`gen types: only "typescript" is supported (got "${language ?? ''}")`);
    const schemas = ((v.schema as string[] | undefined) ?? [])
      .flatMap((s) => s.split(','))
      .map((s) => s.trim())
      .filter(Boolean);
    const opts = { schemas, postgrestVersion: v['postgrest-version'] as string | undefined };
    const dbUrl = v['db-url'] as string | undefined;
    let text: string;
    if (dbUrl) {
      const db = await openPg(dbUrl, 1);
      try {
        text = await generateTypescript(db, opts);
      } finally {
        await db.close();
      }
    } else {
      text = await generateTypescriptFromMigrations({ ...opts, migrationsDir: cfg.migrationsDir, cacheDir: cfg.cacheDir });
    }
    process.stdout.write(text);
    return;
  }
  if (command === 'auth' && sub === 'delete-guests') {
    const text = (v['older-than'] as string | undefined) ?? '30d';
    let seconds: number;
    try {
      seconds = parseAge(text);
    } catch (err) {
      fail((err as Error).message);
    }
    const r = await deleteGuests(cfg, seconds);
    console.log(`Deleted ${r.deleted} guest user(s) created more than ${text} ago from ${r.location}.`);
    return;
  }
  fail(`unknown command "${words.join(' ')}"\n${HELP_HINT}`);
}

/** After a mistyped command or option: the way to the help (the help itself, 120 lines, scrolled the mistake away). */
const HELP_HINT = 'Run `localbase --help` to see the commands and options.';

function fail(message: string): never {
  console.error(`localbase: ${message}`);
  process.exit(1);
}

/** --sms-test-otp / LOCALBASE_SMS_TEST_OTP: "phone:code" pairs, comma-separated. */
function smsTestOtp(v: string | undefined): Record<string, string> | undefined {
  if (!v) return undefined;
  try {
    return parseTestOtp(v);
  } catch (err) {
    fail(`--sms-test-otp: ${(err as Error).message}`);
  }
}

function num(name: string, v: string | undefined): number | undefined {
  if (v === undefined || v === '') return undefined;
  const n = Number(v);
  if (!Number.isFinite(n) || n < 0) fail(`${name} must be a non-negative number, got "${v}"`);
  return n;
}

/** A TCP port (0: any free one), checked before anything is opened: Node's own error came after the migrations. */
function portNumber(name: string, v: string | undefined): number | undefined {
  if (v === undefined || v === '') return undefined;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0 || n > 65535) fail(`${name} must be a whole number from 0 to 65535, got "${v}"`);
  return n;
}

function positiveInt(name: string, v: string | undefined): number | undefined {
  const n = num(name, v);
  if (n !== undefined && (!Number.isInteger(n) || n < 1)) fail(`${name} must be a whole number ≥ 1, got "${v}"`);
  return n;
}

const SWITCH_ON = new Set(['1', 'true', 'yes', 'on']);
const SWITCH_OFF = new Set(['0', 'false', 'no', 'off']);

/**
 * A yes/no environment variable, in any case: 1/true/yes/on, 0/false/no/off; unset or empty is neither. Any other
 * word stops the command with exit 1 (`ON`, `TRUE` or a typo silently meant off).
 */
function envSwitch(name: string): boolean | undefined {
  const raw = process.env[name];
  const word = raw?.trim().toLowerCase();
  if (word === undefined || word === '') return undefined;
  if (SWITCH_ON.has(word)) return true;
  if (SWITCH_OFF.has(word)) return false;
  fail(`${name} must be 1, true, yes or on (or 0, false, no, off), got "${raw}"`);
}
/** The variable switches the feature on. */
const flag = (name: string) => envSwitch(name) === true;
/** The variable switches the feature off. */
const offFlag = (name: string) => envSwitch(name) === false;

async function main(): Promise<void> {
  let parsed;
  try {
    parsed = parseArgs({
      allowPositionals: true,
      options: {
        port: { type: 'string' },
        host: { type: 'string' },
        memory: { type: 'boolean' },
        'data-dir': { type: 'string' },
        'database-url': { type: 'string' },
        'migrations-dir': { type: 'string' },
        'seed-file': { type: 'string' },
        'site-url': { type: 'string' },
        'redirect-url': { type: 'string', multiple: true },
        'enable-confirmations': { type: 'boolean' },
        'disable-signup': { type: 'boolean' },
        'enable-manual-linking': { type: 'boolean' },
        'enable-oauth-server': { type: 'boolean' },
        'enable-phone-signup': { type: 'boolean' },
        'sms-confirmations': { type: 'boolean' },
        'sms-otp-expiry': { type: 'string' },
        'sms-otp-length': { type: 'string' },
        'sms-max-frequency': { type: 'string' },
        'sms-template': { type: 'string' },
        'sms-test-otp': { type: 'string' },
        'rate-limit-sms': { type: 'string' },
        'enable-anonymous-sign-ins': { type: 'boolean' },
        'jwt-secret': { type: 'string' },
        'signing-keys-path': { type: 'string' },
        algorithm: { type: 'string' },
        append: { type: 'boolean' },
        'anon-key': { type: 'string' },
        'service-role-key': { type: 'string' },
        'jwt-expiry': { type: 'string' },
        'min-password-length': { type: 'string' },
        'rate-limit-sign-in': { type: 'string' },
        'rate-limit-refresh': { type: 'string' },
        'rate-limit-verify': { type: 'string' },
        'rate-limit-email': { type: 'string' },
        'rate-limit-anonymous-users': { type: 'string' },
        'rate-limit-window': { type: 'string' },
        'trusted-proxies': { type: 'string' },
        'client-ip-header': { type: 'string' },
        'no-sb-forwarded-for': { type: 'boolean' },
        'account-free-failures': { type: 'string' },
        'account-max-delay': { type: 'string' },
        'account-failure-window': { type: 'string' },
        'otp-max-attempts': { type: 'string' },
        'email-max-frequency': { type: 'string' },
        'smtp-host': { type: 'string' },
        'smtp-port': { type: 'string' },
        'smtp-from': { type: 'string' },
        'max-rows': { type: 'string' },
        'statement-timeout': { type: 'string' },
        'pglite-main-thread': { type: 'boolean' },
        'password-hash-concurrency': { type: 'string' },
        schemas: { type: 'string' },
        'storage-dir': { type: 'string' },
        'storage-file-size-limit': { type: 'string' },
        'image-transformation': { type: 'boolean' },
        'no-image-transformation': { type: 'boolean' },
        quiet: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
        // status, gen types, auth delete-guests
        'older-than': { type: 'string' },
        output: { type: 'string', short: 'o' },
        schema: { type: 'string', short: 's', multiple: true },
        'db-url': { type: 'string' },
        local: { type: 'boolean' },
        lang: { type: 'string' },
        'postgrest-version': { type: 'string' },
      },
    });
  } catch (err) {
    fail(`${(err as Error).message}\n${HELP_HINT}`);
  }
  const { values: v, positionals } = parsed;
  if (v.help) {
    console.log(HELP);
    return;
  }
  const command = positionals[0] ?? 'start';
  const env = process.env;
  const redirects = v['redirect-url'] ?? (env.LOCALBASE_REDIRECT_URLS ? env.LOCALBASE_REDIRECT_URLS.split(',') : undefined);
  const opts: LocalbaseOptions = {
    port: portNumber('--port', v.port ?? env.LOCALBASE_PORT),
    host: v.host ?? env.LOCALBASE_HOST,
    memory: v.memory ?? flag('LOCALBASE_MEMORY'),
    dataDir: v['data-dir'] ?? env.LOCALBASE_DATA_DIR,
    databaseUrl: v['database-url'] ?? env.DATABASE_URL,
    migrationsDir: v['migrations-dir'] ?? env.LOCALBASE_MIGRATIONS_DIR,
    seedFile: v['seed-file'] ?? env.LOCALBASE_SEED_FILE,
    siteUrl: v['site-url'] ?? env.LOCALBASE_SITE_URL,
    additionalRedirectUrls: redirects?.map((s) => s.trim()).filter(Boolean),
    enableConfirmations: v['enable-confirmations'] ?? flag('LOCALBASE_ENABLE_CONFIRMATIONS'),
    disableSignup: v['disable-signup'] ?? flag('LOCALBASE_DISABLE_SIGNUP'),
    enableManualLinking: v['enable-manual-linking'] ?? flag('LOCALBASE_ENABLE_MANUAL_LINKING'),
    enableOAuthServer: v['enable-oauth-server'] ?? flag('LOCALBASE_ENABLE_OAUTH_SERVER'),
    sms: Object.fromEntries(
      Object.entries({
        enabled: v['enable-phone-signup'] ?? flag('LOCALBASE_ENABLE_PHONE_SIGNUP'),
        autoconfirm: (v['sms-confirmations'] ?? flag('LOCALBASE_SMS_CONFIRMATIONS')) ? false : undefined,
        otpExpiry: num('--sms-otp-expiry', v['sms-otp-expiry'] ?? env.LOCALBASE_SMS_OTP_EXPIRY),
        otpLength: num('--sms-otp-length', v['sms-otp-length'] ?? env.LOCALBASE_SMS_OTP_LENGTH),
        maxFrequencySeconds: num('--sms-max-frequency', v['sms-max-frequency'] ?? env.LOCALBASE_SMS_MAX_FREQUENCY),
        template: v['sms-template'] ?? env.LOCALBASE_SMS_TEMPLATE,
        testOtp: smsTestOtp(v['sms-test-otp'] ?? env.LOCALBASE_SMS_TEST_OTP),
      }).filter(([, x]) => x !== undefined),
    ),
    enableAnonymousSignIns: v['enable-anonymous-sign-ins'] ?? flag('LOCALBASE_ENABLE_ANONYMOUS_SIGN_INS'),
    jwtSecret: v['jwt-secret'] ?? env.LOCALBASE_JWT_SECRET,
    signingKeysPath: v['signing-keys-path'] ?? env.LOCALBASE_SIGNING_KEYS_PATH,
    anonKey: v['anon-key'] ?? env.LOCALBASE_ANON_KEY,
    serviceRoleKey: v['service-role-key'] ?? env.LOCALBASE_SERVICE_ROLE_KEY,
    jwtExpiry: num('--jwt-expiry', v['jwt-expiry'] ?? env.LOCALBASE_JWT_EXPIRY),
    minPasswordLength: num('--min-password-length', v['min-password-length'] ?? env.LOCALBASE_MIN_PASSWORD_LENGTH),
    rateLimits: Object.fromEntries(
      Object.entries({
        signInSignUps: num('--rate-limit-sign-in', v['rate-limit-sign-in'] ?? env.LOCALBASE_RATE_LIMIT_SIGN_IN),
        tokenRefresh: num('--rate-limit-refresh', v['rate-limit-refresh'] ?? env.LOCALBASE_RATE_LIMIT_REFRESH),
        tokenVerifications: num('--rate-limit-verify', v['rate-limit-verify'] ?? env.LOCALBASE_RATE_LIMIT_VERIFY),
        emailSent: num('--rate-limit-email', v['rate-limit-email'] ?? env.LOCALBASE_RATE_LIMIT_EMAIL),
        smsSent: num('--rate-limit-sms', v['rate-limit-sms'] ?? env.LOCALBASE_RATE_LIMIT_SMS),
        anonymousUsers: num(
          '--rate-limit-anonymous-users',
          v['rate-limit-anonymous-users'] ?? env.LOCALBASE_RATE_LIMIT_ANONYMOUS_USERS,
        ),
        windowSeconds: num('--rate-limit-window', v['rate-limit-window'] ?? env.LOCALBASE_RATE_LIMIT_WINDOW),
      }).filter(([, x]) => x !== undefined),
    ),
    trustedProxies: (v['trusted-proxies'] ?? env.LOCALBASE_TRUSTED_PROXIES)?.split(',').map((x) => x.trim()).filter(Boolean),
    clientIpHeader: v['client-ip-header'] ?? (env.LOCALBASE_CLIENT_IP_HEADER || undefined),
    sbForwardedFor: !(v['no-sb-forwarded-for'] ?? offFlag('LOCALBASE_SB_FORWARDED_FOR')),
    accountProtection: Object.fromEntries(
      Object.entries({
        freeFailures: num('--account-free-failures', v['account-free-failures'] ?? env.LOCALBASE_ACCOUNT_FREE_FAILURES),
        maxDelaySeconds: num('--account-max-delay', v['account-max-delay'] ?? env.LOCALBASE_ACCOUNT_MAX_DELAY),
        failureWindowSeconds: num(
          '--account-failure-window',
          v['account-failure-window'] ?? env.LOCALBASE_ACCOUNT_FAILURE_WINDOW,
        ),
        otpMaxAttempts: num('--otp-max-attempts', v['otp-max-attempts'] ?? env.LOCALBASE_OTP_MAX_ATTEMPTS),
      }).filter(([, x]) => x !== undefined),
    ),
    emailMaxFrequencySeconds: num('--email-max-frequency', v['email-max-frequency'] ?? env.LOCALBASE_EMAIL_MAX_FREQUENCY),
    maxRows: num('--max-rows', v['max-rows'] ?? env.LOCALBASE_MAX_ROWS),
    statementTimeoutMs: num('--statement-timeout', v['statement-timeout'] ?? env.LOCALBASE_STATEMENT_TIMEOUT),
    pgliteWorker: !(v['pglite-main-thread'] ?? flag('LOCALBASE_PGLITE_MAIN_THREAD')),
    passwordHashConcurrency: positiveInt(
      '--password-hash-concurrency',
      v['password-hash-concurrency'] ?? env.LOCALBASE_PASSWORD_HASH_CONCURRENCY,
    ),
    restSchemas: (v.schemas ?? env.LOCALBASE_SCHEMAS)?.split(',').map((x) => x.trim()).filter(Boolean),
    storageDir: v['storage-dir'] ?? env.LOCALBASE_STORAGE_DIR,
    storageFileSizeLimit: sizeFlag(
      '--storage-file-size-limit',
      v['storage-file-size-limit'] ?? env.LOCALBASE_STORAGE_FILE_SIZE_LIMIT,
    ),
    imageTransformation: v['no-image-transformation']
      ? false
      : (v['image-transformation'] ?? flag('LOCALBASE_IMAGE_TRANSFORMATION')),
    quiet: v.quiet ?? flag('LOCALBASE_QUIET'),
  };
  const smtpHost = v['smtp-host'] ?? env.LOCALBASE_SMTP_HOST;
  if (smtpHost)
    opts.smtp = {
      host: smtpHost,
      port: portNumber('--smtp-port', v['smtp-port'] ?? env.LOCALBASE_SMTP_PORT) ?? 1025,
      from: v['smtp-from'] ?? env.LOCALBASE_SMTP_FROM ?? 'noreply@localbase.local',
    };
  if (opts.jwtSecret !== undefined && opts.jwtSecret.length < 32) fail('the JWT secret must be at least 32 characters');
  if (command !== 'start') {
    try {
      await runCommand(positionals, resolveConfig(opts), v);
    } catch (err) {
      if (err instanceof DataDirLockedError || err instanceof MigrationError) fail(err.message);
      if ((err as NodeJS.ErrnoException).code === 'EEXIST') fail(`${(err as Error).message}: the file exists already`);
      fail((err as Error).message);
    }
    return;
  }

  let lb;
  try {
    lb = await startLocalbase(opts);
  } catch (err) {
    if (err instanceof DataDirLockedError || err instanceof MigrationError) fail(err.message);
    if ((err as NodeJS.ErrnoException).code === 'EADDRINUSE')
      fail(`port ${opts.port ?? 54321} is already in use (is localbase already running?)`);
    throw err;
  }
  const t = lb.timings;
  console.log(`
localbase started (ready in ${(t.totalMs / 1000).toFixed(2)} s).

         API URL: ${lb.url}
    Realtime URL: ${lb.realtimeUrl}
     GraphQL URL: (not provided)
          DB URL: ${lb.dataLocation.startsWith('postgres') ? lb.dataLocation : '(embedded PGlite; no wire protocol)'}
     Mailbox URL: ${lb.mailboxUrl}
     Storage URL: ${lb.url}/storage/v1
  Storage folder: ${lb.storageDir}
   Data location: ${lb.dataLocation}
   Query timeout: ${lb.statementTimeout}
      JWT secret: ${lb.jwtSecret}
    Signing keys: ${lb.signingKeysPath ?? '(generated for this run: --memory)'}
        anon key: ${lb.anonKey}
service_role key: ${lb.serviceRoleKey}
`);
  const host = opts.host ?? '127.0.0.1';
  if (host !== '127.0.0.1' && host !== 'localhost' && host !== '::1')
    console.warn(
      `localbase: WARNING: listening on ${host}. The demo keys and the open /mailbox (sign-in links and codes) are ` +
        'reachable from other machines; keep localbase on 127.0.0.1 unless you know why not.',
    );
  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    console.log(`\nlocalbase: ${signal} received, stopping…`);
    const force = setTimeout(() => process.exit(1), 5000);
    force.unref();
    lb.stop().then(
      () => process.exit(0),
      (err: unknown) => {
        console.error('localbase: error while stopping:', err);
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', () => shutdown('SIGINT'));
  process.on('SIGTERM', () => shutdown('SIGTERM'));
}

/** A size such as 50MiB, 20MB, 300KB or a number of bytes (KB/MB/GB decimal, KiB/MiB/GiB binary). */
function sizeFlag(name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const m = /^(\d+(?:\.\d+)?)\s*(b|kb|mb|gb|kib|mib|gib)?$/i.exec(value.trim());
  if (!m) fail(`${name}: "${value}" is not a size (e.g. 50MiB, 20MB or a number of bytes)`);
  const unit = (m[2] ?? 'b').toLowerCase();
  const factor = { b: 1, kb: 1e3, mb: 1e6, gb: 1e9, kib: 1024, mib: 1024 ** 2, gib: 1024 ** 3 }[unit] ?? 1;
  return Math.floor(Number(m[1]) * factor);
}

main().catch((err: unknown) => {
  console.error('localbase: failed to start:', err instanceof Error ? err.message : err);
  process.exit(1);
});
