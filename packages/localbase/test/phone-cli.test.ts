// `localbase start` with the phone settings (flags and LOCALBASE_… variables, ADR 034): they reach the server, the
// console shows the SMS, and a malformed test-OTP list stops the start.
import { spawnSync } from 'node:child_process';
import { randomInt } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { DEMO_ANON_KEY, cliPath, freePort, nodeBin, spawnCli, stopCli, waitReady, type CliProcess } from './cli.ts';

const running: CliProcess[] = [];
afterAll(async () => {
  for (const proc of running) await stopCli(proc, 'SIGKILL');
});

const headers = { apikey: DEMO_ANON_KEY, 'content-type': 'application/json', 'x-supabase-api-version': '2024-01-01' };

describe('localbase start with phone sign-ups', () => {
  it('flags and env variables configure phone auth; a bad --sms-test-otp stops the start', async () => {
    const proc = spawnCli(['--memory', '--enable-phone-signup', '--sms-confirmations', '--sms-otp-length', '7'], await freePort(), {
      LOCALBASE_SMS_TEMPLATE: 'Code {{ .Code }} for Foyer',
      LOCALBASE_SMS_TEST_OTP: '+1 555 000 7777:777777',
      LOCALBASE_RATE_LIMIT_SMS: '1',
    });
    running.push(proc);
    await waitReady(proc, 90_000);
    const settings = (await (await fetch(`${proc.url}/auth/v1/settings`, { headers })).json()) as {
      external: { phone: boolean };
      phone_autoconfirm: boolean;
    };
    expect([settings.external.phone, settings.phone_autoconfirm]).toEqual([true, false]);

    const otp = (phone: string) =>
      fetch(`${proc.url}/auth/v1/otp`, { method: 'POST', headers, body: JSON.stringify({ phone }) });
    const digits = `1555${String(randomInt(0, 100_000_000)).padStart(8, '0')}`;
    expect((await otp(`+${digits}`)).status).toBe(200);
    const [sms] = (await (await fetch(`${proc.url}/mailbox/api/sms?to=${digits}`)).json()) as Array<{ body: string; token: string }>;
    expect(sms?.token).toMatch(/^\d{7}$/);
    expect(sms?.body).toBe(`Code ${sms?.token} for Foyer`);
    // The console names the number and the text, as it does for mails.
    await expect.poll(() => proc.output(), { timeout: 5000 }).toContain(`[sms] sms to +${digits}: Code ${sms?.token} for Foyer`);
    // LOCALBASE_RATE_LIMIT_SMS=1: the second SMS of this client within the hour is refused.
    const second = await otp(`+1555${String(randomInt(0, 100_000_000)).padStart(8, '0')}`);
    expect(second.status).toBe(429);
    expect(await second.json()).toMatchObject({ code: 'over_sms_send_rate_limit', message: 'SMS rate limit exceeded' });
    // The test number is exempt and verifies with its fixed code.
    expect((await otp('+15550007777')).status).toBe(200);
    const verify = await fetch(`${proc.url}/auth/v1/verify`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ type: 'sms', phone: '+15550007777', token: '777777' }),
    });
    expect(verify.status).toBe(200);
    proc.child.kill('SIGTERM');
    expect((await proc.exited).code).toBe(0);

    const bad = spawnCli(['--memory', '--enable-phone-signup', '--sms-test-otp', '15550007777'], await freePort());
    running.push(bad);
    expect((await bad.exited).code).toBe(1);
    expect(bad.output()).toContain('--sms-test-otp: SMS test OTP: "15550007777" is not phone:code');

    const help = spawnSync(nodeBin, [cliPath, 'start', '--help'], { encoding: 'utf8' });
    for (const flag of ['--enable-phone-signup', 'LOCALBASE_ENABLE_PHONE_SIGNUP=1', '--sms-confirmations', '--sms-otp-expiry',
      '--sms-otp-length', '--sms-max-frequency', '--sms-template', '--sms-test-otp', '--rate-limit-sms'])
      expect(help.stdout).toContain(flag);
  }, 180_000);
});
