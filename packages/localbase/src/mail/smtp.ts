import net from 'node:net';
import crypto from 'node:crypto';
import type { MailMessage } from './mailer.ts';

export interface SmtpSettings {
  host: string;
  port: number;
  from: string;
}

/**
 * Sends one message over plain SMTP (no TLS, no AUTH): enough for local catchers such as Mailpit,
 * Inbucket or MailHog. Resolves when the server accepted the message; rejects on any non-2xx/3xx reply.
 */
export function sendSmtp(settings: SmtpSettings, msg: MailMessage, timeoutMs = 10_000): Promise<void> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: settings.host, port: settings.port });
    socket.setEncoding('utf8');
    socket.setTimeout(timeoutMs, () => socket.destroy(new Error(`SMTP timeout after ${timeoutMs} ms`)));
    const boundary = `lb-${crypto.randomBytes(8).toString('hex')}`;
    const crlf = (s: string) => s.replace(/\r?\n/g, '\r\n');
    // Dot-stuffing: a line starting with "." gets another ".".
    const stuff = (s: string) => crlf(s).replace(/^\./gm, '..');
    const data =
      [
        `From: ${settings.from}`,
        `To: ${msg.to}`,
        `Subject: ${msg.subject}`,
        `Date: ${new Date().toUTCString()}`,
        `Message-ID: <${crypto.randomUUID()}@localbase>`,
        'MIME-Version: 1.0',
        `Content-Type: multipart/alternative; boundary="${boundary}"`,
        '',
        `--${boundary}`,
        'Content-Type: text/plain; charset=utf-8',
        '',
        stuff(msg.text),
        `--${boundary}`,
        'Content-Type: text/html; charset=utf-8',
        '',
        stuff(msg.html),
        `--${boundary}--`,
      ].join('\r\n') + '\r\n.\r\n';
    const steps: Array<{ send?: string; expect: number }> = [
      { expect: 220 },
      { send: 'EHLO localbase\r\n', expect: 250 },
      { send: `MAIL FROM:<${settings.from}>\r\n`, expect: 250 },
      { send: `RCPT TO:<${msg.to}>\r\n`, expect: 250 },
      { send: 'DATA\r\n', expect: 354 },
      { send: data, expect: 250 },
      { send: 'QUIT\r\n', expect: 221 },
    ];
    let step = 0;
    let buffer = '';
    socket.on('data', (chunk: string) => {
      buffer += chunk;
      // A reply is complete when a line has "NNN " (space, not dash) after the code.
      for (;;) {
        const lines = buffer.split('\r\n');
        const done = lines.findIndex((l) => /^\d{3} /.test(l) || /^\d{3}$/.test(l));
        if (done < 0) return;
        const reply = lines.slice(0, done + 1).join('\n');
        buffer = lines.slice(done + 1).join('\r\n');
        const code = Number.parseInt(reply.slice(reply.lastIndexOf('\n') + 1, reply.lastIndexOf('\n') + 4), 10);
        const want = steps[step];
        if (!want || code !== want.expect) {
          socket.destroy();
          reject(new Error(`SMTP: expected ${want?.expect ?? 'nothing'}, got: ${reply}`));
          return;
        }
        step++;
        if (step === steps.length) {
          socket.end();
          resolve();
          return;
        }
        const next = steps[step]!.send;
        if (next) socket.write(next);
      }
    });
    socket.on('error', reject);
    socket.on('close', () => {
      if (step < steps.length) reject(new Error('SMTP: connection closed early'));
    });
  });
}
