// GoTrue's SMTP_MAX_FREQUENCY (decision 141): at most one mail of a kind to a user per interval; sooner is
// 429 over_email_send_rate_limit "For security purposes, you can only request this after N seconds." Driven with the
// official supabase-js client, on PGlite or (LOCALBASE_TEST_DATABASE_URL) PostgreSQL.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_EMAIL_MAX_FREQUENCY_SECONDS } from '../src/index.ts';
import {
  PASSWORD,
  anonClient,
  listMail,
  raw,
  serviceClient,
  signedInClient,
  sleep,
  startTestServer,
  uniqueEmail,
  waitForMail,
  type Localbase,
} from './helpers.ts';

const WAIT_MESSAGE = /^For security purposes, you can only request this after (\d+) seconds\.$/;

let lb: Localbase; // GoTrue's default interval, 60 s
let short: Localbase; // confirmations on, 2 s

beforeAll(async () => {
  [lb, short] = await Promise.all([
    startTestServer({ emailMaxFrequencySeconds: DEFAULT_EMAIL_MAX_FREQUENCY_SECONDS }),
    startTestServer({ enableConfirmations: true, emailMaxFrequencySeconds: 2 }),
  ]);
});

afterAll(async () => {
  await Promise.all([lb?.stop(), short?.stop()]);
});

async function confirmedUser(server: Localbase): Promise<string> {
  const email = uniqueEmail('freq');
  const { error } = await serviceClient(server).auth.admin.createUser({ email, password: PASSWORD, email_confirm: true });
  expect(error).toBeNull();
  return email;
}

function secondsIn(message: string): number {
  const m = WAIT_MESSAGE.exec(message);
  if (!m) throw new Error(`not GoTrue's frequency message: ${message}`);
  return Number(m[1]);
}

describe('email max frequency', () => {
  it('defaults to GoTrue\'s 60 seconds', () => {
    expect(DEFAULT_EMAIL_MAX_FREQUENCY_SECONDS).toBe(60);
  });

  it('a second password reset to one address within the interval is 429 with the seconds left, and sends nothing', async () => {
    const email = await confirmedUser(lb);
    const supabase = anonClient(lb);
    expect((await supabase.auth.resetPasswordForEmail(email)).error).toBeNull();
    await waitForMail(lb, email, { type: 'recovery' });

    const again = await supabase.auth.resetPasswordForEmail(email);
    expect(again.error).toMatchObject({ status: 429, code: 'over_email_send_rate_limit' });
    const left = secondsIn(again.error!.message);
    expect(left).toBeGreaterThanOrEqual(55);
    expect(left).toBeLessThanOrEqual(59);
    await sleep(200);
    expect(await listMail(lb, email)).toHaveLength(1);

    const res = await raw(lb, '/auth/v1/recover', { body: { email } });
    expect(res.status).toBe(429);
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(left);
  });

  it('a sign-in link shares the password reset\'s timer (both are recovery mails), another address is not held', async () => {
    const email = await confirmedUser(lb);
    const other = await confirmedUser(lb);
    const supabase = anonClient(lb);
    expect((await supabase.auth.signInWithOtp({ email })).error).toBeNull();
    const link = await supabase.auth.signInWithOtp({ email });
    expect(link.error).toMatchObject({ status: 429, code: 'over_email_send_rate_limit' });
    expect(link.error!.message).toMatch(WAIT_MESSAGE);
    const reset = await supabase.auth.resetPasswordForEmail(email);
    expect(reset.error).toMatchObject({ status: 429, code: 'over_email_send_rate_limit' });
    expect((await supabase.auth.signInWithOtp({ email: other })).error).toBeNull();
    expect(await waitForMail(lb, email)).toHaveLength(1);
  });

  it('an unknown address answers as before (nothing is sent, nothing is held)', async () => {
    const email = uniqueEmail('nobody');
    const supabase = anonClient(lb);
    expect((await supabase.auth.resetPasswordForEmail(email)).error).toBeNull();
    expect((await supabase.auth.resetPasswordForEmail(email)).error).toBeNull();
  });

  it('reauthentication and email change codes have their own timers', async () => {
    const { client } = await signedInClient(lb);
    expect((await client.auth.reauthenticate()).error).toBeNull();
    const again = await client.auth.reauthenticate();
    expect(again.error).toMatchObject({ status: 429, code: 'over_email_send_rate_limit' });

    const first = await client.auth.updateUser({ email: uniqueEmail('new') });
    expect(first.error).toBeNull();
    const second = await client.auth.updateUser({ email: uniqueEmail('newer') });
    expect(second.error).toMatchObject({ status: 429, code: 'over_email_send_rate_limit' });
    expect(second.error!.message).toMatch(WAIT_MESSAGE);
  });

  it('"send the link again" after sign-up waits for the interval, then sends a new link', async () => {
    const email = uniqueEmail('resend');
    const supabase = anonClient(short);
    expect((await supabase.auth.signUp({ email, password: PASSWORD })).error).toBeNull();
    await waitForMail(short, email, { type: 'signup' });

    const early = await supabase.auth.resend({ type: 'signup', email });
    expect(early.error).toMatchObject({ status: 429, code: 'over_email_send_rate_limit' });
    expect(secondsIn(early.error!.message)).toBeLessThanOrEqual(1);

    await sleep(2100);
    expect((await supabase.auth.resend({ type: 'signup', email })).error).toBeNull();
    expect(await waitForMail(short, email, { type: 'signup', count: 2 })).toHaveLength(2);
  });
});
