import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AuthService } from '../auth/service.ts';
import { API_VERSION, EXPOSED_HEADERS } from './app.ts';

/**
 * GET /auth/v1/user is what every server-rendered page and every supabase-js getUser() calls. When its answer is
 * in the read cache (valid apikey, a bearer token already verified and not expired, nothing written since), answer
 * it straight from Node's request handler, with the same headers the hono app would send. Anything else — a query
 * string, an unknown key, a cache miss — returns false and goes through the app.
 */
export function createUserFastPath(
  auth: AuthService,
  apiKeys: ReadonlySet<string>,
  quiet: boolean,
): (req: IncomingMessage, res: ServerResponse) => boolean {
  return (req, res) => {
    if (req.method !== 'GET' || req.url !== '/auth/v1/user') return false;
    const started = quiet ? 0 : performance.now();
    const apikey = req.headers.apikey;
    if (typeof apikey !== 'string' || !apiKeys.has(apikey)) return false;
    const body = auth.cachedUserBody(req.headers.authorization);
    if (body === undefined) return false;
    const origin = req.headers.origin;
    const headers: Record<string, string | number> = {
      'Access-Control-Allow-Origin': origin ?? '*',
      'Access-Control-Expose-Headers': EXPOSED_HEADERS,
      'X-Supabase-Api-Version': API_VERSION,
      'Content-Type': 'application/json',
      'Content-Length': Buffer.byteLength(body),
    };
    if (origin) {
      headers['Access-Control-Allow-Credentials'] = 'true';
      headers.Vary = 'Origin';
    }
    res.writeHead(200, headers);
    res.end(body);
    if (!quiet) console.log(`GET /auth/v1/user 200 ${(performance.now() - started).toFixed(1)}ms`);
    return true;
  };
}
