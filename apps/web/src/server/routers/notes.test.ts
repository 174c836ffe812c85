// The notes router through a real tRPC caller, as two real users of a real localbase (PGlite, the product's own
// migrations): isolation, validation, not-found, pagination bounds, sorting, search, undo, AAL2, backend down.
import path from 'node:path'

import { createClient, type SupabaseClient } from '@supabase/supabase-js'
import { TRPCError } from '@trpc/server'
import { findRepoRoot, type Localbase } from 'localbase'
import { anonClient, serviceClient, signedInClient, startTestServer, totpCode } from 'localbase/testing'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import { createCaller } from '../root'
import { SecondFactorRequired } from '../second-factor'
import { createInnerContext } from '../trpc'
import { excerptOf, notesError } from './notes'

const repo = findRepoRoot()
let lb: Localbase
let alice: { client: SupabaseClient; id: string }
let bob: { client: SupabaseClient; id: string }

async function user(): Promise<{ client: SupabaseClient; id: string }> {
  const { client } = await signedInClient(lb)
  const { data } = await client.auth.getUser()
  return { client, id: data.user!.id }
}

const as = (who: { client: SupabaseClient }) => createCaller(createInnerContext({ supabase: who.client })).notes

/** Inserts notes for a user with the service key (like the browser tests' seeding), oldest first. */
async function seedNotes(userId: string, titles: string[], start = Date.UTC(2026, 0, 1)) {
  const rows = titles.map((title, i) => ({
    user_id: userId,
    title,
    body: `Body of ${title}`,
    created_at: new Date(start + i * 60_000).toISOString(),
    updated_at: new Date(start + i * 60_000).toISOString(),
  }))
  const { error } = await serviceClient(lb).from('notes').insert(rows)
  if (error) throw error
}

async function rejection(promise: Promise<unknown>): Promise<TRPCError> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  )
  expect(error).toBeInstanceOf(TRPCError)
  return error as TRPCError
}

beforeAll(async () => {
  lb = await startTestServer({
    migrationsDir: path.join(repo, 'supabase', 'migrations'),
    seedFile: path.join(repo, 'supabase', 'seed.sql'),
  })
  alice = await user()
  bob = await user()
}, 60_000)

afterAll(async () => {
  await lb?.stop()
})

describe('notes.list', () => {
  let carol: { client: SupabaseClient; id: string }
  beforeAll(async () => {
    carol = await user()
    await seedNotes(carol.id, Array.from({ length: 45 }, (_, i) => `Note ${String(i + 1).padStart(2, '0')}`))
  })

  it('pages 45 notes by 20 with the exact total, newest change first by default', async () => {
    const first = await as(carol).list({})
    expect(first).toMatchObject({ total: 45, page: 1, pageSize: 20 })
    expect(first.items.map((n) => n.title).slice(0, 3)).toEqual(['Note 45', 'Note 44', 'Note 43'])
    const third = await as(carol).list({ page: 3 })
    expect(third.items.map((n) => n.title)).toEqual(['Note 05', 'Note 04', 'Note 03', 'Note 02', 'Note 01'])
    expect(third.total).toBe(45)
    const ids = new Set([...first.items, ...(await as(carol).list({ page: 2 })).items, ...third.items].map((n) => n.id))
    expect(ids.size).toBe(45)
  })

  it('answers a page past the end with no items and the real total (the client goes back)', async () => {
    expect(await as(carol).list({ page: 4 })).toEqual({ items: [], total: 45, page: 4, pageSize: 20 })
  })

  it('refuses page sizes over 100, page 0 and unknown sorts with BAD_REQUEST', async () => {
    expect((await rejection(as(carol).list({ pageSize: 101 }))).code).toBe('BAD_REQUEST')
    expect((await rejection(as(carol).list({ page: 0 }))).code).toBe('BAD_REQUEST')
    expect((await rejection(as(carol).list({ sort: 'user_id' as 'title' }))).code).toBe('BAD_REQUEST')
    expect((await as(carol).list({ pageSize: 100 })).items).toHaveLength(45)
  })

  it('sorts by each column both ways, pinned notes first every time', async () => {
    const dave = await user()
    await seedNotes(dave.id, ['banana', 'Apple', 'cherry', 'apricot'])
    const t = (list: { items: { title: string }[] }) => list.items.map((n) => n.title)
    expect(t(await as(dave).list({ sort: 'title' }))).toEqual(['Apple', 'apricot', 'banana', 'cherry'])
    expect(t(await as(dave).list({ sort: 'title', dir: 'desc' }))).toEqual(['cherry', 'banana', 'apricot', 'Apple'])
    expect(t(await as(dave).list({ sort: 'created_at', dir: 'asc' }))).toEqual(['banana', 'Apple', 'cherry', 'apricot'])
    expect(t(await as(dave).list({ sort: 'created_at' }))).toEqual(['apricot', 'cherry', 'Apple', 'banana'])
    const cherry = (await as(dave).list({ sort: 'title' })).items.find((n) => n.title === 'cherry')!
    const pinned = await as(dave).setPinned({ id: cherry.id, pinned: true })
    expect(pinned.pinned).toBe(true)
    expect(pinned.updatedAt.getTime()).toBe(cherry.updatedAt.getTime()) // pinning is not an edit
    expect(t(await as(dave).list({ sort: 'title' }))).toEqual(['cherry', 'Apple', 'apricot', 'banana'])
    expect(t(await as(dave).list({ sort: 'updated_at', dir: 'asc' }))[0]).toBe('cherry')
  })

  it('searches titles case-insensitively, with %, _ and * matched literally', async () => {
    const erin = await user()
    await seedNotes(erin.id, ['100% done', '100 percent', 'snake_case', 'snakeXcase', 'Groceries', 'grocery list', 'a*b', 'azzb'])
    const t = async (q: string) => (await as(erin).list({ q, sort: 'title' })).items.map((n) => n.title)
    expect(await t('GROCER')).toEqual(['Groceries', 'grocery list'])
    expect(await t('100%')).toEqual(['100% done'])
    expect(await t('snake_')).toEqual(['snake_case'])
    expect(await t('a*b')).toEqual(['a*b'])
    expect(await t("o'; drop table notes; --")).toEqual([])
    const counted = await as(erin).list({ q: 'grocer', pageSize: 1 })
    expect(counted).toMatchObject({ total: 2 })
    expect(counted.items).toHaveLength(1)
  })

  it('gives a list excerpt, not the whole body', async () => {
    const created = await as(alice).create({ title: 'Long one', body: `${'word '.repeat(400)}end` })
    const item = (await as(alice).list({ q: 'Long one' })).items[0]!
    expect(item.id).toBe(created.id)
    expect(item.excerpt!.length).toBeLessThanOrEqual(160)
    expect(item.excerpt!.endsWith('…')).toBe(true)
    expect(item).not.toHaveProperty('body')
  })

  it('gives the excerpt of the whole body from the stored excerpt source, whatever the whitespace', async () => {
    const { client } = await signedInClient(lb)
    const zs = '\u3000'
    const bodies = [
      `${' '.repeat(5000)}\n\tstarts late ${'x'.repeat(300)}`,
      `${'word\u00a0\u2028'.repeat(3000)}end`,
      `${'a '.repeat(79)}b${zs.repeat(2000)}c`,
      `${'\u{1F642}'.repeat(159)} ${'\u{1F642}'.repeat(3)}`,
      `zero\u200bwidth is not a space ${'\ufeff'.repeat(400)} after`,
      `${'y'.repeat(160)}`,
      `${'y'.repeat(161)}`,
      `${'y'.repeat(159)}${' \r\n\v\f'.repeat(500)}z`,
      '   \n\t  ',
    ]
    const caller = as({ client })
    for (const [i, body] of bodies.entries()) await caller.create({ title: `Spaces ${i}`, body })
    const { items } = await caller.list({ sort: 'title', pageSize: 20 })
    const byTitle = new Map(items.map((item) => [item.title, item.excerpt]))
    for (const [i, body] of bodies.entries()) expect([i, byTitle.get(`Spaces ${i}`)]).toEqual([i, excerptOf(body.trim() === '' ? null : body)])
  })

  it('reads at most a few hundred characters of each note for a list page, not the bodies', async () => {
    const { email, password } = await signedInClient(lb)
    let listBytes = 0
    const client = createClient(lb.url, lb.anonKey, {
      auth: { persistSession: false, autoRefreshToken: false, detectSessionInUrl: false },
      global: {
        fetch: async (input, init) => {
          const res = await fetch(input, init)
          if (String(input instanceof Request ? input.url : input).includes('/rest/v1/notes?')) listBytes += (await res.clone().arrayBuffer()).byteLength
          return res
        },
      },
    })
    await client.auth.signInWithPassword({ email, password })
    const caller = as({ client })
    for (let i = 0; i < 20; i++) await caller.create({ title: `Long ${i}`, body: `${i} ${'lorem ipsum '.repeat(1666)}` })
    listBytes = 0
    const { items } = await caller.list({ pageSize: 20 })
    expect(items).toHaveLength(20)
    expect(items[0]!.excerpt).toMatch(/^\d+ lorem ipsum .*…$/)
    // 20 bodies of ~20,000 characters were ~400 kB; 20 rows of ≤ 200 characters and their other columns are < 10 kB
    expect(listBytes).toBeGreaterThan(0)
    expect(listBytes).toBeLessThan(10_000)
  })
})

describe('notes: create, get, update, delete, restore', () => {
  it('creates a note for the caller, trimmed, empty body stored as null', async () => {
    const note = await as(alice).create({ title: '  Hello  ', body: '   ', pinned: true })
    expect(note).toMatchObject({ title: 'Hello', body: null, pinned: true })
    expect(note.createdAt).toBeInstanceOf(Date)
    const { data } = await serviceClient(lb).from('notes').select('user_id').eq('id', note.id).single()
    expect(data?.user_id).toBe(alice.id)
    expect(await as(alice).get({ id: note.id })).toEqual(note)
  })

  it('refuses invalid input with BAD_REQUEST and field errors, storing nothing', async () => {
    const before = (await as(alice).list({})).total
    const empty = await rejection(as(alice).create({ title: '   ' }))
    expect(empty.code).toBe('BAD_REQUEST')
    expect(JSON.stringify(empty.cause)).toContain('Give the note a title.')
    expect((await rejection(as(alice).create({ title: 'x'.repeat(201) }))).code).toBe('BAD_REQUEST')
    expect((await as(alice).create({ title: '🙂'.repeat(200) })).title).toHaveLength(400) // 200 characters
    expect((await rejection(as(alice).create({ title: 'ok', body: 'x'.repeat(20_001) }))).code).toBe('BAD_REQUEST')
    expect((await rejection(as(alice).get({ id: 'not-a-uuid' }))).code).toBe('BAD_REQUEST')
    // text PostgreSQL cannot store, or a title over two lines: a field message, not a server error
    for (const [input, message] of [
      [{ title: 'a\u0000b' }, 'cannot be stored'],
      [{ title: 'ok', body: 'x\u0000' }, 'cannot be stored'],
      [{ title: 'x\uD800y' }, 'cannot be stored'],
      [{ title: 'line\nbreak' }, 'control characters'],
    ] as const) {
      const refused = await rejection(as(alice).create(input))
      expect(refused.code, JSON.stringify(input)).toBe('BAD_REQUEST')
      expect(JSON.stringify(refused.cause)).toContain(message)
    }
    expect((await rejection(as(alice).list({ q: 'a\u0000' }))).code).toBe('BAD_REQUEST')
    expect((await as(alice).create({ title: 'Body with a tab', body: 'line 1\nline 2\t\u{1F642}' })).body).toBe('line 1\nline 2\t\u{1F642}')
    expect((await as(alice).list({})).total).toBe(before + 2)
  })

  it('updates title and body, moving updatedAt; NOT_FOUND for an id that does not exist', async () => {
    const note = await as(alice).create({ title: 'Draft', body: 'v1' })
    const updated = await as(alice).update({ id: note.id, title: 'Final', body: 'v2' })
    expect(updated).toMatchObject({ id: note.id, title: 'Final', body: 'v2', createdAt: note.createdAt })
    expect(updated.updatedAt.getTime()).toBeGreaterThan(note.updatedAt.getTime())
    const missing = '00000000-0000-4000-8000-000000000000'
    for (const call of [
      () => as(alice).get({ id: missing }),
      () => as(alice).update({ id: missing, title: 'x' }),
      () => as(alice).setPinned({ id: missing, pinned: true }),
      () => as(alice).delete({ id: missing }),
    ])
      expect((await rejection(call())).code).toBe('NOT_FOUND')
  })

  it('saves over the version the edits are based on only: a newer one is a CONFLICT and stays as stored', async () => {
    const note = await as(alice).create({ title: 'Shared', body: 'v1' })
    // Device A saves on the version both devices loaded.
    const fromA = await as(alice).update({ id: note.id, title: 'Shared', body: 'from A', baseUpdatedAt: note.updatedAt })
    expect(fromA.body).toBe('from A')
    // Device B, which never heard of A's save, saves on the same version: refused, A's text stays.
    const refused = await rejection(as(alice).update({ id: note.id, title: 'Shared', body: 'from B', baseUpdatedAt: note.updatedAt }))
    expect(refused.code).toBe('CONFLICT')
    expect(refused.message).toMatch(/changed in another tab or device/)
    expect(await as(alice).get({ id: note.id })).toEqual(fromA)
    // B, having seen A's version, saves on it: stored.
    const fromB = await as(alice).update({ id: note.id, title: 'Shared', body: 'from B', baseUpdatedAt: fromA.updatedAt })
    expect(fromB.body).toBe('from B')
    // A pin is not an edit: it moves no version, a save based on the version before it goes through.
    await as(alice).setPinned({ id: note.id, pinned: true })
    expect((await as(alice).update({ id: note.id, title: 'Shared', body: 'after the pin', baseUpdatedAt: fromB.updatedAt })).body).toBe('after the pin')
    // Without a base the save replaces whatever is stored (callers that do not edit text).
    expect((await as(alice).update({ id: note.id, title: 'Shared', body: 'no base' })).body).toBe('no base')
  })

  it('lets only one of two saves crossing on the same version through', async () => {
    const note = await as(alice).create({ title: 'Race', body: 'v1' })
    const results = await Promise.allSettled(
      ['one', 'two'].map((body) => as(alice).update({ id: note.id, title: 'Race', body, baseUpdatedAt: note.updatedAt })),
    )
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1)
    const rejected = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected')
    expect(rejected.map((r) => (r.reason as TRPCError).code)).toEqual(['CONFLICT'])
    const saved = (results.find((r) => r.status === 'fulfilled') as PromiseFulfilledResult<{ body: string | null }>).value
    expect((await as(alice).get({ id: note.id })).body).toBe(saved.body)
  })

  it('refuses a base version no note can have (the latest time a Date holds, year 275760) with BAD_REQUEST, not a 500 "Invalid time value"', async () => {
    const note = await as(alice).create({ title: 'Far future', body: 'v1' })
    for (const baseUpdatedAt of [new Date(8.64e15), new Date(8.64e15 - 1), new Date(Date.UTC(10000, 0, 1))]) {
      const error = await rejection(as(alice).update({ id: note.id, title: 'x', baseUpdatedAt }))
      expect([baseUpdatedAt.getTime(), error.code]).toEqual([baseUpdatedAt.getTime(), 'BAD_REQUEST'])
    }
    expect((await as(alice).get({ id: note.id })).title).toBe('Far future')
  })

  it('keeps NOT_FOUND for a based save of a note that is gone or not the caller\'s', async () => {
    const note = await as(alice).create({ title: 'Mine', body: 'v1' })
    expect((await rejection(as(bob).update({ id: note.id, title: 'x', baseUpdatedAt: note.updatedAt }))).code).toBe('NOT_FOUND')
    await as(alice).delete({ id: note.id })
    expect((await rejection(as(alice).update({ id: note.id, title: 'x', baseUpdatedAt: note.updatedAt }))).code).toBe('NOT_FOUND')
  })

  it('deletes a note and restores it as it was (same id and times); a second restore is a CONFLICT', async () => {
    const note = await as(alice).create({ title: 'Keep me', body: 'important', pinned: true })
    const deleted = await as(alice).delete({ id: note.id })
    expect(deleted).toEqual({ ...note, attachmentsRemoved: 0 })
    expect((await rejection(as(alice).get({ id: note.id }))).code).toBe('NOT_FOUND')
    expect(await as(alice).restore(deleted)).toEqual(note)
    expect(await as(alice).get({ id: note.id })).toEqual(note)
    expect((await rejection(as(alice).restore(deleted))).code).toBe('CONFLICT')
  })
})

describe('isolation between users (RLS, decided by PostgreSQL)', () => {
  it("keeps Alice's notes invisible and unchangeable for Bob", async () => {
    const note = await as(alice).create({ title: 'Alice only', body: 'secret' })
    expect((await as(bob).list({ q: 'Alice only' })).total).toBe(0)
    expect((await rejection(as(bob).get({ id: note.id }))).code).toBe('NOT_FOUND')
    expect((await rejection(as(bob).update({ id: note.id, title: 'pwned' }))).code).toBe('NOT_FOUND')
    expect((await rejection(as(bob).setPinned({ id: note.id, pinned: true }))).code).toBe('NOT_FOUND')
    expect((await rejection(as(bob).delete({ id: note.id }))).code).toBe('NOT_FOUND')
    // Restoring someone else's note id as your own must not take it over.
    expect((await rejection(as(bob).restore({ ...note, title: 'mine now' }))).code).toBe('CONFLICT')
    expect(await as(alice).get({ id: note.id })).toEqual(note)
  })

  it('refuses signed-out callers with UNAUTHORIZED, and the anon key reads nothing directly', async () => {
    const signedOut = createCaller(createInnerContext({ supabase: anonClient(lb) })).notes
    expect((await rejection(signedOut.list({}))).code).toBe('UNAUTHORIZED')
    expect((await rejection(signedOut.create({ title: 'x' }))).code).toBe('UNAUTHORIZED')
    const { data } = await anonClient(lb).from('notes').select('id')
    expect(data ?? []).toEqual([])
  })

  it('tells a user deleted meanwhile (their access token still valid) that the session ended, not "try again"', async () => {
    // The server verified this token a moment ago (no verified factor): it trusts its signature for a while (ADR 031),
    // so the deletion shows only when the database refuses a row for a user who no longer exists.
    const gone = await user()
    expect(await as(gone).list({})).toMatchObject({ items: [], total: 0 })
    const { error } = await serviceClient(lb).auth.admin.deleteUser(gone.id)
    expect(error).toBeNull()
    for (const call of [as(gone).create({ title: 'after deletion' }), as(gone).restore({ id: crypto.randomUUID(), title: 't', body: null, pinned: false, createdAt: new Date(), updatedAt: new Date() })]) {
      expect(await rejection(call)).toMatchObject({ code: 'UNAUTHORIZED', message: 'Your session ended. Sign in again.' })
    }
  })

  it('lets the seeded demo user sign in and see the 30 demo notes, 3 of them pinned first', async () => {
    const demo = anonClient(lb)
    const { error } = await demo.auth.signInWithPassword({ email: 'demo@example.com', password: 'foyer-demo-2026' })
    expect(error).toBeNull()
    const page = await as({ client: demo }).list({ pageSize: 100 })
    expect(page.total).toBe(30)
    expect(page.items.slice(0, 3).every((n) => n.pinned)).toBe(true)
    expect(page.items.slice(3).some((n) => n.pinned)).toBe(false)
  })

  it('refuses an aal1 session of a user with a verified factor (FORBIDDEN), and lets the aal2 session in', async () => {
    const { client, email, password } = await signedInClient(lb)
    const enrolled = await client.auth.mfa.enroll({ factorType: 'totp' })
    if (enrolled.error) throw enrolled.error
    const secret = enrolled.data.totp.secret
    const verified = await client.auth.mfa.challengeAndVerify({ factorId: enrolled.data.id, code: totpCode(secret) })
    expect(verified.error).toBeNull()
    await as({ client }).create({ title: 'Behind two factors' })

    const aal1 = anonClient(lb)
    await aal1.auth.signInWithPassword({ email, password })
    const refused = await rejection(as({ client: aal1 }).list({}))
    expect(refused.code).toBe('FORBIDDEN')
    expect(refused.cause, 'recognisable as "finish two-factor sign-in"').toBeInstanceOf(SecondFactorRequired)
    expect((await as({ client }).list({})).total).toBe(1)
  })
})

describe('backend unreachable', () => {
  it('answers SERVICE_UNAVAILABLE with a readable message, not "sign in"', async () => {
    const other = await startTestServer({ migrationsDir: path.join(repo, 'supabase', 'migrations') })
    const { client } = await signedInClient(other)
    await other.stop()
    const error = await rejection(as({ client }).list({}))
    expect(error.code).toBe('SERVICE_UNAVAILABLE')
    expect(error.message).toMatch(/can't reach the server/i)
    // It starts a server of its own: on a loaded machine that alone can take longer than the 5 s default.
  }, 30_000)
})

describe('database errors as readable tRPC errors', () => {
  const pg = (code: string, message = '') => ({ code, message, details: '', hint: '', name: 'PostgrestError' }) as never
  it('maps constraint, key, policy, JWT and network failures', () => {
    expect(notesError(pg('23514', 'new row violates check constraint "notes_title_length"'))).toMatchObject({
      code: 'BAD_REQUEST',
      message: 'The title must be 1 to 200 characters.',
    })
    expect(notesError(pg('23514', 'violates check constraint "notes_body_length"')).message).toMatch(/20,000/)
    expect(notesError(pg('23505')).code).toBe('CONFLICT')
    expect(notesError(pg('42501')).code).toBe('FORBIDDEN')
    expect(notesError(pg('42501')).cause, 'the AAL2 policy: finish two-factor sign-in').toBeInstanceOf(SecondFactorRequired)
    expect(notesError(pg('PGRST116')).code).toBe('NOT_FOUND')
    expect(notesError(pg('PGRST303')).code).toBe('UNAUTHORIZED')
    expect(notesError(pg('', 'TypeError: fetch failed'), 0).code).toBe('SERVICE_UNAVAILABLE')
    expect(notesError(pg('XX000', 'internal detail that must not leak')).message).not.toMatch(/internal detail/)
  })
})
