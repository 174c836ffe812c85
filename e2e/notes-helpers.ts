// Helpers for the notes browser tests: a new signed-in user per test, notes seeded with the service key (as a
// migration or an admin would), and the list as the page shows it.
import type { BrowserContextOptions, Page } from 'playwright-core';
import { ANON_KEY, PASSWORD, signInViaUI, supabaseURL, uniqueEmail } from './auth-helpers.ts';
import { DEFAULT_SERVICE_ROLE_KEY } from './backend-control.ts';
import { gotoHydrated, type BrowserFixture } from './browser.ts';

/** The demo account of supabase/seed.sql (30 notes, 3 pinned). Tests only read it. */
export const DEMO_EMAIL = 'demo@example.com';
export const DEMO_PASSWORD = 'foyer-demo-2026';

export interface NotesUser {
  page: Page;
  email: string;
  id: string;
}

/** Signs up a new user through the auth API and returns its id. */
export async function createUser(email: string): Promise<string> {
  const response = await fetch(`${supabaseURL}/auth/v1/signup`, {
    method: 'POST',
    headers: { apikey: ANON_KEY, 'content-type': 'application/json' },
    body: JSON.stringify({ email, password: PASSWORD }),
  });
  if (!response.ok) throw new Error(`sign-up of ${email} failed: HTTP ${response.status} ${await response.text()}`);
  const body = (await response.json()) as { id?: string; user?: { id: string } };
  const id = body.user?.id ?? body.id;
  if (!id) throw new Error(`sign-up of ${email} returned no user id`);
  return id;
}

/** A new user, signed in through the sign-in page, on `/` with the notes list loaded. */
export async function signedInUser(fixture: BrowserFixture, options?: BrowserContextOptions): Promise<NotesUser> {
  const email = uniqueEmail('notes');
  const id = await createUser(email);
  const page = await fixture.newPage(options);
  await gotoHydrated(page, '/sign-in');
  await signInViaUI(page, email);
  await page.waitForURL((url) => url.pathname === '/', { timeout: 20_000 });
  await listSettled(page);
  return { page, email, id };
}

export interface SeedNote {
  title: string;
  body?: string | null;
  pinned?: boolean;
  created_at?: string;
  updated_at?: string;
}

/** Inserts notes for a user with the service key (bypasses RLS, like a seed script). */
export async function seedNotes(userId: string, notes: SeedNote[]): Promise<{ id: string; title: string }[]> {
  const response = await fetch(`${supabaseURL}/rest/v1/notes?select=id,title`, {
    method: 'POST',
    headers: {
      apikey: DEFAULT_SERVICE_ROLE_KEY,
      authorization: `Bearer ${DEFAULT_SERVICE_ROLE_KEY}`,
      'content-type': 'application/json',
      prefer: 'return=representation',
    },
    // A bulk insert needs the same keys in every object (PostgREST's rule): fill in what a note leaves out.
    body: JSON.stringify(
      notes.map((note) => {
        const now = new Date().toISOString();
        return { user_id: userId, body: null, pinned: false, created_at: now, updated_at: now, ...note };
      }),
    ),
  });
  if (!response.ok) throw new Error(`seeding notes failed: HTTP ${response.status} ${await response.text()}`);
  return (await response.json()) as { id: string; title: string }[];
}

/** `count` notes "Note 01"… with creation and edit times a minute apart (Note 01 oldest). */
export function numberedNotes(count: number, start = Date.UTC(2026, 5, 1, 9)): SeedNote[] {
  return Array.from({ length: count }, (_, i) => {
    const at = new Date(start + i * 60_000).toISOString();
    return { title: `Note ${String(i + 1).padStart(2, '0')}`, body: `Body ${i + 1}`, created_at: at, updated_at: at };
  });
}

/** Waits until the list shows data (no skeleton, not fetching). */
export async function listSettled(page: Page): Promise<void> {
  await page.locator('#notes-list[aria-busy="false"]').waitFor({ timeout: 20_000 });
}

/** The note titles in the order the list shows them (table rows or cards). */
export async function listedTitles(page: Page): Promise<string[]> {
  await listSettled(page);
  return page.getByTestId('note-row').locator('a').evaluateAll((links) =>
    links.map((a) => (a.textContent ?? '').replace(/^Pinned/, '').trim()),
  );
}

export const pageRangeText = (page: Page) => page.getByTestId('page-range').innerText();

/** Signs in as the seeded demo user (30 notes) through the sign-in page and waits for the list. */
export async function signInDemo(page: Page): Promise<void> {
  await gotoHydrated(page, '/sign-in');
  await page.getByLabel('Email').fill(DEMO_EMAIL);
  await page.getByLabel('Password').fill(DEMO_PASSWORD);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await page.waitForURL((url) => url.pathname === '/', { timeout: 20_000 });
  await listSettled(page);
}
