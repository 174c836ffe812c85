// Two-factor sign-in (TOTP): enrol an authenticator app at /settings/security (QR + secret, first code verified),
// then sign out and in again → /mfa; a wrong code is refused beside the field, the right one (from `otpauth`,
// as an authenticator app would compute it) lets the user in. While the session is at aal1, protected pages
// redirect to /mfa and protected tRPC procedures answer 403 FORBIDDEN. An email sign-in link (PKCE `code` or
// `token_hash`) for such a user goes straight to /mfa, keeping `next`. Removing an active factor needs aal2: a
// user who removes the authenticator the session was verified with, then another one, is asked for a code first.
// The notes on `/` are behind the second factor too: at aal1 `/` goes to /mfa on the server, and a "finish
// two-factor sign-in" answer of the API (the session dropped to aal1 in another tab) leads there from the open list
// at once, or from a refused save through a toast's "Enter a code" link, keeping the text typed.
// Also axe + screenshots of both screens.
import { createHash } from 'node:crypto';
import * as OTPAuth from 'otpauth';
import type { BrowserContext, Page } from 'playwright-core';
import { describe, expect, test } from 'vitest';
import {
  ANON_KEY,
  createAccount,
  describeViolations,
  expectCountdown,
  PASSWORD,
  seriousViolations,
  sessionCookies,
  signInViaUI,
  signUpViaUI,
  supabaseURL,
  uniqueEmail,
  waitForMail,
} from './auth-helpers.ts';
import { gotoHydrated, htmlThemeClasses, screenshotPath, sleep, useBrowser } from './browser.ts';
import { seedNotes } from './notes-helpers.ts';

const fixture = useBrowser();

function totp(secret: string): OTPAuth.TOTP {
  return new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(secret), digits: 6, period: 30, algorithm: 'SHA1' });
}

/** A code the server accepts but that was not used yet: codes are single-use, so the next time step's. */
function freshCode(secret: string, used: Set<string>): string {
  const generator = totp(secret);
  for (const offset of [0, 30_000, -30_000]) {
    const code = generator.generate({ timestamp: Date.now() + offset });
    if (!used.has(code)) {
      used.add(code);
      return code;
    }
  }
  throw new Error('no unused code in the window');
}

/** A code that is none of the valid window's codes. */
function wrongCode(secret: string): string {
  const generator = totp(secret);
  const valid = new Set([-30_000, 0, 30_000].map((offset) => generator.generate({ timestamp: Date.now() + offset })));
  for (let n = 0; ; n++) {
    const candidate = String((123456 + n * 111_111) % 1_000_000).padStart(6, '0');
    if (!valid.has(candidate)) return candidate;
  }
}

async function signOutViaMenu(page: Page): Promise<void> {
  await page.getByRole('button', { name: /^Account: / }).click();
  await page.getByRole('button', { name: 'Sign out', exact: true }).click();
  await page.waitForURL((url) => url.pathname === '/sign-in', { timeout: 20_000 });
  await page.getByRole('heading', { name: 'Sign in', level: 1 }).waitFor();
}

/** auth.me through the app's tRPC endpoint with the browser's cookies. */
async function trpcMe(context: BrowserContext): Promise<{ status: number; body: string }> {
  const response = await context.request.get('/api/trpc/auth.me');
  return { status: response.status(), body: await response.text() };
}

async function authFetch(path: string, token: string, body?: unknown): Promise<Record<string, unknown>> {
  const response = await fetch(`${supabaseURL}/auth/v1${path}`, {
    method: 'POST',
    headers: { apikey: ANON_KEY, authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body ?? {}),
  });
  const json = (await response.json()) as Record<string, unknown>;
  if (!response.ok) throw new Error(`${path}: HTTP ${response.status} ${JSON.stringify(json)}`);
  return json;
}

/**
 * Adds a verified TOTP factor to an existing account through the auth API, in a session of its own (as the user
 * would on another device); the code used goes into `used`. Returns the secret and the user's id.
 */
async function addTotpElsewhere(email: string, used = new Set<string>()): Promise<{ secret: string; userId: string }> {
  const session = await authFetch('/token?grant_type=password', ANON_KEY, { email, password: PASSWORD });
  const token = String(session.access_token);
  const factor = await authFetch('/factors', token, { factor_type: 'totp', friendly_name: 'Phone' });
  const secret = String((factor.totp as { secret: string }).secret);
  const challenge = await authFetch(`/factors/${String(factor.id)}/challenge`, token);
  await authFetch(`/factors/${String(factor.id)}/verify`, token, { challenge_id: challenge.id, code: freshCode(secret, used) });
  return { secret, userId: String((session.user as { id: string }).id) };
}

/** An account with a verified TOTP factor, set up through the auth API; the code used goes into `used`. */
async function accountWithTotp(email: string, used = new Set<string>()): Promise<string> {
  await createAccount(email);
  return (await addTotpElsewhere(email, used)).secret;
}

/** Enrols an authenticator app at /settings/security the way a user does; returns its secret. */
async function enrolViaUI(page: Page, used: Set<string>): Promise<string> {
  await page.getByRole('button', { name: 'Add authenticator app' }).click();
  const secretText = page.getByTestId('totp-secret');
  await secretText.waitFor({ timeout: 15_000 });
  const secret = (await secretText.textContent())!.replace(/\s/g, '');
  // the empty list's line is not shown above the app being added
  expect(await page.getByText('No authenticator app yet.').count()).toBe(0);
  await page.getByLabel('2. Enter the 6-digit code from the app').fill(freshCode(secret, used));
  await page.getByRole('button', { name: 'Verify and turn on' }).click();
  await page.getByTestId('toast').filter({ hasText: 'Two-factor sign-in is on' }).last().waitFor({ timeout: 15_000 });
  await secretText.waitFor({ state: 'detached' });
  return secret;
}

/** Enters a right code at /mfa and waits to land on `next`. */
async function passChallenge(page: Page, secret: string, used: Set<string>, next: string): Promise<void> {
  await page.getByRole('heading', { name: 'Two-factor sign-in', level: 1 }).waitFor();
  await page.getByLabel('Code', { exact: true }).fill(freshCode(secret, used));
  await page.getByRole('button', { name: 'Verify' }).click();
  await page.waitForURL((url) => url.pathname === next, { timeout: 20_000 });
}

/**
 * A new user, signed up in a fresh context, with two authenticator apps enrolled at /settings/security: the session
 * is at aal2, verified with "Authenticator app 2". Returns the security tab and the first app's secret.
 */
async function twoAppsSignedIn(
  label: string,
): Promise<{ context: BrowserContext; security: Page; phone: string; used: Set<string>; userId: string }> {
  const context = await fixture.newContext();
  const security = await context.newPage();
  await signUpViaUI(security, uniqueEmail(label));
  await gotoHydrated(security, '/settings/security');
  await security.getByText('Two-factor sign-in is off.').waitFor({ timeout: 15_000 });
  const used = new Set<string>();
  const phone = await enrolViaUI(security, used);
  await enrolViaUI(security, used);
  const me = await trpcMe(context);
  const userId = (JSON.parse(me.body) as { result: { data: { json: { id: string } } } }).result.data.json.id;
  return { context, security, phone, used, userId };
}

/** Removes "Authenticator app 2" at /settings/security: the session, verified with it, drops to aal1. */
async function removeApp2(security: Page): Promise<void> {
  await security.bringToFront();
  await security.getByRole('button', { name: 'Remove Authenticator app 2', exact: true }).click();
  await security.getByRole('button', { name: 'Yes, remove it' }).click();
  await security.getByTestId('toast').filter({ hasText: 'Authenticator removed' }).waitFor({ timeout: 15_000 });
}

/** A new page signed in with the password of an account with a factor, arrived at /mfa (its code form ready). */
async function signedInAtMfa(email: string): Promise<Page> {
  const page = await fixture.newPage();
  await gotoHydrated(page, '/sign-in?next=%2Fsettings%2Faccount');
  await signInViaUI(page, email);
  await page.waitForURL((url) => url.pathname === '/mfa', { timeout: 20_000 });
  await page.getByRole('button', { name: 'Verify', exact: true }).waitFor({ timeout: 15_000 });
  return page;
}

describe('two-factor sign-in (TOTP)', () => {
  test('enrol at /settings/security, then sign-in needs the code at /mfa; aal1 is refused by tRPC', async () => {
    const context = await fixture.newContext();
    const page = await context.newPage();
    const email = uniqueEmail('mfa');
    await signUpViaUI(page, email);

    // The user menu leads to the security settings.
    await page.getByRole('button', { name: /^Account: / }).click();
    await page.getByRole('link', { name: 'Security', exact: true }).click();
    await page.waitForURL((url) => url.pathname === '/settings/security');
    await page.getByRole('heading', { name: 'Security', level: 1 }).waitFor();
    await page.getByText('Two-factor sign-in is off.').waitFor();

    await page.getByRole('button', { name: 'Add authenticator app' }).click();
    const qr = page.getByRole('img', { name: /QR code to add Authenticator app/ });
    await qr.waitFor({ timeout: 15_000 });
    expect(await qr.getAttribute('src')).toMatch(/^data:image\/svg\+xml;charset=utf-8,%3Csvg/i);
    // The QR image really decodes and renders (not a broken image).
    expect(await qr.evaluate((img) => (img as HTMLImageElement).naturalWidth)).toBeGreaterThan(0);
    const secret = (await page.getByTestId('totp-secret').textContent())!.replace(/\s/g, '');
    expect(secret).toMatch(/^[A-Z2-7]{16,}$/);

    // A wrong first code is refused beside the field; the typed code stays.
    const used = new Set<string>();
    const codeField = page.getByLabel('2. Enter the 6-digit code from the app');
    const wrong = wrongCode(secret);
    await codeField.fill(wrong);
    await page.getByRole('button', { name: 'Verify and turn on' }).click();
    await page.getByText('That code is not right').waitFor({ timeout: 15_000 });
    expect(await codeField.inputValue()).toBe(wrong);
    expect(await codeField.getAttribute('aria-invalid')).toBe('true');

    await codeField.fill(freshCode(secret, used));
    await page.getByRole('button', { name: 'Verify and turn on' }).click();
    await page.getByTestId('toast').filter({ hasText: 'Two-factor sign-in is on' }).waitFor({ timeout: 15_000 });
    await page.getByText('Two-factor sign-in is on.').waitFor();
    const rows = page.getByTestId('factor-row');
    expect(await rows.count()).toBe(1);
    expect(await rows.first().textContent()).toContain('Active');
    // After verifying, this session is at aal2: protected procedures answer.
    expect((await trpcMe(context)).status).toBe(200);

    await signOutViaMenu(page);
    await gotoHydrated(page, '/sign-in?next=%2Fsettings%2Fsecurity');
    await signInViaUI(page, email);
    await page.waitForURL((url) => url.pathname === '/mfa', { timeout: 20_000 });
    expect(new URL(page.url()).searchParams.get('next')).toBe('/settings/security');
    await page.getByRole('heading', { name: 'Two-factor sign-in', level: 1 }).waitFor();

    // At aal1: a protected page sends the user back to /mfa (keeping next), a protected procedure is refused.
    const me = await trpcMe(context);
    expect(me.status).toBe(403);
    expect(me.body).toContain('FORBIDDEN');
    expect(me.body).toContain('Finish two-factor sign-in');
    const other = await context.newPage();
    await other.goto('/settings/account');
    expect(new URL(other.url()).pathname).toBe('/mfa');
    expect(new URL(other.url()).searchParams.get('next')).toBe('/settings/account');
    await other.close();

    const input = page.getByLabel('Code', { exact: true });
    expect(await input.getAttribute('inputmode')).toBe('numeric');
    expect(await input.getAttribute('autocomplete')).toBe('one-time-code');
    await input.fill(wrongCode(secret));
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.getByText('That code is not right').waitFor({ timeout: 15_000 });
    expect(await input.getAttribute('aria-invalid')).toBe('true');
    expect(new URL(page.url()).pathname).toBe('/mfa');

    await input.fill(freshCode(secret, used));
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.waitForURL((url) => url.pathname === '/settings/security', { timeout: 20_000 });
    await page.getByRole('heading', { name: 'Security', level: 1 }).waitFor();
    expect((await trpcMe(context)).status).toBe(200);

    // Removing the factor (at aal2) asks first, then turns two-factor sign-in off.
    await page.getByRole('button', { name: 'Remove Authenticator app' }).click();
    await page.getByRole('group', { name: 'Confirm removing Authenticator app' }).waitFor();
    await page.getByRole('button', { name: 'Keep it' }).click();
    expect(await page.getByTestId('factor-row').count()).toBe(1);
    await page.getByRole('button', { name: 'Remove Authenticator app' }).click();
    await page.getByRole('button', { name: 'Yes, remove it' }).click();
    await page.getByTestId('toast').filter({ hasText: 'Authenticator removed' }).waitFor({ timeout: 15_000 });
    await page.getByText('Two-factor sign-in is off.').waitFor();
    expect(await page.getByTestId('factor-row').count()).toBe(0);
  });

  test('/mfa puts the cursor in the code field, on arrival from sign-in and on a reload: the code is typed and Enter sent at once', async () => {
    const email = uniqueEmail('mfa-focus');
    const used = new Set<string>();
    const secret = await accountWithTotp(email, used);
    const page = await signedInAtMfa(email);
    const focusedName = () => page.evaluate(() => (document.activeElement as HTMLInputElement | null)?.name ?? null);
    expect(await focusedName()).toBe('code');

    await page.reload();
    await page.getByRole('button', { name: 'Verify', exact: true }).waitFor({ timeout: 15_000 });
    expect(await focusedName()).toBe('code');
    await page.keyboard.type(freshCode(secret, used));
    await page.keyboard.press('Enter');
    await page.waitForURL((url) => url.pathname === '/settings/account', { timeout: 20_000 });
  });

  test('/mfa when the apps cannot be read (connection lost): the reason and "Try again", which reads them and leads on to the code', async () => {
    const email = uniqueEmail('mfa-retry');
    const used = new Set<string>();
    const secret = await accountWithTotp(email, used);
    const page = await signedInAtMfa(email);

    const offline = /\/auth\/v1\/user(\?|$)/;
    await page.route(offline, (route) => route.abort('internetdisconnected'));
    await page.reload();
    await page.getByRole('alert').filter({ hasText: 'Could not reach the sign-in service' }).waitFor({ timeout: 15_000 });
    const again = page.getByRole('button', { name: 'Try again' });
    await again.waitFor({ timeout: 5_000 });

    await page.unroute(offline);
    await again.click();
    await page.getByRole('button', { name: 'Verify', exact: true }).waitFor({ timeout: 15_000 });
    expect(await page.getByRole('alert').filter({ hasText: 'Could not reach' }).count()).toBe(0);
    await expect.poll(() => page.evaluate(() => (document.activeElement as HTMLInputElement | null)?.name ?? null)).toBe('code');
    await page.keyboard.type(freshCode(secret, used));
    await page.keyboard.press('Enter');
    await page.waitForURL((url) => url.pathname === '/settings/account', { timeout: 20_000 });
  });

  test('/mfa after too many wrong codes: the hold says how long, counts down with "Verify" waiting, then the right code goes through', async () => {
    const email = uniqueEmail('mfa-held');
    const used = new Set<string>();
    const secret = await accountWithTotp(email, used);
    const page = await signedInAtMfa(email);
    const HELD = /^Too many failed attempts for this account\. Wait (\d+) seconds?, then try again\.$/;
    const held = page.getByRole('alert').filter({ hasText: HELD });
    // localbase holds the account 1 s, 2 s, 4 s … after 5 free wrong codes: until a hold of 2 s or more is shown.
    for (let attempt = 1; attempt <= 15; attempt++) {
      await page.getByLabel('Code', { exact: true }).fill(wrongCode(secret));
      const answered = page.waitForResponse((response) => /\/auth\/v1\/factors\/[^/]+\/verify/.test(response.url()));
      await page.getByRole('button', { name: 'Verify', exact: true }).click();
      await answered;
      await page.getByText(/That code is not right|Too many failed attempts/).first().waitFor({ timeout: 15_000 });
      if (!(await held.isVisible())) continue;
      if (Number(HELD.exec((await held.textContent()) ?? '')?.[1]) >= 2) break;
      await held.waitFor({ state: 'detached', timeout: 5_000 }); // a hold of 1 s: over at once
    }
    await expectCountdown(page, HELD, 'Verify');
    await page.getByLabel('Code', { exact: true }).fill(freshCode(secret, used));
    await page.getByRole('button', { name: 'Verify', exact: true }).click();
    await page.waitForURL((url) => url.pathname === '/settings/account', { timeout: 20_000 });
  });

  test('/settings/security when the apps cannot be read (connection lost): the reason and "Try again", which reads them and leads on to "Add authenticator app"', async () => {
    const page = await fixture.newPage();
    await signUpViaUI(page, uniqueEmail('security-retry'));
    const offline = /\/auth\/v1\/user(\?|$)/;
    await page.route(offline, (route) => route.abort('internetdisconnected'));
    await gotoHydrated(page, '/settings/security');
    await page.getByRole('alert').filter({ hasText: 'Could not reach the sign-in service' }).waitFor({ timeout: 15_000 });
    const again = page.getByRole('button', { name: 'Try again' });
    await again.waitFor({ timeout: 5_000 });
    await page.unroute(offline);
    await again.focus();
    await page.keyboard.press('Enter');
    await page.getByText('Two-factor sign-in is off.').waitFor({ timeout: 15_000 });
    expect(await page.getByRole('alert').filter({ hasText: 'Could not reach' }).count()).toBe(0);
    const add = page.getByRole('button', { name: 'Add authenticator app' });
    await expect.poll(() => add.evaluate((el) => el === document.activeElement)).toBe(true);
    expect(await add.getAttribute('aria-disabled')).toBeNull();
  });

  test('keyboard at /settings/security: focus follows Add → the enrolment panel → back to Add (Cancel, verified), and Remove → Yes/Keep it → back', async () => {
    const page = await fixture.newPage();
    await signUpViaUI(page, uniqueEmail('mfa-keys'));
    await gotoHydrated(page, '/settings/security');
    await page.getByText('Two-factor sign-in is off.').waitFor({ timeout: 15_000 });
    const focused = () => page.evaluate(() => {
      const el = document.activeElement;
      return el === null || el === document.body ? 'body' : (el.getAttribute('aria-label') ?? el.textContent ?? '').trim();
    });
    const add = page.getByRole('button', { name: 'Add authenticator app' });
    const press = async (name: string) => {
      await page.getByRole('button', { name, exact: true }).focus();
      await page.keyboard.press('Enter');
    };

    await press('Add authenticator app');
    await page.getByTestId('totp-secret').waitFor({ timeout: 15_000 });
    await expect.poll(focused).toBe('Add an authenticator app');
    await press('Cancel');
    await add.waitFor();
    await expect.poll(focused).toBe('Add authenticator app');

    await press('Add authenticator app');
    const secretText = page.getByTestId('totp-secret');
    await secretText.waitFor({ timeout: 15_000 });
    const secret = (await secretText.textContent())!.replace(/\s/g, '');
    await page.getByLabel('2. Enter the 6-digit code from the app').fill(freshCode(secret, new Set()));
    await page.keyboard.press('Enter');
    await page.getByText('Two-factor sign-in is on.').waitFor({ timeout: 15_000 });
    await expect.poll(focused).toBe('Add authenticator app');

    await press('Remove Authenticator app');
    await expect.poll(focused).toBe('Yes, remove it');
    await page.keyboard.press('Tab');
    expect(await focused()).toBe('Keep it');
    await page.keyboard.press('Enter');
    await expect.poll(focused).toBe('Remove Authenticator app');
    await page.keyboard.press('Enter');
    await expect.poll(focused).toBe('Yes, remove it');
    await page.keyboard.press('Enter');
    await page.getByText('Two-factor sign-in is off.').waitFor({ timeout: 15_000 });
    await expect.poll(focused).toBe('Add authenticator app');
  });

  test('/settings/security says in words what the auth client says in its own: an app removed in another tab, a proxy\'s HTML page, a session signed out from another device', async () => {
    const context = await fixture.newContext();
    const page = await context.newPage();
    const email = uniqueEmail('security-words');
    await signUpViaUI(page, email);
    await gotoHydrated(page, '/settings/security');
    await page.getByText('Two-factor sign-in is off.').waitFor({ timeout: 15_000 });
    await enrolViaUI(page, new Set());
    // another tab removes the app; this one still lists it, and its Remove finds it gone: what the user wanted
    const other = await context.newPage();
    await gotoHydrated(other, '/settings/security');
    await other.getByRole('button', { name: 'Remove Authenticator app', exact: true }).click();
    await other.getByRole('button', { name: 'Yes, remove it' }).click();
    await other.getByText('Two-factor sign-in is off.').waitFor({ timeout: 15_000 });
    await other.close();
    await page.bringToFront();
    await page.getByRole('button', { name: 'Remove Authenticator app', exact: true }).click();
    await page.getByRole('button', { name: 'Yes, remove it' }).click();
    await page.getByTestId('toast').filter({ hasText: 'had already been removed' }).waitFor({ timeout: 15_000 });
    await page.getByText('Two-factor sign-in is off.').waitFor({ timeout: 15_000 });
    expect(await page.getByText('Factor not found').count()).toBe(0);
    expect(await page.getByText('Something went wrong').count()).toBe(0);

    // a proxy's HTML page where the auth server's JSON should be
    const factors = '**/auth/v1/factors';
    await page.route(factors, (route) => route.fulfill({ status: 403, contentType: 'text/html', body: '<html><body><h1>403 Forbidden</h1></body></html>' }));
    await page.getByRole('button', { name: 'Add authenticator app' }).click();
    await page.getByRole('alert').filter({ hasText: 'The sign-in service had a problem' }).first().waitFor({ timeout: 15_000 });
    expect(await page.getByText(/Unexpected token|not valid JSON/).count()).toBe(0);
    await page.unroute(factors);

    // "Sign out other devices" from another browser ends this session on the server
    const elsewhere = await fixture.newContext();
    const phone = await elsewhere.newPage();
    await gotoHydrated(phone, '/sign-in?next=%2Fsettings%2Fsecurity');
    await signInViaUI(phone, email);
    await phone.waitForURL((url) => url.pathname === '/settings/security', { timeout: 20_000 });
    await phone.getByRole('button', { name: 'Sign out other devices' }).click();
    await phone.getByRole('button', { name: 'Yes, sign them out' }).click();
    await phone.getByTestId('toast').filter({ hasText: 'Other devices signed out' }).waitFor({ timeout: 15_000 });
    await page.bringToFront();
    await page.getByRole('button', { name: 'Add authenticator app' }).click();
    await page.getByRole('alert').filter({ hasText: 'Your session has ended. Sign in again.' }).first().waitFor({ timeout: 15_000 });
    expect(await page.getByText(/Auth session missing|Something went wrong/).count()).toBe(0);
  });

  test('/mfa offers sign-out; a signed-out visit goes to /sign-in', async () => {
    const email = uniqueEmail('mfa-out');
    await accountWithTotp(email);
    const page = await fixture.newPage();
    await gotoHydrated(page, '/sign-in');
    await signInViaUI(page, email);
    await page.waitForURL((url) => url.pathname === '/mfa', { timeout: 20_000 });
    await page.getByRole('button', { name: 'Sign out', exact: true }).click();
    await page.waitForURL((url) => url.pathname === '/sign-in', { timeout: 20_000 });
    await page.goto('/mfa');
    expect(new URL(page.url()).pathname).toBe('/sign-in');
  });

  test('an email sign-in link (PKCE code) for a user with an authenticator app opens /mfa at once, keeping next', async () => {
    const email = uniqueEmail('mfa-link');
    const used = new Set<string>();
    const secret = await accountWithTotp(email, used);
    const context = await fixture.newContext();
    const page = await context.newPage();
    await gotoHydrated(page, '/sign-in?next=%2Fsettings%2Faccount');
    await page.getByLabel('Email').fill(email);
    await page.getByRole('button', { name: 'Email me a sign-in link' }).click();
    await page.getByRole('status').filter({ hasText: 'a sign-in link is on its way' }).waitFor({ timeout: 15_000 });
    const mail = await waitForMail(email, 'magiclink');

    // The link goes through /auth/v1/verify to /auth/confirm?code=…, whose redirect is to /mfa?next=…, not to next.
    const confirmRedirects: Array<{ status: number; hasCode: boolean; location: string | undefined }> = [];
    page.on('response', (response) => {
      const url = new URL(response.url());
      if (url.pathname !== '/auth/confirm') return;
      confirmRedirects.push({ status: response.status(), hasCode: url.searchParams.has('code'), location: response.headers().location });
    });
    await page.goto(mail.links[0] as string);
    await page.waitForURL((url) => url.pathname === '/mfa', { timeout: 20_000 });
    expect(confirmRedirects).toEqual([{ status: 307, hasCode: true, location: '/mfa?next=%2Fsettings%2Faccount' }]);
    expect(new URL(page.url()).searchParams.get('next')).toBe('/settings/account');
    // The link signed the user in (at aal1): the session cookie is there, protected procedures still refuse.
    expect((await sessionCookies(context)).length).toBeGreaterThan(0);
    expect((await trpcMe(context)).status).toBe(403);

    await passChallenge(page, secret, used, '/settings/account');
    await page.getByText(`You sign in with ${email}`).waitFor({ timeout: 15_000 });
    expect((await trpcMe(context)).status).toBe(200);
  });

  test('a token_hash sign-in link for a user with an authenticator app opens /mfa at once, keeping next', async () => {
    const email = uniqueEmail('mfa-hash');
    const used = new Set<string>();
    const secret = await accountWithTotp(email, used);
    // A magic link requested through the auth API (no PKCE); an email template with {{ .TokenHash }} links to
    // /auth/confirm?token_hash=…&type=magiclink. GoTrue's token hash is hex(sha224(email + code)).
    const response = await fetch(`${supabaseURL}/auth/v1/otp`, {
      method: 'POST',
      headers: { apikey: ANON_KEY, 'content-type': 'application/json' },
      body: JSON.stringify({ email, create_user: false }),
    });
    expect(response.status).toBe(200);
    const mail = await waitForMail(email, 'magiclink');
    expect(mail.token).toMatch(/^\d{6}$/);
    const tokenHash = createHash('sha224').update(`${email}${mail.token as string}`).digest('hex');

    const context = await fixture.newContext();
    const page = await context.newPage();
    const confirm = await page.goto(`/auth/confirm?token_hash=${tokenHash}&type=magiclink&next=%2Fsettings%2Fsecurity`);
    expect(confirm?.request().redirectedFrom()?.url()).toContain('/auth/confirm?token_hash=');
    expect(new URL(page.url()).pathname).toBe('/mfa');
    expect(new URL(page.url()).searchParams.get('next')).toBe('/settings/security');
    await passChallenge(page, secret, used, '/settings/security');
    await page.getByRole('heading', { name: 'Security', level: 1 }).waitFor();
    await page.getByText('Two-factor sign-in is on.').waitFor({ timeout: 15_000 });

    // Without an authenticator app the same kind of link goes straight to next (no detour through /mfa).
    const plain = uniqueEmail('hash-plain');
    await createAccount(plain);
    await fetch(`${supabaseURL}/auth/v1/otp`, {
      method: 'POST',
      headers: { apikey: ANON_KEY, 'content-type': 'application/json' },
      body: JSON.stringify({ email: plain, create_user: false }),
    });
    const plainMail = await waitForMail(plain, 'magiclink');
    const plainHash = createHash('sha224').update(`${plain}${plainMail.token as string}`).digest('hex');
    const plainPage = await fixture.newPage();
    await plainPage.goto(`/auth/confirm?token_hash=${plainHash}&type=magiclink&next=%2Fsettings%2Faccount`);
    expect(new URL(plainPage.url()).pathname).toBe('/settings/account');
    await plainPage.getByText(`You sign in with ${plain}`).waitFor({ timeout: 15_000 });
  });

  test('a password-reset link for a user with an authenticator app asks for the code before the new password', async () => {
    const email = uniqueEmail('mfa-reset');
    const used = new Set<string>();
    const secret = await accountWithTotp(email, used);
    const page = await fixture.newPage();
    await gotoHydrated(page, '/forgot-password');
    await page.getByLabel('Email').fill(email);
    await page.getByRole('button', { name: 'Send reset link' }).click();
    await page.getByRole('status').filter({ hasText: 'a reset link is on its way' }).waitFor({ timeout: 15_000 });
    const mail = await waitForMail(email, 'recovery');
    await page.goto(mail.links[0] as string);
    await page.waitForURL((url) => url.pathname === '/mfa', { timeout: 20_000 });
    expect(new URL(page.url()).searchParams.get('next')).toBe('/reset-password');
    await passChallenge(page, secret, used, '/reset-password');
    await page.getByRole('heading', { name: 'Choose a new password' }).waitFor();
    await page.getByLabel('New password', { exact: true }).fill('new-password-456');
    await page.getByLabel('Repeat the new password').fill('new-password-456');
    await page.getByRole('button', { name: 'Save new password' }).click();
    await page.waitForURL((url) => url.pathname === '/', { timeout: 20_000 });
    await page.getByTestId('toast').filter({ hasText: 'Password changed' }).waitFor();
  });

  test('with two authenticator apps, /mfa asks which one and accepts the code of the chosen app', async () => {
    const context = await fixture.newContext();
    const page = await context.newPage();
    const email = uniqueEmail('mfa-pick');
    await signUpViaUI(page, email);
    await gotoHydrated(page, '/settings/security');
    await page.getByText('Two-factor sign-in is off.').waitFor({ timeout: 15_000 });
    const used = new Set<string>();
    const first = await enrolViaUI(page, used);
    const second = await enrolViaUI(page, used);
    await signOutViaMenu(page);

    await gotoHydrated(page, '/sign-in');
    await signInViaUI(page, email);
    await page.waitForURL((url) => url.pathname === '/mfa', { timeout: 20_000 });
    const choice = page.getByRole('group', { name: 'Which app?' });
    await choice.waitFor({ timeout: 15_000 });
    expect(await choice.getByRole('radio').count()).toBe(2);
    expect(await choice.getByRole('radio', { name: 'Authenticator app', exact: true }).isChecked()).toBe(true);

    // The second app's code is wrong for the first app…
    await page.getByLabel('Code', { exact: true }).fill(totp(second).generate());
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.getByText('That code is not right').waitFor({ timeout: 15_000 });
    expect(new URL(page.url()).pathname).toBe('/mfa');

    // …and right once that app is chosen.
    await choice.getByRole('radio', { name: 'Authenticator app 2' }).check();
    await page.getByLabel('Code', { exact: true }).fill(freshCode(second, used));
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.waitForURL((url) => url.pathname === '/', { timeout: 20_000 });
    expect((await trpcMe(context)).status).toBe(200);
    expect(first).not.toBe(second);
  });

  test('removing an active authenticator needs aal2: after removing the one this session was verified with, the other asks for a code first', async () => {
    const context = await fixture.newContext();
    const page = await context.newPage();
    await signUpViaUI(page, uniqueEmail('mfa-two'));
    await gotoHydrated(page, '/settings/security');
    await page.getByText('Two-factor sign-in is off.').waitFor({ timeout: 15_000 });
    const used = new Set<string>();
    const phone = await enrolViaUI(page, used); // "Authenticator app"
    await enrolViaUI(page, used); // "Authenticator app 2" — this session is now verified with it
    const rows = page.getByTestId('factor-row');
    await expect.poll(() => rows.count(), { timeout: 15_000 }).toBe(2);

    // Removing app 2 works (the session is at aal2) and takes the session back to aal1: the factor it was
    // verified with is gone, while "Authenticator app" still protects the account.
    await page.getByRole('button', { name: 'Remove Authenticator app 2', exact: true }).click();
    await page.getByRole('button', { name: 'Yes, remove it' }).click();
    await page.getByTestId('toast').filter({ hasText: 'Authenticator removed' }).waitFor({ timeout: 15_000 });
    await expect.poll(() => rows.count(), { timeout: 15_000 }).toBe(1);
    expect((await trpcMe(context)).status, 'the refreshed session is at aal1').toBe(403);

    // Removing the other one now is refused by the auth server (insufficient_aal); the row says why, in words,
    // and offers the way on. Nothing was removed.
    await page.getByRole('button', { name: 'Remove Authenticator app', exact: true }).click();
    await page.getByRole('button', { name: 'Yes, remove it' }).click();
    const message = rows.getByRole('alert').filter({ hasText: 'Removing an active authenticator needs a code from one of your authenticator apps first.' });
    await message.waitFor({ timeout: 15_000 });
    expect(await message.textContent()).not.toMatch(/AAL2|insufficient_aal/i);
    await page.getByTestId('toast').filter({ hasText: 'Could not remove it' }).waitFor();
    expect(await rows.count()).toBe(1);
    expect(await page.getByText('Two-factor sign-in is on.').count()).toBe(1);

    // "Enter a code" → /mfa → the code → back here at aal2, where the removal goes through.
    await message.getByRole('link', { name: 'Enter a code' }).click();
    await page.waitForURL((url) => url.pathname === '/mfa', { timeout: 20_000 });
    expect(new URL(page.url()).searchParams.get('next')).toBe('/settings/security');
    await passChallenge(page, phone, used, '/settings/security');
    await page.getByRole('button', { name: 'Remove Authenticator app', exact: true }).click();
    await page.getByRole('button', { name: 'Yes, remove it' }).click();
    await page.getByTestId('toast').filter({ hasText: 'Authenticator removed' }).waitFor({ timeout: 15_000 });
    await page.getByText('Two-factor sign-in is off.').waitFor({ timeout: 15_000 });
    expect(await rows.count()).toBe(0);
    expect((await trpcMe(context)).status).toBe(200);
  });

  test('at aal1, / goes to /mfa on the server (no notes skeleton, no "New"); after the code it shows the notes', async () => {
    const email = uniqueEmail('mfa-home');
    await createAccount(email);
    const used = new Set<string>();
    const { secret, userId } = await addTotpElsewhere(email, used);
    await seedNotes(userId, [{ title: 'Behind the second factor' }]);
    const context = await fixture.newContext();
    const page = await context.newPage();
    await gotoHydrated(page, '/sign-in');
    await signInViaUI(page, email);
    await page.waitForURL((url) => url.pathname === '/mfa', { timeout: 20_000 });
    await page.getByRole('heading', { name: 'Two-factor sign-in', level: 1 }).waitFor();

    // The server sends the aal1 session from / to /mfa, as it does from every protected page.
    const answer = await context.request.get('/', { maxRedirects: 0 });
    expect(answer.status()).toBe(307);
    expect(answer.headers().location).toMatch(/^\/mfa(\?next=%2F)?$/);
    await gotoHydrated(page, '/');
    expect(new URL(page.url()).pathname).toBe('/mfa');
    expect(await page.getByTestId('notes-skeleton').count()).toBe(0);
    // Nothing in the header offers what this session cannot do yet: no "New", and n opens nothing.
    expect(await page.getByRole('banner').getByRole('button', { name: 'New', exact: true }).count()).toBe(0);
    await page.getByRole('heading', { name: 'Two-factor sign-in', level: 1 }).click();
    await page.keyboard.press('n');
    await sleep(500);
    expect(await page.getByRole('dialog', { name: 'New note' }).count()).toBe(0);

    await passChallenge(page, secret, used, '/');
    await page.getByRole('link', { name: /Behind the second factor/ }).waitFor({ timeout: 15_000 });
    await page.getByRole('banner').getByRole('button', { name: 'New', exact: true }).waitFor();
  });

  test('removing (in another tab) the authenticator this session was verified with: the open notes list leads to /mfa and back', async () => {
    const { context, security, phone, used, userId } = await twoAppsSignedIn('mfa-list');
    await seedNotes(userId, [{ title: 'Shopping list' }, { title: 'Holiday plans' }]);
    const list = await context.newPage();
    await gotoHydrated(list, '/?q=Shop');
    await list.getByRole('link', { name: /Shopping list/ }).waitFor({ timeout: 15_000 });

    // The session all tabs share drops to aal1 while another app still protects the account. The list tab hears of
    // it, asks for its notes again and is refused: no retries of a refusal that cannot change, no "Try again" that
    // cannot succeed, but /mfa, keeping where the user was.
    await removeApp2(security);
    const removedAt = Date.now();
    await list.waitForURL((url) => url.pathname === '/mfa', { timeout: 10_000 });
    expect(Date.now() - removedAt, 'no 7 s of retries first').toBeLessThan(5000);
    expect(new URL(list.url()).searchParams.get('next')).toBe('/?q=Shop');
    expect(await list.getByRole('link', { name: /Shopping list/ }).count()).toBe(0);
    expect(await list.getByRole('button', { name: 'Try again' }).count()).toBe(0);

    await passChallenge(list, phone, used, '/');
    expect(new URL(list.url()).searchParams.get('q')).toBe('Shop');
    await list.getByRole('link', { name: /Shopping list/ }).waitFor({ timeout: 15_000 });
    expect(await list.getByRole('link', { name: /Holiday plans/ }).count()).toBe(0);
  });

  test('…and on an open note, a refused save says why, keeps the text, and "Enter a code" (asking first) leads to /mfa and back', async () => {
    const { context, security, phone, used, userId } = await twoAppsSignedIn('mfa-note');
    const [note] = await seedNotes(userId, [{ title: 'Shopping list', body: 'Milk' }]);
    const notePage = await context.newPage();
    await gotoHydrated(notePage, `/notes/${note!.id}`);
    const body = notePage.getByLabel('Note', { exact: true });
    await body.fill('Milk, eggs, bread');
    const newButton = notePage.getByRole('banner').getByRole('button', { name: 'New', exact: true });
    await newButton.waitFor();

    await removeApp2(security);
    // Nothing offers what the session cannot do any more.
    await expect.poll(() => newButton.count(), { timeout: 10_000 }).toBe(0);

    await notePage.bringToFront();
    await notePage.getByRole('button', { name: 'Save changes' }).click();
    const refused = notePage.getByTestId('toast').filter({ hasText: 'Your changes were not saved' });
    await refused.waitFor({ timeout: 15_000 });
    expect(await refused.innerText()).toMatch(/two-factor sign-in/i);
    expect(await body.inputValue(), 'every character typed is still there').toBe('Milk, eggs, bread');

    // "Enter a code" is a link away from unsaved text: the page asks first; "Cancel" keeps the user here.
    const asked: string[] = [];
    notePage.once('dialog', (dialog) => {
      asked.push(dialog.message());
      void dialog.dismiss();
    });
    const enterCode = refused.getByRole('link', { name: 'Enter a code' });
    await enterCode.click();
    await expect.poll(() => asked.length).toBe(1);
    expect(asked[0]).toMatch(/not saved/);
    expect(new URL(notePage.url()).pathname).toBe(`/notes/${note!.id}`);
    expect(await body.inputValue()).toBe('Milk, eggs, bread');

    notePage.once('dialog', (dialog) => void dialog.accept());
    await enterCode.click();
    await notePage.waitForURL((url) => url.pathname === '/mfa', { timeout: 20_000 });
    expect(new URL(notePage.url()).searchParams.get('next')).toBe(`/notes/${note!.id}`);
    await passChallenge(notePage, phone, used, `/notes/${note!.id}`);
    await notePage.getByRole('button', { name: 'Pin', exact: true }).click();
    await notePage.getByTestId('toast').filter({ hasText: /^Pinned/ }).waitFor({ timeout: 15_000 });
  });

  for (const scheme of ['light', 'dark'] as const) {
    test(`axe and screenshots of /settings/security and /mfa (${scheme})`, async () => {
      for (const width of [1280, 390]) {
        const context = await fixture.newContext({ colorScheme: scheme, viewport: { width, height: 900 } });
        const page = await context.newPage();
        await signUpViaUI(page, uniqueEmail(`mfa-a11y-${scheme}`));
        await gotoHydrated(page, '/settings/security');
        await page.getByRole('button', { name: 'Add authenticator app' }).click();
        await page.getByTestId('totp-secret').waitFor({ timeout: 15_000 });
        await sleep(300);
        expect(await htmlThemeClasses(page)).toEqual([`t_${scheme}`]);
        const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
        expect(overflow, `horizontal scroll at ${width} px`).toBeLessThanOrEqual(0);
        await page.screenshot({ path: screenshotPath(`mfa-security-enroll-${scheme}-${width}`), fullPage: true });
        let violations = await seriousViolations(page);
        expect(violations.map((v) => v.id), `security ${width} px: ${describeViolations(violations)}`).toEqual([]);

        const mfaContext = await fixture.newContext({ colorScheme: scheme, viewport: { width, height: 900 } });
        const mfaPage = await mfaContext.newPage();
        const email = uniqueEmail(`mfa-a11y-${scheme}`);
        const secret = await accountWithTotp(email);
        await gotoHydrated(mfaPage, '/sign-in');
        await signInViaUI(mfaPage, email);
        await mfaPage.waitForURL((url) => url.pathname === '/mfa', { timeout: 20_000 });
        await mfaPage.getByLabel('Code', { exact: true }).fill(wrongCode(secret));
        await mfaPage.getByRole('button', { name: 'Verify' }).click();
        await mfaPage.getByText('That code is not right').waitFor({ timeout: 15_000 });
        await sleep(300);
        await mfaPage.screenshot({ path: screenshotPath(`mfa-challenge-error-${scheme}-${width}`), fullPage: true });
        violations = await seriousViolations(mfaPage);
        expect(violations.map((v) => v.id), `mfa ${width} px: ${describeViolations(violations)}`).toEqual([]);
        await context.close();
        await mfaContext.close();
      }
    });
  }
});
