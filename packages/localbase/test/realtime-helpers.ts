// Realtime test helpers: supabase-js clients whose sockets are closed after each file, subscribing with the reason
// of a refusal, waiting for events, and tokens signed with the server's legacy secret.
import { SignJWT } from 'jose';
import { createClient, type RealtimeChannel, type SupabaseClient } from '@supabase/supabase-js';
import type { Localbase } from './helpers.ts';

const opened: SupabaseClient[] = [];

/** A supabase-js client with the anon key (vsn 2.0.0 by default, as realtime-js sends; 1.0.0 on request). */
export function realtimeClient(lb: Localbase, opts: { vsn?: '1.0.0' | '2.0.0'; key?: string } = {}): SupabaseClient {
  const client = createClient(lb.url, opts.key ?? lb.anonKey, {
    auth: { persistSession: false, autoRefreshToken: false, detectSessionInUrl: false },
    realtime: opts.vsn ? { vsn: opts.vsn } : {},
  });
  opened.push(client);
  return client;
}

/** Closes every socket opened by realtimeClient (call in afterAll, before lb.stop()). */
export async function closeRealtimeClients(): Promise<void> {
  await Promise.all(opened.splice(0).map((c) => c.removeAllChannels().then(() => c.realtime.disconnect())));
}

export interface Subscribed {
  status: string;
  error?: Error;
}

/** Subscribes and resolves with the first status the client reports (SUBSCRIBED, CHANNEL_ERROR, TIMED_OUT, CLOSED). */
export function subscribe(channel: RealtimeChannel): Promise<Subscribed> {
  return new Promise((resolve) => {
    let done = false;
    channel.subscribe((status, error) => {
      if (done) return;
      done = true;
      resolve({ status, error });
    });
  });
}

/** Resolves when `ready()` is true, checking every 20 ms; rejects after `ms`. */
export async function until(ready: () => boolean, ms = 5000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + ms;
  while (!ready()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** An access token signed with the server's legacy HS256 secret, expiring `expiresIn` seconds from now (negative: expired). */
export function accessToken(lb: Localbase, expiresIn: number, sub: string = crypto.randomUUID()): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ sub, role: 'authenticated', aud: 'authenticated', exp: now + expiresIn, iat: now })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .sign(new TextEncoder().encode(lb.jwtSecret));
}
