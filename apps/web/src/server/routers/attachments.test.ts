// The attachments router through a real tRPC caller, as real users of a real localbase (PGlite, the product's own
// migrations, so the storage policies of ADR 037 decide): signed upload URLs the browser PUTs to, the list, signed
// download links, delete, names made storage-safe and unique, limits, another user, and a note's delete taking
// its files with it.
import path from 'node:path'

import type { SupabaseClient } from '@supabase/supabase-js'
import { StorageUnknownError } from '@supabase/storage-js'
import { TRPCError } from '@trpc/server'
import { findRepoRoot, type Localbase } from 'localbase'
import { serviceClient, signedInClient, startTestServer } from 'localbase/testing'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import { createCaller } from '../root'
import { storageError } from '../storage'
import { createInnerContext } from '../trpc'

const repo = findRepoRoot()
let lb: Localbase
let alice: { client: SupabaseClient; id: string }
let bob: { client: SupabaseClient; id: string }

async function user(): Promise<{ client: SupabaseClient; id: string }> {
  const { client } = await signedInClient(lb)
  const { data } = await client.auth.getUser()
  return { client, id: data.user!.id }
}

const as = (who: { client: SupabaseClient }) => createCaller(createInnerContext({ supabase: who.client }))

async function rejection(promise: Promise<unknown>): Promise<TRPCError> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  )
  expect(error).toBeInstanceOf(TRPCError)
  return error as TRPCError
}

/** What the browser does with an upload URL (without progress): PUT the bytes with their type. */
async function put(url: string, body: string | Uint8Array<ArrayBuffer>, type = 'text/plain') {
  return fetch(url, { method: 'PUT', headers: { 'content-type': type }, body })
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

describe('attachments', () => {
  it('uploads through signed URLs, lists name, size and type, downloads by a short-lived link, deletes', async () => {
    const note = await as(alice).notes.create({ title: 'With files' })
    const uploads = await as(alice).attachments.createUploadUrls({
      noteId: note.id,
      files: [
        { name: 'plan.txt', size: 4 },
        { name: 'data.bin', size: 3 },
      ],
    })
    expect(uploads.map((u) => u.name)).toEqual(['plan.txt', 'data.bin'])
    expect((await put(uploads[0]!.url, 'plan')).status).toBe(200)
    expect((await put(uploads[1]!.url, new Uint8Array([1, 2, 3]), 'application/octet-stream')).status).toBe(200)

    const listed = await as(alice).attachments.list({ noteId: note.id })
    expect(listed.map(({ name, size, type }) => ({ name, size, type }))).toEqual([
      { name: 'plan.txt', size: 4, type: 'text/plain' },
      { name: 'data.bin', size: 3, type: 'application/octet-stream' },
    ])
    expect(listed[0]!.createdAt).toBeInstanceOf(Date)

    const { url } = await as(alice).attachments.downloadUrl({ noteId: note.id, name: 'plan.txt' })
    const res = await fetch(url)
    expect(res.status).toBe(200)
    expect(await res.text()).toBe('plan')
    // Saved as an attachment, named by the URL's last segment: the stored name (ADR 068).
    expect(res.headers.get('content-disposition')).toBe('attachment;')
    expect(decodeURIComponent(new URL(url).pathname.split('/').pop()!)).toBe('plan.txt')

    expect(await as(alice).attachments.delete({ noteId: note.id, name: 'plan.txt' })).toEqual({ name: 'plan.txt', removed: true })
    expect((await as(alice).attachments.list({ noteId: note.id })).map((f) => f.name)).toEqual(['data.bin'])
    const again = await rejection(as(alice).attachments.delete({ noteId: note.id, name: 'plan.txt' }))
    expect([again.code, again.message]).toEqual(['NOT_FOUND', 'This file does not exist any more.'])
    // The clean-up after a cancelled upload: a file that never arrived is no error.
    expect(await as(alice).attachments.delete({ noteId: note.id, name: 'plan.txt', ifStored: true })).toEqual({ name: 'plan.txt', removed: false })
  })

  it('makes names storage-safe and unique among the note’s files; an upload URL works once', async () => {
    const note = await as(alice).notes.create({ title: 'Names' })
    const first = await as(alice).attachments.createUploadUrls({ noteId: note.id, files: [{ name: 'Résumé ✓.pdf', size: 1 }] })
    expect(first.map((u) => u.name)).toEqual(['Resume _.pdf'])
    expect((await put(first[0]!.url, 'x', 'application/pdf')).status).toBe(200)
    expect((await put(first[0]!.url, 'y', 'application/pdf')).status).not.toBe(200)
    const more = await as(alice).attachments.createUploadUrls({
      noteId: note.id,
      files: [
        { name: 'Résumé ✓.pdf', size: 1 },
        { name: 'Résumé ✓.pdf', size: 1 },
        { name: '報告.txt', size: 1 },
      ],
    })
    expect(more.map((u) => u.name)).toEqual(['Resume _ (2).pdf', 'Resume _ (3).pdf', 'file.txt'])
  })

  it('takes the names of the page’s uploads still on their way as taken', async () => {
    const note = await as(alice).notes.create({ title: 'Uploads crossing' })
    const first = await as(alice).attachments.createUploadUrls({ noteId: note.id, files: [{ name: 'scan.pdf', size: 1 }] })
    const second = await as(alice).attachments.createUploadUrls({
      noteId: note.id,
      files: [{ name: 'scan.pdf', size: 1 }],
      inProgress: first.map((u) => u.name),
    })
    expect(second.map((u) => u.name)).toEqual(['scan (2).pdf'])
    for (const u of [...first, ...second]) expect((await put(u.url, 'x')).status).toBe(200)
    expect((await as(alice).attachments.list({ noteId: note.id })).map((f) => f.name).sort()).toEqual(['scan (2).pdf', 'scan.pdf'])
  })

  it('picks free names from the files named like the new ones, without reading every file of the note', async () => {
    const note = await as(alice).notes.create({ title: 'Many files' })
    // 1,200 files as uploads leave them (rows without their bytes: only names are read here) and three namesakes.
    await lb.db.query(
      `insert into storage.objects (bucket_id, name, owner, owner_id, metadata, version)
       select 'attachments', $1 || '/' || f, $2::uuid, $2, '{"size": 1, "mimetype": "text/plain"}', gen_random_uuid()::text
         from (select 'file-' || i || '.txt' from generate_series(1, 1200) as i
               union all values ('scan.pdf'), ('scan (2).pdf'), ('SCAN (3).pdf')) as names (f)`,
      [`${alice.id}/${note.id}`, alice.id],
    )
    // Alice's client, counting the files storage's list answers.
    let listed = 0
    const storage = {
      from: (bucket: string) => {
        const api = alice.client.storage.from(bucket)
        const list = api.list.bind(api)
        api.list = async (...args: Parameters<typeof list>) => {
          const answer = await list(...args)
          listed += answer.data?.length ?? 0
          return answer
        }
        return api
      },
    }
    const counted = new Proxy(alice.client, { get: (client, key) => (key === 'storage' ? storage : Reflect.get(client, key, client)) })
    const urls = await createCaller(createInnerContext({ supabase: counted })).attachments.createUploadUrls({
      noteId: note.id,
      files: [
        { name: 'scan.pdf', size: 1 },
        { name: 'scan.pdf', size: 1 },
      ],
      inProgress: ['scan (4).pdf'],
    })
    // The same names as when every file was read: taken are scan.pdf, scan (2).pdf and the upload on its way (names
    // are case-sensitive: "SCAN (3).pdf" does not take "scan (3).pdf").
    expect(urls.map((u) => u.name)).toEqual(['scan (3).pdf', 'scan (5).pdf'])
    expect(listed).toBeLessThanOrEqual(3)
    // A batch of different names still sees every namesake of each.
    const mixed = await as(alice).attachments.createUploadUrls({ noteId: note.id, files: [{ name: 'file-7.txt', size: 1 }, { name: 'scan.pdf', size: 1 }] })
    expect(mixed.map((u) => u.name)).toEqual(['file-7 (2).txt', 'scan (3).pdf'])
  })

  it('refuses files over the limit and too many at once before any URL is made', async () => {
    const note = await as(alice).notes.create({ title: 'Limits' })
    const big = await rejection(as(alice).attachments.createUploadUrls({ noteId: note.id, files: [{ name: 'big.iso', size: 20_000_001 }] }))
    expect(big.code).toBe('BAD_REQUEST')
    expect(big.message).toContain('Files can be at most 20 MB.')
    const many = await rejection(
      as(alice).attachments.createUploadUrls({ noteId: note.id, files: Array.from({ length: 21 }, (_, i) => ({ name: `${i}.txt`, size: 1 })) }),
    )
    expect(many.message).toContain('Attach at most 20 files at once.')
    // The bucket's own limit holds for a URL used with more bytes than announced.
    const [upload] = await as(alice).attachments.createUploadUrls({ noteId: note.id, files: [{ name: 'liar.bin', size: 1 }] })
    const res = await put(upload!.url, new Uint8Array(20_000_001), 'application/octet-stream')
    expect(res.status).not.toBe(200)
    expect(((await res.json()) as { statusCode: string }).statusCode).toBe('413')
  })

  it("another user gets nothing of a note that is not theirs", async () => {
    const note = await as(alice).notes.create({ title: 'Private files' })
    const [upload] = await as(alice).attachments.createUploadUrls({ noteId: note.id, files: [{ name: 'secret.txt', size: 6 }] })
    expect((await put(upload!.url, 'secret')).status).toBe(200)

    expect(await as(bob).attachments.list({ noteId: note.id })).toEqual([])
    const up = await rejection(as(bob).attachments.createUploadUrls({ noteId: note.id, files: [{ name: 'x.txt', size: 1 }] }))
    expect([up.code, up.message]).toEqual(['NOT_FOUND', 'This note does not exist, or it is not yours.'])
    const down = await rejection(as(bob).attachments.downloadUrl({ noteId: note.id, name: 'secret.txt' }))
    expect(down.code).toBe('NOT_FOUND')
    const del = await rejection(as(bob).attachments.delete({ noteId: note.id, name: 'secret.txt' }))
    expect(del.code).toBe('NOT_FOUND')
    expect((await as(alice).attachments.list({ noteId: note.id })).map((f) => f.name)).toEqual(['secret.txt'])
  })

  it('a name with a slash is not a file name', async () => {
    const note = await as(alice).notes.create({ title: 'Slash' })
    const error = await rejection(as(alice).attachments.delete({ noteId: note.id, name: '../x' }))
    expect(error.code).toBe('BAD_REQUEST')
  })

  it('a name no stored file can have is NOT_FOUND (broken surrogate, RTL override, 1000 characters), a NUL or % not a name: never a 500', async () => {
    const note = await as(alice).notes.create({ title: 'Odd names' })
    for (const name of ['\ud800x', '\u202egnp.exe', 'x'.repeat(1000)]) {
      const down = await rejection(as(alice).attachments.downloadUrl({ noteId: note.id, name }))
      expect([name, down.code, down.message]).toEqual([name, 'NOT_FOUND', 'This file does not exist any more.'])
      const del = await rejection(as(alice).attachments.delete({ noteId: note.id, name }))
      expect([name, del.code]).toEqual([name, 'NOT_FOUND'])
      expect(await as(alice).attachments.delete({ noteId: note.id, name, ifStored: true })).toEqual({ name, removed: false })
    }
    for (const call of [
      as(alice).attachments.downloadUrl({ noteId: note.id, name: 'a\u0000b' }),
      as(alice).attachments.downloadUrl({ noteId: note.id, name: '%zz' }),
      as(alice).attachments.delete({ noteId: note.id, name: '%2F..%2Fx' }),
      as(alice).attachments.delete({ noteId: note.id, name: 'a\u0000b' }),
      as(alice).attachments.delete({ noteId: note.id, name: 'a\u0000b', ifStored: true }),
      as(alice).avatar.remove({ path: `${alice.id}/a\u0000b.png` }),
    ]) {
      expect((await rejection(call)).code).toBe('BAD_REQUEST')
    }
  })

  it('signed out: UNAUTHORIZED', async () => {
    const error = await rejection(createCaller(createInnerContext()).attachments.list({ noteId: crypto.randomUUID() }))
    expect(error.code).toBe('UNAUTHORIZED')
  })
})

describe('notes.delete with attachments', () => {
  it('removes the files for good; Undo brings back the note without them', async () => {
    const note = await as(alice).notes.create({ title: 'Goes with its files' })
    const uploads = await as(alice).attachments.createUploadUrls({
      noteId: note.id,
      files: [
        { name: 'a.txt', size: 1 },
        { name: 'b.txt', size: 1 },
      ],
    })
    for (const u of uploads) expect((await put(u.url, 'x')).status).toBe(200)
    const deleted = await as(alice).notes.delete({ id: note.id })
    expect(deleted.attachmentsRemoved).toBe(2)
    const stored = await lb.db.query<{ n: number }>(`select count(*)::int as n from storage.objects where bucket_id = 'attachments' and name like $1`, [
      `${alice.id}/${note.id}/%`,
    ])
    expect(stored.rows[0]!.n).toBe(0)
    const restored = await as(alice).notes.restore(deleted)
    expect(restored.id).toBe(note.id)
    expect(await as(alice).attachments.list({ noteId: note.id })).toEqual([])
  })

  it('newest: the newest files first, as many as asked for, and whether there are more; count: all of them; nothing of another user', async () => {
    const note = await as(alice).notes.create({ title: 'Newest first' })
    const storage = alice.client.storage.from('attachments')
    for (const name of ['one.txt', 'two.txt', 'three.txt']) expect((await storage.upload(`${alice.id}/${note.id}/${name}`, name)).error).toBeNull()
    const two = await as(alice).attachments.newest({ noteId: note.id, limit: 2 })
    expect(two.files.map((f) => f.name)).toEqual(['three.txt', 'two.txt'])
    expect(two.more).toBe(true)
    expect(two.files[0]).toMatchObject({ size: 9, type: 'text/plain;charset=UTF-8' })
    expect(two.files[0]!.createdAt).toBeInstanceOf(Date)
    const all = await as(alice).attachments.newest({ noteId: note.id, limit: 100 })
    expect(all.files.map((f) => f.name)).toEqual(['three.txt', 'two.txt', 'one.txt'])
    expect(all.more).toBe(false)
    expect(await as(alice).attachments.count({ noteId: note.id })).toEqual({ count: 3 })
    expect(await as(bob).attachments.newest({ noteId: note.id, limit: 100 })).toEqual({ files: [], more: false })
    expect(await as(bob).attachments.count({ noteId: note.id })).toEqual({ count: 0 })
  })

  it('a note with more files than one storage removal takes (1,000) is deleted, and every file with it', async () => {
    const note = await as(alice).notes.create({ title: 'A thousand and five files' })
    const FILES = 1005
    const storage = alice.client.storage.from('attachments')
    for (let i = 0; i < FILES; i += 25) {
      const batch = Array.from({ length: Math.min(25, FILES - i) }, (_, j) => storage.upload(`${alice.id}/${note.id}/f${i + j}.txt`, 'x'))
      for (const { error } of await Promise.all(batch)) expect(error).toBeNull()
    }
    expect(await as(alice).attachments.list({ noteId: note.id })).toHaveLength(FILES)
    // The panel's list: the newest N, read in slices of 1,000 when N is larger, and whether there are more (ADR 157).
    const newest = await as(alice).attachments.newest({ noteId: note.id, limit: FILES - 1 })
    expect(newest.files).toHaveLength(FILES - 1)
    expect(newest.more).toBe(true)
    expect(new Set(newest.files.map((f) => f.name)).size).toBe(FILES - 1)
    expect(await as(alice).attachments.newest({ noteId: note.id, limit: FILES })).toMatchObject({ more: false })
    expect(await as(alice).attachments.count({ noteId: note.id })).toEqual({ count: FILES })
    const deleted = await as(alice).notes.delete({ id: note.id })
    expect(deleted.attachmentsRemoved).toBe(FILES)
    const stored = await lb.db.query<{ n: number }>(`select count(*)::int as n from storage.objects where bucket_id = 'attachments' and name like $1`, [
      `${alice.id}/${note.id}/%`,
    ])
    expect(stored.rows[0]!.n).toBe(0)
    expect((await rejection(as(alice).notes.get({ id: note.id }))).code).toBe('NOT_FOUND')
  }, 60_000)

  it('a note without files is deleted as before (0 removed)', async () => {
    const note = await as(alice).notes.create({ title: 'Plain' })
    expect((await as(alice).notes.delete({ id: note.id })).attachmentsRemoved).toBe(0)
  })
})

describe('storageError', () => {
  it('a network failure is SERVICE_UNAVAILABLE, not a missing note', () => {
    const error = storageError(new StorageUnknownError('fetch failed', new TypeError('fetch failed')), 'gone')
    expect(error.code).toBe('SERVICE_UNAVAILABLE')
  })
})

describe('avatar', () => {
  const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 7])

  it('a new key per picture under the user’s folder; public once uploaded; the user removes it, nobody else can', async () => {
    const first = await as(alice).avatar.createUploadUrl({ type: 'image/png', size: png.length })
    expect(first.path).toMatch(new RegExp(`^${alice.id}/[0-9a-z]+-[0-9a-f]{8}\\.png$`))
    expect((await put(first.url, png, 'image/png')).status).toBe(200)
    const second = await as(alice).avatar.createUploadUrl({ type: 'image/jpeg', size: 10 })
    expect(second.path).not.toBe(first.path)
    expect(second.path.endsWith('.jpg')).toBe(true)
    const publicUrl = `${lb.url}/storage/v1/object/public/avatars/${first.path}`
    const res = await fetch(publicUrl)
    expect([res.status, res.headers.get('content-type')]).toEqual([200, 'image/png'])

    const notTheirs = await rejection(as(bob).avatar.remove({ path: first.path }))
    expect(notTheirs.code).toBe('BAD_REQUEST')
    expect(await as(alice).avatar.remove({ path: first.path })).toEqual({ removed: 1 })
    expect((await fetch(publicUrl)).status).not.toBe(200)
  })

  it('gives no upload URL to a user deleted meanwhile (their access token still trusted): their session ended', async () => {
    // The picture would be stored under a user who no longer exists, and never saved to their profile (ADR 031).
    const gone = await user()
    expect(await as(gone).notes.list({})).toMatchObject({ total: 0 })
    const { error } = await serviceClient(lb).auth.admin.deleteUser(gone.id)
    expect(error).toBeNull()
    const refused = await rejection(as(gone).avatar.createUploadUrl({ type: 'image/png', size: png.length }))
    expect(refused).toMatchObject({ code: 'UNAUTHORIZED', message: 'Your session ended. Sign in again.' })
  })

  it('a wrong type or a picture over 2 MB is refused before any URL, and the bucket refuses them too', async () => {
    const type = await rejection(as(alice).avatar.createUploadUrl({ type: 'image/svg+xml' as 'image/png', size: 10 }))
    expect(type.message).toContain('A picture must be a PNG, JPEG, WebP or GIF image.')
    const size = await rejection(as(alice).avatar.createUploadUrl({ type: 'image/png', size: 2_000_001 }))
    expect(size.message).toContain('A picture can be at most 2 MB.')
    const { url } = await as(alice).avatar.createUploadUrl({ type: 'image/png', size: 10 })
    const wrongType = await put(url, 'not a picture', 'text/html')
    expect(((await wrongType.json()) as { statusCode: string }).statusCode).toBe('415')
    const tooBig = await put(url, new Uint8Array(2_000_001), 'image/png')
    expect(((await tooBig.json()) as { statusCode: string }).statusCode).toBe('413')
  })
})
