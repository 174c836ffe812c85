import { STATUS_CODES } from 'node:http'

import { Agent, request } from 'undici'

/**
 * The fetch of the server's table queries (`ctx.db`, createDataClient): undici's `request` on one keep-alive pool
 * instead of the global WHATWG `fetch` (docs/decisions/040-trpc-server-overhead.md). Node's `fetch` is undici too,
 * but its Request/Response/web-stream layers cost ≈ 0.2 ms of main thread per call on this machine, as much as the
 * cheapest REST call's own work; postgrest-js reads only `ok`, `status`, `statusText`, `headers.get()` and `text()`
 * of the answer, and sends a plain header object, a string body and a signal.
 * The answer is therefore a small object with exactly those members (plus `json()`), not a `Response`: building a
 * real one around the text costs half of what leaving fetch saves. server-fetch.test.ts runs the app's kinds of
 * queries through postgrest-js with both fetches against localbase and expects the same results; a postgrest-js
 * upgrade that reads more of the answer fails it. Anything else (a Request object, a stream body) goes to `fetch`.
 */
const dispatcher = new Agent({ keepAliveTimeout: 10_000, keepAliveMaxTimeout: 60_000 })

type HeaderValues = Record<string, string | string[] | undefined>

class AnswerHeaders {
  private readonly values: HeaderValues
  constructor(values: HeaderValues) {
    this.values = values
  }
  get(name: string): string | null {
    const value = this.values[name.toLowerCase()]
    if (value === undefined) return null
    return Array.isArray(value) ? value.join(', ') : value
  }
  has(name: string): boolean {
    return this.values[name.toLowerCase()] !== undefined
  }
  forEach(callback: (value: string, name: string) => void): void {
    for (const name of Object.keys(this.values)) {
      const value = this.get(name)
      if (value !== null) callback(value, name)
    }
  }
}


function plainHeaders(headers: HeadersInit | undefined): Record<string, string> {
  if (headers === undefined) return {}
  if (headers instanceof Headers) {
    // postgrest-js sends its Headers: read them as they are (a copy through `new Headers` costs as much again)
    const plain: Record<string, string> = {}
    headers.forEach((value, name) => (plain[name] = value))
    return plain
  }
  if (Array.isArray(headers)) return Object.fromEntries(new Headers(headers))
  return headers as Record<string, string>
}

export const serverFetch = (async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
  if (input instanceof Request) return fetch(input, init)
  const body = init?.body
  if (body !== undefined && body !== null && typeof body !== 'string') return fetch(input, init)
  const answer = await request(input, {
    dispatcher,
    method: (init?.method ?? 'GET') as 'GET',
    headers: plainHeaders(init?.headers),
    body: body ?? null,
    signal: init?.signal ?? null,
  })
  const text = await answer.body.text()
  const status = answer.statusCode
  return {
    ok: status >= 200 && status < 300,
    status,
    statusText: STATUS_CODES[status] ?? '',
    headers: new AnswerHeaders(answer.headers),
    text: () => Promise.resolve(text),
    json: () => Promise.resolve(JSON.parse(text) as unknown),
  } as unknown as Response
}) as typeof fetch
