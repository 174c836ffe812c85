import { Hono } from 'hono';
import type { Mailbox, StoredMail } from './mailer.ts';
import { formatPhoneNumber, SmsOutbox } from './sms.ts';
import type { StoredSms } from './sms.ts';
import type { Database } from '../db/types.ts';

function esc(s: string): string {
  return s.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);
}

/** The text messages grouped per phone number (newest number first), each with its messages newest first. */
function smsSection(messages: StoredSms[]): string {
  if (messages.length === 0) return '';
  const byPhone = new Map<string, StoredSms[]>();
  for (const m of messages) byPhone.set(m.to, [...(byPhone.get(m.to) ?? []), m]);
  const groups = [...byPhone]
    .map(
      ([phone, list]) => `<section class="phone">
  <h3>+${esc(phone)} <a href="/mailbox?to=%2B${esc(phone)}">only this number</a></h3>
${list
  .map(
    (m) => `  <article class="sms">
  <header><span class="type">${esc(m.type)}</span> · <time>${esc(m.createdAt)}</time></header>
  <p class="body">${esc(m.body)}</p>
  ${m.token ? `<p>Code: <code class="otp">${esc(m.token)}</code></p>` : ''}
  </article>`,
  )
  .join('\n')}
</section>`,
    )
    .join('\n');
  return `<h2>Messages (SMS)</h2>
<p>Every text message, per phone number. JSON: <a href="/mailbox/api/sms">/mailbox/api/sms</a></p>
${groups}`;
}

function page(mails: StoredMail[], sms: StoredSms[] = []): string {
  const items = mails
    .map(
      (m) => `<article>
  <header><strong>${esc(m.subject)}</strong> <span class="type">${esc(m.type)}</span><br>
  to <code>${esc(m.to)}</code> · <time>${esc(m.createdAt)}</time></header>
  <ul>${m.links.map((l) => `<li><a href="${esc(l)}">${esc(l)}</a></li>`).join('')}</ul>
  ${m.token ? `<p>Code: <code class="otp">${esc(m.token)}</code></p>` : ''}
</article>`,
    )
    .join('\n');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>localbase mailbox</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
body{font-family:system-ui,sans-serif;max-width:52rem;margin:2rem auto;padding:0 1rem;color:#222}
article{border:1px solid #ccc;border-radius:8px;padding:.75rem 1rem;margin:.75rem 0}
.type{font-size:.8rem;background:#eef;padding:.1rem .4rem;border-radius:4px}
.phone h3 a{font-size:.8rem;font-weight:normal}.body{white-space:pre-wrap}
a{word-break:break-all}.otp{font-size:1.2rem;letter-spacing:.15rem}
</style></head>
<body><h1>localbase mailbox</h1>
<p>Every email the auth server sends, newest first. JSON: <a href="/mailbox/api/messages">/mailbox/api/messages</a></p>
${items || '<p>No messages yet.</p>'}
${smsSection(sms)}
</body></html>`;
}

/** A ?to= that names a phone number ("+15550100", "1555 0100") rather than an email address. */
function phoneQuery(to: string | undefined): string | undefined {
  return to && /^\+?[0-9 ]+$/.test(to) ? formatPhoneNumber(to) : undefined;
}

/**
 * GET /mailbox (HTML: mails, then text messages per phone number), GET and DELETE /mailbox/api/messages[?to=]
 * (mails), GET and DELETE /mailbox/api/sms[?to=<phone>] (text messages). A DELETE with ?to= clears that address
 * only, so test files that share one database (LOCALBASE_TEST_DATABASE_URL) can clear their own mail.
 * No apikey needed; same-origin only (guard.ts).
 */
export function mailboxRoutes(db: Database, mailbox: Mailbox, sms = new SmsOutbox({ quiet: true })): Hono {
  const app = new Hono();
  app.get('/', async (c) => {
    const to = c.req.query('to') || undefined;
    const phone = phoneQuery(to);
    // ?to=<email> shows that address's mails only; ?to=<phone> that number's messages only.
    const mails = phone ? [] : await mailbox.list(db, to);
    const texts = to && !phone ? [] : await sms.list(db, phone);
    return c.html(page(mails, texts));
  });
  app.get('/api/sms', async (c) => c.json(await sms.list(db, c.req.query('to') || undefined)));
  app.delete('/api/sms', async (c) => {
    await sms.clear(db, c.req.query('to') || undefined);
    return c.body(null, 204);
  });
  app.get('/api/messages', async (c) => c.json(await mailbox.list(db, c.req.query('to') || undefined)));
  app.delete('/api/messages', async (c) => {
    await mailbox.clear(db, c.req.query('to') || undefined);
    return c.body(null, 204);
  });
  return app;
}
