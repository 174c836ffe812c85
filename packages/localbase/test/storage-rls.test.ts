// Authorization on /storage/v1 is Supabase's: every call runs its SQL command on storage.objects / storage.buckets
// under the caller's role and claims, so the project's RLS policies (written here as for hosted Supabase, with
// storage.foldername() and auth.uid()) decide. Two users and anon; service_role bypasses.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type SupabaseClient } from '@supabase/supabase-js';
import { DEFAULT_PUBLISHABLE_KEY, DEFAULT_SECRET_KEY } from '../src/index.ts';
import { anonClient, serviceClient, signedInClient, startTestServer, type Localbase } from './helpers.ts';

let lb: Localbase;
let admin: SupabaseClient;
let alice: SupabaseClient;
let bob: SupabaseClient;
let anon: SupabaseClient;
let aliceId: string;
let bobId: string;
const sfx = randomBytes(4).toString('hex');
const PRIV = `attachments-${sfx}`;
const AV = `avatars-${sfx}`;

beforeAll(async () => {
  lb = await startTestServer();
  admin = serviceClient(lb);
  ({ client: alice } = await signedInClient(lb));
  ({ client: bob } = await signedInClient(lb));
  anon = anonClient(lb);
  aliceId = (await alice.auth.getUser()).data.user!.id;
  bobId = (await bob.auth.getUser()).data.user!.id;
  await admin.storage.createBucket(PRIV, { public: false });
  await admin.storage.createBucket(AV, { public: true });
  // Policies as a Supabase project writes them (names unique per run: PostgreSQL test runs share one database).
  await lb.db.exec(`
    create policy "own files read ${sfx}" on storage.objects for select to authenticated
      using (bucket_id = '${PRIV}' and (storage.foldername(name))[1] = (select auth.uid()::text));
    create policy "own files write ${sfx}" on storage.objects for insert to authenticated
      with check (bucket_id = '${PRIV}' and (storage.foldername(name))[1] = (select auth.uid()::text));
    create policy "own files update ${sfx}" on storage.objects for update to authenticated
      using (bucket_id = '${PRIV}' and owner_id = (select auth.uid()::text))
      with check (bucket_id = '${PRIV}' and (storage.foldername(name))[1] = (select auth.uid()::text));
    create policy "own files delete ${sfx}" on storage.objects for delete to authenticated
      using (bucket_id = '${PRIV}' and owner_id = (select auth.uid()::text));
    create policy "avatar upload ${sfx}" on storage.objects for insert to authenticated
      with check (bucket_id = '${AV}' and (storage.foldername(name))[1] = (select auth.uid()::text)
                  and storage.extension(name) in ('png', 'jpg'));
    create policy "see public buckets ${sfx}" on storage.buckets for select to anon, authenticated
      using (public);
  `);
});

afterAll(async () => {
  await lb?.db.exec(`
    drop policy if exists "own files read ${sfx}" on storage.objects;
    drop policy if exists "own files write ${sfx}" on storage.objects;
    drop policy if exists "own files update ${sfx}" on storage.objects;
    drop policy if exists "own files delete ${sfx}" on storage.objects;
    drop policy if exists "avatar upload ${sfx}" on storage.objects;
    drop policy if exists "see public buckets ${sfx}" on storage.buckets;
  `);
  await lb?.stop();
});

const codeOf = (e: unknown) => (e as { statusCode?: string } | null)?.statusCode;

describe('a private bucket whose policies follow the folder = user id', () => {
  it('a user writes into their own folder only; owner and owner_id come from the token', async () => {
    expect((await alice.storage.from(PRIV).upload(`${aliceId}/a.txt`, 'alice')).error).toBeNull();
    const denied = await alice.storage.from(PRIV).upload(`${bobId}/a.txt`, 'alice was here');
    expect(denied.error?.message).toBe('new row violates row-level security policy');
    expect(codeOf(denied.error)).toBe('403');
    const { rows } = await lb.db.query<{ owner: string; owner_id: string }>(
      'select owner::text as owner, owner_id from storage.objects where bucket_id = $1 and name = $2',
      [PRIV, `${aliceId}/a.txt`],
    );
    expect(rows[0]).toEqual({ owner: aliceId, owner_id: aliceId });
    expect((await bob.storage.from(PRIV).upload(`${bobId}/b.txt`, 'bob')).error).toBeNull();
  });

  it("another user cannot read, list, sign, move, copy or remove it; anon neither", async () => {
    for (const c of [bob, anon]) {
      expect(codeOf((await c.storage.from(PRIV).download(`${aliceId}/a.txt`)).error)).toBe('404');
      expect((await c.storage.from(PRIV).exists(`${aliceId}/a.txt`)).data).toBe(false);
      expect(codeOf((await c.storage.from(PRIV).info(`${aliceId}/a.txt`)).error)).toBe('404');
      expect((await c.storage.from(PRIV).list(aliceId)).data ?? []).toEqual([]);
      expect(codeOf((await c.storage.from(PRIV).createSignedUrl(`${aliceId}/a.txt`, 60)).error)).toBe('404');
      expect((await c.storage.from(PRIV).createSignedUrls([`${aliceId}/a.txt`], 60)).data?.[0]?.signedUrl ?? null).toBeNull();
      expect((await c.storage.from(PRIV).move(`${aliceId}/a.txt`, `${bobId}/stolen.txt`)).error).not.toBeNull();
      expect((await c.storage.from(PRIV).copy(`${aliceId}/a.txt`, `${bobId}/stolen.txt`)).error).not.toBeNull();
      expect((await c.storage.from(PRIV).remove([`${aliceId}/a.txt`])).data ?? []).toEqual([]);
    }
    // still there, unchanged
    expect(await (await alice.storage.from(PRIV).download(`${aliceId}/a.txt`)).data?.text()).toBe('alice');
    expect((await alice.storage.from(PRIV).list(aliceId)).data?.map((e) => e.name)).toEqual(['a.txt']);
    // no public route into a private bucket
    const pub = await fetch(alice.storage.from(PRIV).getPublicUrl(`${aliceId}/a.txt`).data.publicUrl);
    expect((await pub.json()).statusCode).toBe('404');
  });

  it('anon cannot upload; a request without any token is refused with the JWT error', async () => {
    const up = await anon.storage.from(PRIV).upload(`${aliceId}/anon.txt`, 'x');
    expect(codeOf(up.error)).toBe('403');
    const res = await fetch(`${lb.url}/storage/v1/bucket`);
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ statusCode: '403', code: 'AccessDenied', error: 'Unauthorized', message: 'Invalid Compact JWS' });
    const bad = await fetch(`${lb.url}/storage/v1/bucket`, { headers: { authorization: 'Bearer not.a.jwt' } });
    expect((await bad.json()).statusCode).toBe('403');
  });

  it('the opaque publishable / secret keys act as anon / service_role, as behind Supabase\'s gateway', async () => {
    const pub = createClient(lb.url, DEFAULT_PUBLISHABLE_KEY, { auth: { persistSession: false } });
    expect((await pub.storage.listBuckets()).data?.map((b) => b.id)).toContain(AV);
    expect(codeOf((await pub.storage.from(PRIV).upload(`${aliceId}/pub.txt`, 'x')).error)).toBe('403');
    const secret = createClient(lb.url, DEFAULT_SECRET_KEY, { auth: { persistSession: false } });
    expect((await secret.storage.listBuckets()).data?.map((b) => b.id)).toContain(PRIV);
  });

  it('upsert needs the UPDATE policy on the existing row; the owner may overwrite and move inside their folder', async () => {
    expect((await alice.storage.from(PRIV).upload(`${aliceId}/a.txt`, 'alice 2', { upsert: true })).error).toBeNull();
    expect(await (await alice.storage.from(PRIV).download(`${aliceId}/a.txt`)).data?.text()).toBe('alice 2');
    // bob's upsert onto alice's key is refused (the row is not his to update)
    expect(codeOf((await bob.storage.from(PRIV).upload(`${aliceId}/a.txt`, 'bob', { upsert: true })).error)).toBe('403');
    expect((await alice.storage.from(PRIV).move(`${aliceId}/a.txt`, `${aliceId}/sub/a.txt`)).error).toBeNull();
    // a move out of her folder violates the WITH CHECK
    const out = await alice.storage.from(PRIV).move(`${aliceId}/sub/a.txt`, `${bobId}/a.txt`);
    expect(codeOf(out.error)).toBe('403');
    expect(await (await alice.storage.from(PRIV).download(`${aliceId}/sub/a.txt`)).data?.text()).toBe('alice 2');
  });

  it('signed URLs made by the owner work for anyone holding them; a signed upload URL needs the INSERT policy', async () => {
    const s = await alice.storage.from(PRIV).createSignedUrl(`${aliceId}/sub/a.txt`, 60);
    expect(await (await fetch(s.data!.signedUrl)).text()).toBe('alice 2');
    expect(codeOf((await bob.storage.from(PRIV).createSignedUploadUrl(`${aliceId}/x.txt`)).error)).toBe('403');
    const u = await alice.storage.from(PRIV).createSignedUploadUrl(`${aliceId}/via-signed.txt`);
    expect((await anon.storage.from(PRIV).uploadToSignedUrl(`${aliceId}/via-signed.txt`, u.data!.token, 'signed')).error).toBeNull();
    const { rows } = await lb.db.query<{ owner_id: string }>('select owner_id from storage.objects where bucket_id = $1 and name = $2', [
      PRIV,
      `${aliceId}/via-signed.txt`,
    ]);
    expect(rows[0]?.owner_id).toBe(aliceId);
  });

  it('the owner removes her file; service_role sees and removes everything', async () => {
    const removed = await alice.storage.from(PRIV).remove([`${aliceId}/sub/a.txt`, `${bobId}/b.txt`]);
    expect(removed.data?.map((r) => r.name)).toEqual([`${aliceId}/sub/a.txt`]);
    expect((await admin.storage.from(PRIV).list(bobId)).data?.map((e) => e.name)).toEqual(['b.txt']);
    expect((await admin.storage.from(PRIV).remove([`${bobId}/b.txt`])).data).toHaveLength(1);
  });
});

describe('a public bucket with an upload policy', () => {
  it('anyone reads through the public URL; only the owner folder and allowed extensions are writable', async () => {
    expect((await alice.storage.from(AV).upload(`${aliceId}/me.png`, new Blob(['png'], { type: 'image/png' }))).error).toBeNull();
    expect(codeOf((await alice.storage.from(AV).upload(`${aliceId}/me.exe`, 'x')).error)).toBe('403');
    expect(codeOf((await bob.storage.from(AV).upload(`${aliceId}/me2.png`, 'x')).error)).toBe('403');
    const res = await fetch(anon.storage.from(AV).getPublicUrl(`${aliceId}/me.png`).data.publicUrl);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('png');
    // authenticated download of a public bucket needs no SELECT policy either
    expect(await (await bob.storage.from(AV).download(`${aliceId}/me.png`)).data?.text()).toBe('png');
    // but listing still follows RLS (no SELECT policy on this bucket)
    expect((await bob.storage.from(AV).list(aliceId)).data).toEqual([]);
    // and so does overwriting (no UPDATE policy)
    expect(codeOf((await alice.storage.from(AV).upload(`${aliceId}/me.png`, 'x', { upsert: true })).error)).toBe('403');
  });
});

describe('buckets under RLS', () => {
  it('users see the buckets their policies allow; creating, updating and deleting buckets needs policies too', async () => {
    const mine = (await alice.storage.listBuckets()).data?.map((b) => b.id) ?? [];
    expect(mine).toContain(AV);
    expect(mine).not.toContain(PRIV);
    expect(codeOf((await alice.storage.getBucket(PRIV)).error)).toBe('404');
    expect(codeOf((await alice.storage.createBucket(`mine-${sfx}`)).error)).toBe('403');
    expect(codeOf((await alice.storage.updateBucket(AV, { public: false })).error)).toBe('404');
    expect((await admin.storage.getBucket(AV)).data?.public).toBe(true);
    const empty = await alice.storage.emptyBucket(AV);
    expect(empty.error?.message).toBe('Access denied: Invalid role');
    expect((empty.error as { status?: number }).status).toBe(403);
  });

  it('the helper functions split keys as Supabase does', async () => {
    const { rows } = await lb.db.query<{ f: string[]; n: string; e: string; e2: string }>(
      "select storage.foldername('a/b/c.png') as f, storage.filename('a/b/c.png') as n, storage.extension('a/b.tar.gz') as e, storage.extension('a/README') as e2",
    );
    expect(rows[0]).toEqual({ f: ['a', 'b'], n: 'c.png', e: 'gz', e2: 'README' });
  });
});
