import net from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { sendSmtp } from './smtp.ts';
import { composeMail } from './mailer.ts';

/** A tiny SMTP server that records what it receives (a stand-in for Mailpit). */
function fakeSmtp(): Promise<{ port: number; received: string[]; close(): void }> {
  const received: string[] = [];
  const server = net.createServer((s) => {
    s.setEncoding('utf8');
    s.write('220 fake ESMTP\r\n');
    let inData = false;
    let data = '';
    let buf = '';
    s.on('data', (chunk: string) => {
      buf += chunk;
      let i;
      while ((i = buf.indexOf('\r\n')) >= 0) {
        const line = buf.slice(0, i);
        buf = buf.slice(i + 2);
        if (inData) {
          if (line === '.') {
            inData = false;
            received.push(data);
            s.write('250 queued\r\n');
          } else data += line + '\n';
          continue;
        }
        if (line.startsWith('EHLO')) s.write('250-fake\r\n250 8BITMIME\r\n');
        else if (line.startsWith('MAIL') || line.startsWith('RCPT')) s.write('250 ok\r\n');
        else if (line === 'DATA') {
          inData = true;
          s.write('354 go\r\n');
        } else if (line === 'QUIT') {
          s.write('221 bye\r\n');
          s.end();
        }
      }
    });
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({ port: (server.address() as net.AddressInfo).port, received, close: () => server.close() }),
    ),
  );
}

let close: (() => void) | undefined;
afterAll(() => close?.());

describe('sendSmtp', () => {
  it('delivers a multipart message with subject, recipient and the link', async () => {
    const srv = await fakeSmtp();
    close = srv.close;
    const msg = composeMail('recovery', 'someone@example.com', 'http://127.0.0.1:54321/auth/v1/verify?token=abc&type=recovery', '123456');
    await sendSmtp({ host: '127.0.0.1', port: srv.port, from: 'noreply@localbase.test' }, msg);
    expect(srv.received).toHaveLength(1);
    expect(srv.received[0]).toContain('To: someone@example.com');
    expect(srv.received[0]).toContain('Subject: Reset Your Password');
    expect(srv.received[0]).toContain('token=abc&type=recovery');
    expect(srv.received[0]).toContain('123456');
  });

  it('rejects when nothing listens', async () => {
    const probe = net.createServer();
    const port = await new Promise<number>((r) => probe.listen(0, '127.0.0.1', () => r((probe.address() as net.AddressInfo).port)));
    probe.close();
    await expect(sendSmtp({ host: '127.0.0.1', port, from: 'a@b.c' }, composeMail('signup', 'x@y.z', undefined, '1'))).rejects.toThrow();
  });
});
