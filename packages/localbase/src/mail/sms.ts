import type { Queryable, Row } from '../db/types.ts';
import { iso } from '../auth/format.ts';

/** Why a code was texted: a phone sign-up / sign-in code, the code confirming a new number, or a reauthentication. */
export type SmsType = 'sms' | 'phone_change' | 'reauthentication';

export interface SmsMessage {
  /** The phone number as GoTrue stores it: E.164 digits without "+". */
  to: string;
  type: SmsType;
  body: string;
  token?: string;
}

export interface StoredSms extends SmsMessage {
  id: string;
  createdAt: string;
}

/** GoTrue's formatPhoneNumber: drops one leading "+" and every space ("+1 555 0100" → "15550100"). */
export function formatPhoneNumber(phone: string): string {
  return phone.replace(/^\+/, '').replaceAll(' ', '');
}

function rowToSms(r: Row): StoredSms {
  const m: StoredSms = {
    id: String(r.id),
    to: String(r.to_phone),
    type: r.type as SmsType,
    body: String(r.body),
    createdAt: iso(r.created_at) ?? '',
  };
  if (typeof r.token === 'string') m.token = r.token;
  return m;
}

/**
 * The SMS half of the mailbox: every text message the auth server "sends" is stored in localbase.sms (kept across
 * restarts) and shown at /mailbox next to the mails; no SMS provider is called (docs/decisions/034-…).
 */
export class SmsOutbox {
  readonly #quiet: boolean;
  constructor(opts: { quiet: boolean }) {
    this.#quiet = opts.quiet;
  }

  /** Stores one message; its id is the message_id GoTrue's SMS providers return. */
  async deliver(q: Queryable, msg: SmsMessage): Promise<string> {
    const r = await q.query<{ id: string }>(
      'insert into localbase.sms (to_phone, type, body, token) values ($1, $2, $3, $4) returning id::text as id',
      [msg.to, msg.type, msg.body, msg.token ?? null],
    );
    if (!this.#quiet) console.log(`[sms] ${msg.type} to +${msg.to}: ${msg.body}`);
    return r.rows[0]?.id ?? '';
  }

  /** Newest first; `to` in any of the spellings GoTrue accepts ("+1 555…", "1555…"). */
  async list(q: Queryable, to?: string): Promise<StoredSms[]> {
    const r = to
      ? await q.query('select * from localbase.sms where to_phone = $1 order by created_at desc, id', [formatPhoneNumber(to)])
      : await q.query('select * from localbase.sms order by created_at desc, id limit 500');
    return r.rows.map(rowToSms);
  }

  /** Every message, or only those to `to` (any spelling, as `list`). */
  async clear(q: Queryable, to?: string): Promise<void> {
    if (to) await q.query('delete from localbase.sms where to_phone = $1', [formatPhoneNumber(to)]);
    else await q.query('delete from localbase.sms');
  }
}
