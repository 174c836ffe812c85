import { Hono } from 'hono';
import type { Mailbox, StoredMail } from './mailer.ts';
import type { Database } from '../db/types.ts';

function esc(s: string): string {
  return s.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);
}

function page(mails: StoredMail[]): string {
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
a{word-break:break-all}.otp{font-size:1.2rem;letter-spacing:.15rem}
</style></head>
<body><h1>localbase mailbox</h1>
<p>Every email the auth server sends, newest first. JSON: <a href="/mailbox/api/messages">/mailbox/api/messages</a></p>
${items || '<p>No messages yet.</p>'}
</body></html>`;
}

/** GET /mailbox (HTML), GET /mailbox/api/messages[?to=], DELETE /mailbox/api/messages. No apikey needed. */
export function mailboxRoutes(db: Database, mailbox: Mailbox): Hono {
  const app = new Hono();
  app.get('/', async (c) => c.html(page(await mailbox.list(db, c.req.query('to') || undefined))));
  app.get('/api/messages', async (c) => c.json(await mailbox.list(db, c.req.query('to') || undefined)));
  app.delete('/api/messages', async (c) => {
    await mailbox.clear(db);
    return c.body(null, 204);
  });
  return app;
}
