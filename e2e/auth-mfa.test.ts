// Two-factor sign-in (TOTP): enrol an authenticator app at /settings/security (QR + secret, first code verified),
// then sign out and in again → /mfa; a wrong code is refused beside the field, the right one (from `otpauth`,
// as an authenticator app would compute it) lets the user in. While the session is at aal1, protected pages
// redirect to /mfa and protected tRPC procedures answer 403 FORBIDDEN. Also axe + screenshots of both screens.
import * as OTPAuth from 'otpauth';
import type { BrowserContext, Page } from 'playwright-core';
import { describe, expect, test } from 'vitest';
import {
  ANON_KEY,
  createAccount,
  describeViolations,
  PASSWORD,
  seriousViolations,
  signInViaUI,
  signUpViaUI,
  supabaseURL,
  uniqueEmail,
} from './auth-helpers.ts';
import { gotoHydrated, htmlThemeClasses, screenshotPath, sleep, useBrowser } from './browser.ts';

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
  await page.getByRole('button', { name: 'Sign out' }).click();
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

/** An account with a verified TOTP factor, set up through the auth API (for the screens' a11y checks). */
async function accountWithTotp(email: string): Promise<string> {
  await createAccount(email);
  const session = await authFetch('/token?grant_type=password', ANON_KEY, { email, password: PASSWORD });
  const token = String(session.access_token);
  const factor = await authFetch('/factors', token, { factor_type: 'totp', friendly_name: 'Phone' });
  const secret = String((factor.totp as { secret: string }).secret);
  const challenge = await authFetch(`/factors/${String(factor.id)}/challenge`, token);
  await authFetch(`/factors/${String(factor.id)}/verify`, token, { challenge_id: challenge.id, code: totp(secret).generate() });
  return secret;
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

  test('/mfa offers sign-out; a signed-out visit goes to /sign-in', async () => {
    const email = uniqueEmail('mfa-out');
    await accountWithTotp(email);
    const page = await fixture.newPage();
    await gotoHydrated(page, '/sign-in');
    await signInViaUI(page, email);
    await page.waitForURL((url) => url.pathname === '/mfa', { timeout: 20_000 });
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL((url) => url.pathname === '/sign-in', { timeout: 20_000 });
    await page.goto('/mfa');
    expect(new URL(page.url()).pathname).toBe('/sign-in');
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
