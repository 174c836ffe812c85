// The server's table queries go through serverFetch (undici's request, no WHATWG Response) instead of the global
// fetch (docs/decisions/040-trpc-server-overhead.md). Against a real localbase with the product's migrations, every
// kind of query the app makes — and the failures it handles — must give postgrest-js exactly the result the global
// fetch gives: same data, error, count, status and status text.
import path from 'node:path'

import { PostgrestClient } from '@supabase/postgrest-js'
import { findRepoRoot, type Localbase } from 'localbase'
import { signedInClient, startTestServer } from 'localbase/testing'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import type { Database } from './client-type'
import { serverFetch } from './server-fetch'

let lb: Localbase
let token: string
let userId: string
let otherUserId: string

const client = (f: typeof fetch) =>
  new PostgrestClient<Database>(`${lb.url}/rest/v1`, {
    headers: { apikey: lb.anonKey, Authorization: `Bearer ${token}` },
    fetch: f,
    retry: false,
  })

/** What a caller sees of a postgrest-js answer (the error without its stack, if it is an Error). */
function seen(answer: { data: unknown; error: unknown; count: number | null; status: number; statusText: string }) {
  const error = answer.error as { message?: string; code?: string; details?: unknown; hint?: unknown } | null
  return {
    data: answer.data,
    error: error && { message: error.message, code: error.code, details: error.details, hint: error.hint },
    count: answer.count,
    status: answer.status,
    statusText: answer.statusText,
  }
}

beforeAll(async () => {
  const repo = findRepoRoot()
  lb = await startTestServer({ migrationsDir: path.join(repo, 'supabase', 'migrations') })
  const me = await signedInClient(lb)
  const { data } = await me.client.auth.getSession()
  token = data.session!.access_token
  userId = data.session!.user.id
  const other = await signedInClient(lb)
  otherUserId = (await other.client.auth.getUser()).data.user!.id
}, 60_000)

afterAll(async () => {
  await lb?.stop()
})

describe('serverFetch under postgrest-js', () => {
  it('gives the same results as the global fetch for every kind of query the app makes', async () => {
    // Each step runs with one fetch, then the other, on rows of its own (titles carry the fetch's name).
    const steps = (db: ReturnType<typeof client>, tag: string) => [
      () => db.from('notes').insert({ user_id: userId, title: `${tag} one`, body: 'first' }).select('title, body, pinned').single(),
      () => db.from('notes').insert([{ user_id: userId, title: `${tag} two`, body: '' }, { user_id: userId, title: `${tag} three`, body: 'x' }]).select('title').order('title'),
      () => db.from('notes').select('title, body', { count: 'exact' }).like('title', `${tag} %`).order('title').range(0, 1),
      () => db.from('notes').select('*', { count: 'exact', head: true }).like('title', `${tag} %`),
      () => db.from('notes').select('title').eq('title', `${tag} one`).single(),
      () => db.from('notes').select('title').eq('title', `${tag} none`).maybeSingle(),
      () => db.from('notes').select('title').eq('title', `${tag} none`).single(),
      () => db.from('notes').select('title').like('title', `${tag} %`).single(),
      () => db.from('notes').update({ body: 'changed', pinned: true }).eq('title', `${tag} one`).select('title, body, pinned').maybeSingle(),
      () => db.from('notes').update({ body: 'nothing' }).eq('title', `${tag} none`),
      () => db.from('notes').select('no_such_column'),
      () => db.from('notes').select('title').eq('id', 'not-a-uuid'),
      () => db.from('notes').insert({ user_id: otherUserId, title: `${tag} not mine`, body: '' }),
      () => db.from('notes').insert({ user_id: userId, title: '', body: '' }),
      () => db.from('notes').delete().eq('title', `${tag} two`).select('title').maybeSingle(),
      () => db.from('notes').delete().like('title', `${tag} %`),
      () => db.from('notes').select('title', { count: 'exact' }).like('title', `${tag} %`),
    ]
    const viaFetch = steps(client(fetch), 'fetch')
    const viaServerFetch = steps(client(serverFetch), 'undici')
    for (let i = 0; i < viaFetch.length; i++) {
      const expected = seen(await viaFetch[i]!())
      const actual = seen(await viaServerFetch[i]!())
      const normalise = (x: ReturnType<typeof seen>) => JSON.parse(JSON.stringify(x).replaceAll('undici', 'fetch')) as unknown
      expect(normalise(actual), `step ${i + 1}`).toEqual(normalise(expected))
    }
  })

  it('an aborted query and an unreachable server are errors in the answer, as with fetch', async () => {
    const controller = new AbortController()
    controller.abort()
    const aborted = await client(serverFetch).from('notes').select('title').abortSignal(controller.signal)
    expect(aborted.data).toBeNull()
    expect(aborted.error).not.toBeNull()

    const down = new PostgrestClient<Database>('http://127.0.0.1:9/rest/v1', { fetch: serverFetch, retry: false })
    const answer = await down.from('notes').select('title')
    expect(answer.data).toBeNull()
    expect(answer.error?.message).toMatch(/ECONNREFUSED|fetch failed|connect/i)
  })
})
