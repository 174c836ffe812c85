// Helpers for the auth browser tests: unique accounts, the localbase mailbox, sign-up/sign-in through the UI,
// and the session cookie as the browser holds it.
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { BrowserContext, Cookie, Page } from 'playwright-core';
import { expect, inject } from 'vitest';
import { gotoHydrated, ROOT } from './browser.ts';

export const supabaseURL: string = inject('supabaseURL') ?? 'http://127.0.0.1:54321';
export const PASSWORD = 'correct-horse-battery-staple';

/** A fresh address per call, so tests never share an account. */
export function uniqueEmail(label: string): string {
  return `${label}-${randomUUID().slice(0, 8)}@example.test`;
}

export interface MailMessage {
  id: string;
  to: string;
  subject: string;
  type: string;
  links: string[];
  token: string | null;
  createdAt: string;
}

/** Waits for the newest mail of `type` to `to` in localbase's mailbox (GET /mailbox/api/messages?to=…). */
export async function waitForMail(to: string, type: string, timeoutMs = 15_000): Promise<MailMessage> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const response = await fetch(`${supabaseURL}/mailbox/api/messages?to=${encodeURIComponent(to)}`);
    if (response.ok) {
      const messages = (await response.json()) as MailMessage[];
      const found = messages.find((m) => m.type === type);
      if (found) return found;
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`no "${type}" mail to ${to} within ${timeoutMs} ms`);
}

export async function signUpViaUI(page: Page, email: string, password = PASSWORD, displayName?: string): Promise<void> {
  await gotoHydrated(page, '/sign-up');
  if (displayName) await page.getByLabel('Name (optional)').fill(displayName);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Create account' }).click();
  await page.getByRole('button', { name: /^Account: / }).waitFor({ timeout: 20_000 });
}

export async function signInViaUI(page: Page, email: string, password = PASSWORD): Promise<void> {
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
}

/**
 * A wait the auth server asked for, as the auth forms show it: `wait` (its first group the seconds) in an alert,
 * counting down while `button` is aria-disabled and keeps the focus a click gave it (Enter and Space then send
 * nothing to the auth server); at zero the message goes and the button may be pressed again. Returns the first count.
 */
export async function expectCountdown(page: Page, wait: RegExp, button: string): Promise<number> {
  const message = page.getByRole('alert').filter({ hasText: wait });
  await message.waitFor({ timeout: 15_000 });
  const seconds = async () => Number(wait.exec((await message.textContent().catch(() => '')) ?? '')?.[1] ?? 0);
  const first = await seconds();
  expect(first).toBeGreaterThanOrEqual(2);
  const waiting = page.getByRole('button', { name: button, exact: true });
  expect(await waiting.getAttribute('aria-disabled')).toBe('true');
  expect(await waiting.evaluate((el) => el === document.activeElement), 'focus stays on the waiting button').toBe(true);
  const sent: string[] = [];
  const onRequest = (request: { url: () => string }) => void (request.url().includes('/auth/v1/') && sent.push(request.url()));
  page.on('request', onRequest);
  await page.keyboard.press('Enter');
  await page.keyboard.press('Space');
  await new Promise((resolve) => setTimeout(resolve, 300));
  page.off('request', onRequest);
  expect(sent).toEqual([]);
  await expect.poll(seconds, { timeout: 3_000, interval: 100 }).toBeLessThan(first);
  expect(await waiting.getAttribute('aria-disabled')).toBe('true');
  await message.waitFor({ state: 'detached', timeout: 6_000 });
  expect(await waiting.getAttribute('aria-disabled')).toBeNull();
  return first;
}

/** Creates an account through the auth API (no UI), for tests about other things. */
export async function createAccount(email: string, password = PASSWORD, metadata?: Record<string, unknown>): Promise<void> {
  const response = await fetch(`${supabaseURL}/auth/v1/signup`, {
    method: 'POST',
    headers: { apikey: ANON_KEY, 'content-type': 'application/json' },
    body: JSON.stringify(metadata ? { email, password, data: metadata } : { email, password }),
  });
  if (!response.ok) throw new Error(`sign-up of ${email} failed: HTTP ${response.status} ${await response.text()}`);
}

/** The `sb-<ref>-auth-token` cookies (one, or chunks `.0`, `.1`, …) the browser holds. */
export async function sessionCookies(context: BrowserContext): Promise<Cookie[]> {
  return (await context.cookies()).filter((c) => /^sb-[a-z0-9-]+-auth-token(\.\d+)?$/.test(c.name));
}

export const ANON_KEY =
  'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJpc3MiOiJzdXBhYmFzZS1kZW1vIiwicm9sZSI6ImFub24iLCJleHAiOjE5ODM4MTI5OTZ9.CRXP1A7WOeoJeXxjNni43kdQwgnWNReilDMblYTn_I0';

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: Array<{ target: unknown[]; failureSummary?: string }>;
}

let axeSource: string | undefined;

/**
 * axe-core's serious and critical violations on the page as it is now. axe is evaluated through the DevTools
 * protocol, not added as a <script> element: the app's Content-Security-Policy (rightly) blocks inline scripts.
 */
export async function seriousViolations(page: Page): Promise<AxeViolation[]> {
  // Judge the page at rest: a dialog fading in (100 ms) measured half-transparent has too little contrast, and a slow
  // machine can start axe that early. Endless animations (spinners) are not waited for.
  await page.waitForFunction(
    () =>
      document.getAnimations().every((a) => a.playState !== 'running' || !Number.isFinite(Number(a.effect?.getComputedTiming().endTime))),
    undefined,
    { timeout: 10_000 },
  );
  axeSource ??= readFileSync(join(ROOT, 'node_modules/axe-core/axe.min.js'), 'utf8');
  await page.evaluate(axeSource);
  const violations = await page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run: (ctx: Document, opts: object) => Promise<{ violations: unknown[] }> } }).axe;
    const result = await axe.run(document, { resultTypes: ['violations'] });
    return result.violations;
  });
  return (violations as AxeViolation[]).filter((v) => v.impact === 'serious' || v.impact === 'critical');
}

export function describeViolations(violations: AxeViolation[]): string {
  return violations
    .map((v) => `${v.impact} ${v.id}: ${v.help}\n${v.nodes.map((n) => `    ${JSON.stringify(n.target)} ${n.failureSummary ?? ''}`.replace(/\n/g, ' ')).join('\n')}`)
    .join('\n');
}
