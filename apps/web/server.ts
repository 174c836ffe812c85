// The web app's HTTP server for `npm start` and `npm run dev`: Next's own request handler (the same one `next start`
// runs) behind a Node server we configure — request heads up to 64 KiB with a way out past that, and request
// targets Next cannot parse answered before it sees them (src/server/node-server.ts, ADR 015).
//
//   node server.ts          production (after `next build`), like `next start`
//   node server.ts --dev    development, like `next dev`
// HOST (default 127.0.0.1) and PORT (default 3000) choose where it listens.
import path from 'node:path'
import { fileURLToPath } from 'node:url'

import next from 'next'

import { parseTrustedProxies } from './src/lib/client-address.ts'
import { readBackendConfig } from './src/lib/env-config.ts'
import { createWebServer, publicFilePaths } from './src/server/node-server.ts'
import { API_RATE_LIMITS, readRateLimitRule } from './src/server/request-guards.ts'

const dev = process.argv.includes('--dev')
const hostname = process.env.HOST || '127.0.0.1'
const port = Number(process.env.PORT || 3000)
const dir = path.dirname(fileURLToPath(import.meta.url))
const { supabaseUrl } = readBackendConfig({
  NEXT_PUBLIC_SUPABASE_URL: process.env.NEXT_PUBLIC_SUPABASE_URL,
  NEXT_PUBLIC_SUPABASE_ANON_KEY: process.env.NEXT_PUBLIC_SUPABASE_ANON_KEY,
})
// A bad FOYER_TRUSTED_PROXIES entry or API budget stops the start with a message naming it, like a bad backend
// variable.
parseTrustedProxies(process.env.FOYER_TRUSTED_PROXIES)
readRateLimitRule('FOYER_API_QUERY_LIMIT', process.env.FOYER_API_QUERY_LIMIT, API_RATE_LIMITS.query)
readRateLimitRule('FOYER_API_MUTATION_LIMIT', process.env.FOYER_API_MUTATION_LIMIT, API_RATE_LIMITS.mutation)
Object.assign(process.env, { NODE_ENV: process.env.NODE_ENV ?? (dev ? 'development' : 'production') })

const app = next({ dev, dir, hostname, port })
await app.prepare()
const handle = app.getRequestHandler()

// the files of public/, whose methods (GET, HEAD) are not the pages' (node-server.ts answerPageMethod)
const server = createWebServer(supabaseUrl, handle, { publicFiles: publicFilePaths(path.join(dir, 'public')) })
server.listen(port, hostname, () => {
  console.log(`▲ Foyer web (${dev ? 'development' : 'production'}) on http://${hostname.includes(':') ? `[${hostname}]` : hostname}:${port}`)
})

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    server.close(() => process.exit(0))
    server.closeAllConnections()
    setTimeout(() => process.exit(0), 2000) // connections that do not close in time
  })
}
