import type { Queryable, Row } from '../db/types.ts';
import { iso } from '../auth/format.ts';
import { sendSmtp } from './smtp.ts';
import type { SmtpSettings } from './smtp.ts';

export type MailType = 'signup' | 'magiclink' | 'recovery' | 'email_change' | 'invite' | 'reauthentication';

export interface MailMessage {
  to: string;
  subject: string;
  type: MailType;
  html: string;
  text: string;
  links: string[];
  token?: string;
}

export interface StoredMail extends MailMessage {
  id: string;
  createdAt: string;
}

function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);
}

const SUBJECTS: Record<MailType, string> = {
  signup: 'Confirm Your Signup',
  magiclink: 'Your Magic Link',
  recovery: 'Reset Your Password',
  email_change: 'Confirm Email Change',
  invite: 'You have been invited',
  reauthentication: 'Confirm reauthentication',
};

const INTROS: Record<MailType, string> = {
  signup: 'Follow this link to confirm your user:',
  magiclink: 'Follow this link to login:',
  recovery: 'Follow this link to reset the password for your user:',
  email_change: 'Follow this link to confirm the update of your email:',
  invite: 'You have been invited to create a user. Follow this link to accept the invite:',
  reauthentication: 'Enter the code:',
};

/** Builds an auth email like GoTrue's default templates: a link and the one-time code. */
export function composeMail(type: MailType, to: string, link: string | undefined, token: string): MailMessage {
  const intro = INTROS[type];
  const html =
    `<h2>${escapeHtml(SUBJECTS[type])}</h2>\n<p>${escapeHtml(intro)}</p>\n` +
    (link ? `<p><a href="${escapeHtml(link)}">${escapeHtml(link)}</a></p>\n` : '') +
    `<p>Alternatively, enter the code: <strong>${escapeHtml(token)}</strong></p>`;
  const text = `${SUBJECTS[type]}\n\n${intro}\n${link ?? ''}\n\nAlternatively, enter the code: ${token}\n`;
  return { to, subject: SUBJECTS[type], type, html, text, links: link ? [link] : [], token };
}

function rowToMail(r: Row): StoredMail {
  const links = Array.isArray(r.links) ? (r.links as string[]) : (JSON.parse(String(r.links)) as string[]);
  const m: StoredMail = {
    id: String(r.id),
    to: String(r.to_email),
    subject: String(r.subject),
    type: r.type as MailType,
    html: String(r.html),
    text: String(r.text),
    links,
    createdAt: iso(r.created_at) ?? '',
  };
  if (typeof r.token === 'string') m.token = r.token;
  return m;
}

/** The local mailbox: every auth email is stored in localbase.mailbox (survives restarts). */
export class Mailbox {
  readonly #quiet: boolean;
  readonly #smtp: SmtpSettings | undefined;
  constructor(opts: { quiet: boolean; smtp?: SmtpSettings }) {
    this.#quiet = opts.quiet;
    this.#smtp = opts.smtp;
  }

  async deliver(q: Queryable, msg: MailMessage): Promise<void> {
    await q.query(
      'insert into localbase.mailbox (to_email, subject, type, html, text, links, token) values ($1, $2, $3, $4, $5, $6::jsonb, $7)',
      [msg.to, msg.subject, msg.type, msg.html, msg.text, JSON.stringify(msg.links), msg.token ?? null],
    );
    if (!this.#quiet) console.log(`[mail] ${msg.type} to ${msg.to}: ${msg.links[0] ?? `code ${msg.token ?? ''}`}`);
    // Optional real SMTP: best effort, in the background; the mailbox copy above is the record.
    if (this.#smtp) {
      const smtp = this.#smtp;
      sendSmtp(smtp, msg).catch((err: unknown) =>
        console.error(`[mail] SMTP delivery to ${msg.to} via ${smtp.host}:${smtp.port} failed: ${(err as Error).message}`),
      );
    }
  }

  async list(q: Queryable, to?: string): Promise<StoredMail[]> {
    const r = to
      ? await q.query('select * from localbase.mailbox where lower(to_email) = lower($1) order by created_at desc, id', [
          to,
        ])
      : await q.query('select * from localbase.mailbox order by created_at desc, id limit 500');
    return r.rows.map(rowToMail);
  }

  /** Every mail, or only those to `to` (any letter case, as `list`). */
  async clear(q: Queryable, to?: string): Promise<void> {
    if (to) await q.query('delete from localbase.mailbox where lower(to_email) = lower($1)', [to]);
    else await q.query('delete from localbase.mailbox');
  }
}
