// What the localbase benchmarks share: the servers' default public keys and a free loopback port.
import { createServer } from 'node:net';
import { pathToFileURL } from 'node:url';

export const API_VERSION = '2024-01-01';
/** The Supabase CLI demo anon key (protocol §E): the servers run with the defaults. */
export const ANON_KEY =
  'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJpc3MiOiJzdXBhYmFzZS1kZW1vIiwicm9sZSI6ImFub24iLCJleHAiOjE5ODM4MTI5OTZ9.CRXP1A7WOeoJeXxjNni43kdQwgnWNReilDMblYTn_I0';

/** A TCP port on 127.0.0.1 that was free a moment ago. */
export function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const srv = createServer();
    srv.once('error', rej);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => res(port));
    });
  });
}

/**
 * The module a localbase child process runs (`node --input-type=module -e <code>`): starts localbase from its
 * sources with these options, prints `BENCH_READY <url>`, stops on SIGTERM/SIGINT.
 */
export function localbaseChildCode(sourceIndex: string, options: Record<string, unknown>): string {
  return `
import { startLocalbase } from ${JSON.stringify(pathToFileURL(sourceIndex).href)};
const lb = await startLocalbase(${JSON.stringify(options)});
console.log('BENCH_READY ' + lb.url);
const stop = async () => { await lb.stop(); process.exit(0); };
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
`;
}
