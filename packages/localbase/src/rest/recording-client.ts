// For the statement-builder tests: the official supabase-js client builds the requests (URL, Prefer, body) exactly
// as an app sends them, and this fetch records each one instead of sending it, so a test feeds the same request to
// our parser and builders. Test support only; nothing in localbase imports it.
import { createClient, type SupabaseClient } from '@supabase/supabase-js';

export interface RecordedRequest {
  method: string;
  url: URL;
  headers: Headers;
  body: string | null;
}

export interface RecordingClient {
  client: SupabaseClient;
  /** The last request the client made; throws when it made none. */
  last(): RecordedRequest;
}

/** A supabase-js client (user token "token") whose requests are recorded and answered with `reply` (default 204). */
export function recordingClient(reply: () => Response = () => new Response(null, { status: 204 })): RecordingClient {
  let recorded: RecordedRequest | undefined;
  const client = createClient('http://127.0.0.1:1', 'anon-key', {
    accessToken: async () => 'token',
    global: {
      fetch: async (input: string | URL | Request, init?: RequestInit) => {
        recorded = {
          method: init?.method ?? 'GET',
          url: new URL(typeof input === 'string' ? input : input instanceof URL ? input.href : input.url),
          headers: new Headers(init?.headers),
          body: typeof init?.body === 'string' ? init.body : null,
        };
        return reply();
      },
    },
  });
  return {
    client,
    last() {
      if (!recorded) throw new Error('the client has not made a request yet');
      return recorded;
    },
  };
}
