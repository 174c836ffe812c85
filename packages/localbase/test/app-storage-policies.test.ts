// The app's storage migration (supabase/migrations/20261124120000_storage_buckets.sql, ADR 037) under localbase,
// with the official supabase-js: the public `avatars` bucket lets a user write only `<their id>/<file>`, images
// only, 2 MB at most; the private `attachments` bucket follows the note: `<user id>/<note id>/<file>` with a note
// of the caller that exists, and the AAL2 rule of docs/database.md. Two users, a guest and anon.
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import type { SupabaseClient } from '@supabase/supabase-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { anonClient, emptySeedFile, serviceClient, signedInClient, startTestServer, totpCode, type Localbase } from './helpers.ts';

const productMigrationsDir = fileURLToPath(new URL('../../../supabase/migrations/', import.meta.url));

let lb: Localbase;
let alice: SupabaseClient;
let bob: SupabaseClient;
let anon: SupabaseClient;
let aliceId: string;
let bobId: string;
let aliceNote: string;
let bobNote: string;

const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3, 4]);

async function newNote(client: SupabaseClient, title: string): Promise<string> {
  const { data, error } = await client.from('notes').insert({ title }).select('id').single();
  if (error) throw error;
  return (data as { id: string }).id;
}

beforeAll(async () => {
  lb = await startTestServer({ migrationsDir: productMigrationsDir, seedFile: emptySeedFile, enableAnonymousSignIns: true });
  ({ client: alice } = await signedInClient(lb));
  ({ client: bob } = await signedInClient(lb));
  anon = anonClient(lb);
  aliceId = (await alice.auth.getUser()).data.user!.id;
  bobId = (await bob.auth.getUser()).data.user!.id;
  aliceNote = await newNote(alice, 'Alice with files');
  bobNote = await newNote(bob, 'Bob with files');
});

afterAll(async () => {
  await lb?.stop();
});

describe('the buckets', () => {
  it('exist once with their limits, even when the migration meets them already (on conflict do nothing)', async () => {
    const { data } = await serviceClient(lb).storage.getBucket('avatars');
    expect(data).toMatchObject({ public: true, file_size_limit: 2000000, allowed_mime_types: ['image/png', 'image/jpeg', 'image/webp', 'image/gif'] });
    const attachments = await serviceClient(lb).storage.getBucket('attachments');
    expect(attachments.data).toMatchObject({ public: false, file_size_limit: 20000000, allowed_mime_types: null });
  });
});

describe('avatars', () => {
  it('a user uploads, replaces and removes a picture in their own folder; anyone reads it by its public URL', async () => {
    const key = `${aliceId}/pic.png`;
    expect((await alice.storage.from('avatars').upload(key, png, { contentType: 'image/png' })).error).toBeNull();
    expect((await alice.storage.from('avatars').upload(key, png, { contentType: 'image/png', upsert: true })).error).toBeNull();
    const url = anon.storage.from('avatars').getPublicUrl(key).data.publicUrl;
    const res = await fetch(url);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('image/png');
    expect(new Uint8Array(await res.arrayBuffer())).toEqual(png);
    const removed = await alice.storage.from('avatars').remove([key]);
    expect(removed.data).toHaveLength(1);
    expect((await fetch(url)).status).not.toBe(200);
  });

  it("another user's folder, a sub-folder and anon are refused by RLS", async () => {
    const theirs = await bob.storage.from('avatars').upload(`${aliceId}/evil.png`, png, { contentType: 'image/png' });
    expect(theirs.error).toMatchObject({ statusCode: '403', message: 'new row violates row-level security policy' });
    const nested = await alice.storage.from('avatars').upload(`${aliceId}/a/b.png`, png, { contentType: 'image/png' });
    expect(nested.error).toMatchObject({ statusCode: '403' });
    const root = await alice.storage.from('avatars').upload(`pic.png`, png, { contentType: 'image/png' });
    expect(root.error).toMatchObject({ statusCode: '403' });
    const byAnon = await anon.storage.from('avatars').upload(`${aliceId}/anon.png`, png, { contentType: 'image/png' });
    expect(byAnon.error).toMatchObject({ statusCode: '403' });
    const signed = await bob.storage.from('avatars').createSignedUploadUrl(`${aliceId}/signed.png`);
    expect(signed.error).toMatchObject({ statusCode: '403' });
  });

  it("bob cannot remove or overwrite alice's picture", async () => {
    const key = `${aliceId}/keep.png`;
    expect((await alice.storage.from('avatars').upload(key, png, { contentType: 'image/png' })).error).toBeNull();
    expect((await bob.storage.from('avatars').remove([key])).data).toEqual([]);
    const over = await bob.storage.from('avatars').upload(key, new Uint8Array([1]), { contentType: 'image/png', upsert: true });
    expect(over.error).toMatchObject({ statusCode: '403' });
    const res = await fetch(anon.storage.from('avatars').getPublicUrl(key).data.publicUrl);
    expect(new Uint8Array(await res.arrayBuffer())).toEqual(png);
  });

  it('a file of another type or over 2 MB is refused by the bucket (415 / 413)', async () => {
    const text = await alice.storage.from('avatars').upload(`${aliceId}/a.txt`, 'hello', { contentType: 'text/plain' });
    expect(text.error).toMatchObject({ statusCode: '415', message: 'mime type text/plain is not supported' });
    const big = await alice.storage.from('avatars').upload(`${aliceId}/big.png`, new Uint8Array(2_000_001), { contentType: 'image/png' });
    expect(big.error).toMatchObject({ statusCode: '413', message: 'The object exceeded the maximum allowed size' });
  });

  it('a guest (anonymous sign-in) may have a picture and attachments too', async () => {
    const guest = anonClient(lb);
    const signedIn = await guest.auth.signInAnonymously();
    expect(signedIn.error).toBeNull();
    const id = signedIn.data.user!.id;
    expect((await guest.storage.from('avatars').upload(`${id}/g.png`, png, { contentType: 'image/png' })).error).toBeNull();
    // …and attach files to their notes, as they write notes.
    const note = await newNote(guest, 'Guest note');
    expect((await guest.storage.from('attachments').upload(`${id}/${note}/g.txt`, 'guest', { contentType: 'text/plain' })).error).toBeNull();
    expect((await bob.storage.from('attachments').list(`${id}/${note}`)).data).toEqual([]);
  });
});

describe('attachments', () => {
  it("the note's owner uploads, lists, signs a download URL and deletes under <user>/<note>/", async () => {
    const key = `${aliceId}/${aliceNote}/report.txt`;
    expect((await alice.storage.from('attachments').upload(key, 'quarterly', { contentType: 'text/plain' })).error).toBeNull();
    const listed = await alice.storage.from('attachments').list(`${aliceId}/${aliceNote}`);
    expect(listed.data?.map((f) => f.name)).toEqual(['report.txt']);
    const signed = await alice.storage.from('attachments').createSignedUrl(key, 60, { download: 'report.txt' });
    expect(signed.error).toBeNull();
    const res = await fetch(signed.data!.signedUrl);
    expect([res.status, await res.text()]).toEqual([200, 'quarterly']);
    expect(res.headers.get('content-disposition')).toContain('attachment');
    const upload = await alice.storage.from('attachments').createSignedUploadUrl(`${aliceId}/${aliceNote}/second.bin`);
    expect(upload.error).toBeNull();
    const put = await fetch(upload.data!.signedUrl, {
      method: 'PUT',
      headers: { 'content-type': 'application/octet-stream' },
      body: new Uint8Array([9, 8, 7]),
    });
    expect(put.status).toBe(200);
    const removed = await alice.storage.from('attachments').remove([key, `${aliceId}/${aliceNote}/second.bin`]);
    expect(removed.data).toHaveLength(2);
  });

  it('a key that is not <own id>/<own existing note>/<file> is refused', async () => {
    const up = (client: SupabaseClient, key: string) => client.storage.from('attachments').upload(key, 'x', { contentType: 'text/plain' });
    expect((await up(alice, `${aliceId}/${randomUUID()}/a.txt`)).error).toMatchObject({ statusCode: '403' });
    expect((await up(alice, `${aliceId}/${bobNote}/a.txt`)).error).toMatchObject({ statusCode: '403' });
    expect((await up(bob, `${bobId}/${aliceNote}/a.txt`)).error).toMatchObject({ statusCode: '403' });
    expect((await up(bob, `${aliceId}/${aliceNote}/a.txt`)).error).toMatchObject({ statusCode: '403' });
    expect((await up(alice, `${aliceId}/a.txt`)).error).toMatchObject({ statusCode: '403' });
    expect((await up(alice, `${aliceId}/${aliceNote}/deeper/a.txt`)).error).toMatchObject({ statusCode: '403' });
    expect((await up(alice, `${aliceId}/not-a-uuid/a.txt`)).error).toMatchObject({ statusCode: '403' });
    expect((await up(anon, `${aliceId}/${aliceNote}/a.txt`)).error).toMatchObject({ statusCode: '403' });
    const signed = await bob.storage.from('attachments').createSignedUploadUrl(`${aliceId}/${aliceNote}/b.txt`);
    expect(signed.error).toMatchObject({ statusCode: '403' });
  });

  it("another user and anon cannot list, download, sign or remove the owner's file", async () => {
    const key = `${aliceId}/${aliceNote}/secret.txt`;
    expect((await alice.storage.from('attachments').upload(key, 'secret', { contentType: 'text/plain' })).error).toBeNull();
    for (const other of [bob, anon]) {
      expect((await other.storage.from('attachments').list(`${aliceId}/${aliceNote}`)).data ?? []).toEqual([]);
      expect((await other.storage.from('attachments').download(key)).error).not.toBeNull();
      expect((await other.storage.from('attachments').createSignedUrl(key, 60)).error).not.toBeNull();
      expect((await other.storage.from('attachments').remove([key])).data ?? []).toEqual([]);
    }
    // The public route of a private bucket and a guessed signed URL give nothing either.
    expect((await fetch(`${lb.url}/storage/v1/object/public/attachments/${key}`)).status).not.toBe(200);
    expect((await fetch(`${lb.url}/storage/v1/object/sign/attachments/${key}?token=guess`)).status).not.toBe(200);
    expect((await alice.storage.from('attachments').download(key)).error).toBeNull();
  });

  it("once the note is gone, its files are out of reach (the app removes them first: ADR 037)", async () => {
    const note = await newNote(alice, 'Short-lived');
    const key = `${aliceId}/${note}/gone.txt`;
    expect((await alice.storage.from('attachments').upload(key, 'x', { contentType: 'text/plain' })).error).toBeNull();
    expect((await alice.from('notes').delete().eq('id', note)).error).toBeNull();
    expect((await alice.storage.from('attachments').list(`${aliceId}/${note}`)).data).toEqual([]);
    expect((await alice.storage.from('attachments').remove([key])).data).toEqual([]);
    await serviceClient(lb).storage.from('attachments').remove([key]);
  });
});

describe('attachments of a note with many files', () => {
  /** `count` rows under `folder`, written as the server (what uploads leave behind, without their bytes). */
  async function storedRows(folder: string, count: number, owner: string): Promise<void> {
    await lb.db.query(
      `insert into storage.objects (bucket_id, name, owner, owner_id, metadata, version)
       select 'attachments', $1 || '/file-' || i || '.txt', $2::uuid, $2, '{"size": 1, "mimetype": "text/plain"}', gen_random_uuid()::text
         from generate_series(1, $3::int) as i`,
      [folder, owner, count],
    );
  }

  /** How many times one statement, run as `userId`, scans public.notes (this transaction's statistics). */
  async function notesScansOf(userId: string, sql: string, params: unknown[]): Promise<{ scans: number; rows: number }> {
    return lb.db.transaction(async (q) => {
      const scans = async () =>
        Number(
          (await q.query<{ n: string }>(`select (coalesce(seq_scan, 0) + coalesce(idx_scan, 0))::text as n from pg_stat_xact_user_tables where relid = 'public.notes'::regclass`))
            .rows[0]?.n ?? 0,
        );
      const before = await scans();
      await q.query(`select set_config('role', 'authenticated', true), set_config('request.jwt.claims', $1, true), set_config('request.jwt.claim.sub', $2, true)`, [
        JSON.stringify({ sub: userId, role: 'authenticated', aal: 'aal1' }),
        userId,
      ]);
      const { rows } = await q.query(sql, params);
      await q.query('reset role');
      return { scans: (await scans()) - before, rows: rows.length };
    });
  }

  it("the owner lists all 300 files of a note while the policy reads the caller's notes once per statement, not once per file", async () => {
    const note = await newNote(alice, 'Three hundred files');
    await storedRows(`${aliceId}/${note}`, 300, aliceId);
    const listed = await alice.storage.from('attachments').list(`${aliceId}/${note}`, { limit: 1000, sortBy: { column: 'created_at', order: 'desc' } });
    expect(listed.error).toBeNull();
    expect(listed.data).toHaveLength(300);
    expect((await bob.storage.from('attachments').list(`${aliceId}/${note}`)).data).toEqual([]);
    // The select storage's list runs, as the caller: every file passes the policy, and public.notes is read once.
    const read = await notesScansOf(aliceId, `select name from storage.objects where bucket_id = 'attachments' and lower(name) like lower($1) || '%'`, [`${aliceId}/${note}/`]);
    expect(read).toEqual({ scans: 1, rows: 300 });
    expect(await notesScansOf(bobId, `select name from storage.objects where bucket_id = 'attachments' and name like $1 || '%'`, [`${aliceId}/${note}/`])).toMatchObject({ rows: 0 });
  });

  it("rows under a folder that pairs a user with another user's note are listed to nobody", async () => {
    // Uploads refuse such keys; rows put there by the server (or a policy of old) must still not be readable.
    await storedRows(`${aliceId}/${bobNote}`, 3, aliceId);
    await storedRows(`${bobId}/${aliceNote}`, 3, bobId);
    for (const [client, folder] of [
      [alice, `${aliceId}/${bobNote}`],
      [bob, `${aliceId}/${bobNote}`],
      [bob, `${bobId}/${aliceNote}`],
      [alice, `${bobId}/${aliceNote}`],
    ] as const)
      expect((await client.storage.from('attachments').list(folder)).data).toEqual([]);
    expect((await alice.storage.from('attachments').remove([`${aliceId}/${bobNote}/file-1.txt`])).data).toEqual([]);
    expect((await bob.storage.from('attachments').download(`${bobId}/${aliceNote}/file-1.txt`)).error).not.toBeNull();
    await lb.db.query(`delete from storage.objects where bucket_id = 'attachments' and (name like $1 or name like $2)`, [`${aliceId}/${bobNote}/%`, `${bobId}/${aliceNote}/%`]);
  });
});

describe('AAL2 (docs/database.md)', () => {
  it('a user with a verified factor reaches attachments and writes avatars only at aal2', async () => {
    const { client, email, password } = await signedInClient(lb);
    const id = (await client.auth.getUser()).data.user!.id;
    const note = await newNote(client, 'Protected');
    const key = `${id}/${note}/f.txt`;
    expect((await client.storage.from('attachments').upload(key, 'x', { contentType: 'text/plain' })).error).toBeNull();
    const enrolled = await client.auth.mfa.enroll({ factorType: 'totp', friendlyName: 'App' });
    if (enrolled.error) throw enrolled.error;
    const challenge = await client.auth.mfa.challenge({ factorId: enrolled.data.id });
    if (challenge.error) throw challenge.error;
    const verified = await client.auth.mfa.verify({ factorId: enrolled.data.id, challengeId: challenge.data.id, code: totpCode(enrolled.data.totp.secret) });
    expect(verified.error).toBeNull();
    // aal2: all works.
    expect((await client.storage.from('attachments').list(`${id}/${note}`)).data?.map((f) => f.name)).toEqual(['f.txt']);
    expect((await client.storage.from('avatars').upload(`${id}/p.png`, png, { contentType: 'image/png' })).error).toBeNull();
    // A fresh password sign-in is aal1: nothing.
    const fresh = anonClient(lb);
    expect((await fresh.auth.signInWithPassword({ email, password })).error).toBeNull();
    expect((await fresh.storage.from('attachments').list(`${id}/${note}`)).data).toEqual([]);
    expect((await fresh.storage.from('attachments').createSignedUrl(key, 60)).error).not.toBeNull();
    expect((await fresh.storage.from('attachments').upload(`${id}/${note}/g.txt`, 'x', { contentType: 'text/plain' })).error).toMatchObject({ statusCode: '403' });
    expect((await fresh.storage.from('avatars').upload(`${id}/q.png`, png, { contentType: 'image/png' })).error).toMatchObject({ statusCode: '403' });
    expect((await fresh.storage.from('avatars').remove([`${id}/p.png`])).data).toEqual([]);
  });
});
