// Chromium driven over the DevTools protocol alone, on the pipe Chromium opens with --remote-debugging-pipe (fd 3 in,
// fd 4 out, one JSON message per NUL-terminated chunk): for the lab benchmark, whose pages must run as they do for a
// visitor, with no DevTools agent enabled in them. Playwright enables the Runtime domain on every page it drives, and
// with that domain on, V8 records a detailed stack trace (source positions included) for every `Error` created:
// react-dom creates some while its module is evaluated, and collecting the source positions re-parses the functions
// on the stack, whole chunks included (docs/decisions/059-lab-without-devtools-agent.md). Only the domains the caller
// enables run; `Runtime.evaluate` works without `Runtime.enable`.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable, Writable } from 'node:stream';

export interface CdpEvent {
  method: string;
  params: Record<string, unknown>;
  sessionId?: string;
}

type Listener = (event: CdpEvent) => void;

export interface CdpBrowser {
  /** Sends one command (to a page when `sessionId` names its session) and resolves with its result. */
  send<T = Record<string, unknown>>(method: string, params?: Record<string, unknown>, sessionId?: string): Promise<T>;
  /** Calls `listener` with every event until the returned function is called. */
  on(listener: Listener): () => void;
  close(): Promise<void>;
}

export async function launchOverPipe(executablePath: string, args: string[]): Promise<CdpBrowser> {
  const profile = mkdtempSync(join(tmpdir(), 'cdp-pipe-'));
  const child: ChildProcess = spawn(executablePath, ['--headless', '--remote-debugging-pipe', `--user-data-dir=${profile}`, ...args, 'about:blank'], {
    stdio: ['ignore', 'ignore', 'ignore', 'pipe', 'pipe'],
  });
  const input = child.stdio[3] as Writable;
  const output = child.stdio[4] as Readable;
  let nextId = 0;
  const pending = new Map<number, { resolve: (value: Record<string, unknown>) => void; reject: (error: Error) => void; method: string }>();
  const listeners = new Set<Listener>();
  let buffered = '';
  let exited = false;
  output.setEncoding('utf8');
  output.on('data', (chunk: string) => {
    buffered += chunk;
    for (let end = buffered.indexOf('\0'); end >= 0; end = buffered.indexOf('\0')) {
      const message = JSON.parse(buffered.slice(0, end)) as { id?: number; result?: Record<string, unknown>; error?: { message: string }; method?: string; params?: Record<string, unknown>; sessionId?: string };
      buffered = buffered.slice(end + 1);
      if (message.id !== undefined) {
        const call = pending.get(message.id);
        pending.delete(message.id);
        if (message.error) call?.reject(new Error(`${call.method}: ${message.error.message}`));
        else call?.resolve(message.result ?? {});
      } else if (message.method) {
        for (const listener of listeners) listener({ method: message.method, params: message.params ?? {}, sessionId: message.sessionId });
      }
    }
  });
  child.on('exit', () => {
    exited = true;
    for (const call of pending.values()) call.reject(new Error(`Chromium exited during ${call.method}`));
    pending.clear();
  });
  input.on('error', () => undefined);

  const send = <T>(method: string, params: Record<string, unknown> = {}, sessionId?: string): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      if (exited) {
        reject(new Error(`Chromium is not running (${method})`));
        return;
      }
      nextId += 1;
      pending.set(nextId, { resolve: resolve as (value: Record<string, unknown>) => void, reject, method });
      input.write(`${JSON.stringify({ id: nextId, method, params, ...(sessionId ? { sessionId } : {}) })}\0`);
    });

  await send('Browser.getVersion');
  return {
    send,
    on(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    async close() {
      if (!exited) {
        await send('Browser.close').catch(() => undefined);
        await new Promise<void>((resolve) => {
          if (exited) resolve();
          else child.once('exit', () => resolve());
          setTimeout(() => {
            child.kill('SIGKILL');
            resolve();
          }, 5000).unref();
        });
      }
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
