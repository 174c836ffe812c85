// /storage/v1 driven with supabase-js's storage client (storage-js), as an app would: buckets, uploads in every body
// form storage-js sends, downloads with their headers, listing, move/copy/remove, signed and public URLs, limits and
// hostile names. Runs on PGlite (memory) and on PostgreSQL (LOCALBASE_TEST_DATABASE_URL).
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SupabaseClient } from '@supabase/supabase-js';
import { serviceClient, startTestServer, type Localbase } from './helpers.ts';

let lb: Localbase;
let admin: SupabaseClient;
const sfx = randomBytes(4).toString('hex');
const B = `files-${sfx}`; // private bucket used by most tests
const PUB = `public-${sfx}`;

beforeAll(async () => {
  lb = await startTestServer();
  admin = serviceClient(lb);
  expect((await admin.storage.createBucket(B)).error).toBeNull();
  expect((await admin.storage.createBucket(PUB, { public: true })).error).toBeNull();
});

afterAll(async () => {
  await lb?.stop();
});

type StorageErr = { status?: number; statusCode?: string; message: string } | null;
const errOf = (e: unknown) => {
  const x = e as StorageErr;
  return x && { statusCode: x.statusCode, message: x.message };
};

describe('buckets', () => {
  it('create, get (the 8 keys Supabase returns), list, partial update, delete', async () => {
    const id = `b-${sfx}`;
    const created = await admin.storage.createBucket(id, { public: false, fileSizeLimit: '20mb', allowedMimeTypes: ['image/jpeg'] });
    expect(created).toEqual({ data: { name: id }, error: null });
    const got = await admin.storage.getBucket(id);
    expect(Object.keys(got.data ?? {}).sort()).toEqual(
      ['allowed_mime_types', 'created_at', 'file_size_limit', 'id', 'name', 'owner', 'public', 'updated_at'].sort(),
    );
    expect(got.data).toMatchObject({ id, name: id, public: false, file_size_limit: 20_000_000, allowed_mime_types: ['image/jpeg'] });
    const listed = await admin.storage.listBuckets();
    expect(listed.data?.find((b) => b.id === id)).toMatchObject({ id, type: 'STANDARD' });
    const searched = await admin.storage.listBuckets({ search: `B-${sfx}` });
    expect(searched.data?.map((b) => b.id)).toEqual([id]);

    expect(await admin.storage.updateBucket(id, { public: true })).toEqual({ data: { message: 'Successfully updated' }, error: null });
    const after = await admin.storage.getBucket(id);
    expect(after.data).toMatchObject({ public: true, file_size_limit: 20_000_000, allowed_mime_types: ['image/jpeg'] });

    expect(await admin.storage.deleteBucket(id)).toEqual({ data: { message: 'Successfully deleted' }, error: null });
    const gone = await admin.storage.getBucket(id);
    expect(errOf(gone.error)).toEqual({ statusCode: '404', message: 'Bucket not found' });
  });

  it('a second bucket with the same id is 409; a bad name or size is 400; a limit over the global one is 413', async () => {
    expect(errOf((await admin.storage.createBucket(B)).error)).toEqual({ statusCode: '409', message: 'The resource already exists' });
    expect(errOf((await admin.storage.createBucket('a/b')).error)).toEqual({ statusCode: '400', message: 'Bucket name invalid' });
    expect(errOf((await admin.storage.createBucket(`x-${sfx}`, { public: false, fileSizeLimit: '12 parsecs' })).error)?.statusCode).toBe('400');
    expect(errOf((await admin.storage.createBucket(`y-${sfx}`, { public: false, fileSizeLimit: '1gb' })).error)).toEqual({
      statusCode: '413',
      message: 'The object exceeded the maximum allowed size',
    });
  });

  it("a bucket's public flag is read as storage's validator reads a boolean: \"true\" / \"false\", 1 / 0, a one-item list are taken; \"yes\" and \"1\" are refused", async () => {
    // "true" was refused "body/public must be boolean" (storage's Ajv coerces it).
    const send = async (method: string, p: string, body: Record<string, unknown>) => {
      const res = await fetch(`${lb.url}/storage/v1/bucket${p}`, {
        method,
        headers: { authorization: `Bearer ${lb.serviceRoleKey}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      return [res.status, await res.json()] as const;
    };
    const id = `flag-${sfx}`;
    expect(await send('POST', '', { name: id, public: 'true' })).toEqual([200, { name: id }]);
    expect((await admin.storage.getBucket(id)).data?.public).toBe(true);
    expect((await send('PUT', `/${id}`, { public: 0 }))[0]).toBe(200);
    expect((await admin.storage.getBucket(id)).data?.public).toBe(false);
    for (const value of ['yes', '1', ['true', 'false']]) {
      expect(await send('PUT', `/${id}`, { public: value }), JSON.stringify(value)).toEqual([
      400,
        { statusCode: '400', code: 'InvalidRequest', error: 'Bad Request', message: 'body/public must be boolean' },
      ]);
    }
    expect((await send('PUT', `/${id}`, { public: [1] }))[0]).toBe(200);
    expect((await admin.storage.getBucket(id)).data?.public).toBe(true);
  });

  it('a non-empty bucket cannot be deleted until it is emptied (service_role only)', async () => {
    const id = `e-${sfx}`;
    await admin.storage.createBucket(id);
    await admin.storage.from(id).upload('a.txt', 'a');
    expect(errOf((await admin.storage.deleteBucket(id)).error)).toEqual({
      statusCode: '409',
      message: 'The bucket you tried to delete is not empty',
    });
    expect((await admin.storage.emptyBucket(id)).data).toEqual({
      message: 'Empty bucket has been queued. Completion may take up to an hour.',
    });
    expect((await admin.storage.deleteBucket(id)).error).toBeNull();
  });
});

describe('uploads', () => {
  it('a string (raw body, default content type), then download gives the bytes and the type back', async () => {
    const up = await admin.storage.from(B).upload('docs/hello.txt', 'hello world');
    expect(up.error).toBeNull();
    expect(up.data).toMatchObject({ path: 'docs/hello.txt', fullPath: `${B}/docs/hello.txt` });
    expect(up.data?.id).toMatch(/^[0-9a-f-]{36}$/);
    const down = await admin.storage.from(B).download('docs/hello.txt');
    expect(down.error).toBeNull();
    expect(await down.data?.text()).toBe('hello world');
    expect(down.data?.type).toBe('text/plain;charset=utf-8');
  });

  it('a Blob (multipart with an empty-named part), with custom metadata, shown by info()', async () => {
    const blob = new Blob([new Uint8Array([1, 2, 3, 4])], { type: 'image/png' });
    const up = await admin.storage.from(B).upload('img/dot.png', blob, { metadata: { alt: 'a dot' }, cacheControl: '60' });
    expect(up.error).toBeNull();
    const info = await admin.storage.from(B).info('img/dot.png');
    expect(info.error).toBeNull();
    expect(info.data).toMatchObject({ name: 'img/dot.png', size: 4, contentType: 'image/png', cacheControl: 'max-age=60', bucketId: B });
    expect(info.data?.metadata).toEqual({ alt: 'a dot' });
    expect(info.data).not.toHaveProperty('updatedAt');
    expect(info.data?.etag).toMatch(/^"[0-9a-f]{32}"$/);
  });

  it('a chunked Node stream without Content-Length; metadata via x-metadata', async () => {
    const chunks = Array.from({ length: 50 }, (_, i) => Buffer.alloc(10_000, i));
    const up = await admin.storage
      .from(B)
      .upload('stream.bin', Readable.from(chunks), { duplex: 'half', contentType: 'application/octet-stream', metadata: { n: 50 } });
    expect(up.error).toBeNull();
    const down = await admin.storage.from(B).download('stream.bin');
    expect(Buffer.from(await down.data!.arrayBuffer()).equals(Buffer.concat(chunks))).toBe(true);
    expect((await admin.storage.from(B).info('stream.bin')).data?.metadata).toEqual({ n: 50 });
  });

  it('metadata nested more than 100 levels deep is refused with 400 (it was a 500), by header and by form alike', async () => {
    const arrays = (levels: number): unknown => JSON.parse(`${'['.repeat(levels)}${']'.repeat(levels)}`);
    const message = 'metadata is nested more than 100 levels deep';
    for (const levels of [100, 2000]) {
      const byHeader = await admin.storage.from(B).upload(`deep-${levels}.txt`, 'x', { contentType: 'text/plain', metadata: { n: arrays(levels) } });
      expect(errOf(byHeader.error)).toEqual({ statusCode: '400', message });
      const byForm = await admin.storage.from(B).upload(`deep-${levels}.png`, new Blob(['x'], { type: 'image/png' }), { metadata: { n: arrays(levels) } });
      expect(errOf(byForm.error)).toEqual({ statusCode: '400', message });
    }
    // 99 levels under the metadata object (100 with it) are kept
    expect((await admin.storage.from(B).upload('deep-ok.txt', 'x', { contentType: 'text/plain', metadata: { n: arrays(99) } })).error).toBeNull();
    expect(JSON.stringify((await admin.storage.from(B).info('deep-ok.txt')).data?.metadata)).toBe(JSON.stringify({ n: arrays(99) }));
  });

  it('the same key again is 409 without upsert, replaced with upsert and by update()', async () => {
    await admin.storage.from(B).upload('dup.txt', 'one');
    const again = await admin.storage.from(B).upload('dup.txt', 'two');
    expect(errOf(again.error)).toEqual({ statusCode: '409', message: 'The resource already exists' });
    expect((await admin.storage.from(B).upload('dup.txt', 'three', { upsert: true })).error).toBeNull();
    expect(await (await admin.storage.from(B).download('dup.txt')).data?.text()).toBe('three');
    expect((await admin.storage.from(B).update('dup.txt', 'four')).error).toBeNull();
    expect(await (await admin.storage.from(B).download('dup.txt')).data?.text()).toBe('four');
    // the replaced versions' files are gone: one file for the object
    const id = (await admin.storage.from(B).info('dup.txt')).data?.id as string;
    expect(fs.readdirSync(path.join(lb.storageDir, 'objects', id.slice(0, 2), id))).toHaveLength(1);
  });

  it('upserts of one new key sent at once are all stored in turn: the object is whole, one of them, with one file', async () => {
    // On PostgreSQL each upsert saw no row yet and renamed its bytes under an id of its own, while the row kept the
    // first id: every upsert was acknowledged and the object then answered 404 "The resource was not found".
    const key = `race-${randomBytes(3).toString('hex')}.txt`;
    const bodies = Array.from({ length: 8 }, (_, i) => `version ${i}`);
    const results = await Promise.all(bodies.map((body) => admin.storage.from(B).upload(key, body, { upsert: true })));
    expect(results.map((r) => r.error)).toEqual(bodies.map(() => null));
    const got = await admin.storage.from(B).download(key);
    expect(got.error).toBeNull();
    expect(bodies).toContain(await got.data?.text());
    const id = (await admin.storage.from(B).info(key)).data?.id as string;
    expect(results.map((r) => r.data?.id)).toEqual(bodies.map(() => id));
    expect(fs.readdirSync(path.join(lb.storageDir, 'objects', id.slice(0, 2), id))).toHaveLength(1);
  });

  it('a missing bucket is 404 Bucket not found', async () => {
    const up = await admin.storage.from(`nope-${sfx}`).upload('a.txt', 'a');
    expect(errOf(up.error)).toEqual({ statusCode: '404', message: 'Bucket not found' });
  });

  it('exists() is true for a stored key and false for a missing one', async () => {
    await admin.storage.from(B).upload('here.txt', 'x');
    expect((await admin.storage.from(B).exists('here.txt')).data).toBe(true);
    expect((await admin.storage.from(B).exists('not-here.txt')).data).toBe(false);
  });
});

describe('limits', () => {
  const L = `limited-${sfx}`;
  beforeAll(async () => {
    await admin.storage.createBucket(L, { public: false, fileSizeLimit: 1000, allowedMimeTypes: ['image/*', 'text/plain'] });
  });

  it('over the bucket limit is 413, declared or streamed; nothing is stored', async () => {
    const big = Buffer.alloc(1001, 1);
    const declared = await admin.storage.from(L).upload('big.png', big, { contentType: 'image/png' });
    expect(errOf(declared.error)).toEqual({ statusCode: '413', message: 'The object exceeded the maximum allowed size' });
    const streamed = await admin.storage
      .from(L)
      .upload('big2.png', Readable.from([Buffer.alloc(600), Buffer.alloc(600)]), { duplex: 'half', contentType: 'image/png' });
    expect(errOf(streamed.error)?.statusCode).toBe('413');
    const multipart = await admin.storage.from(L).upload('big3.png', new Blob([big], { type: 'image/png' }));
    expect(errOf(multipart.error)?.statusCode).toBe('413');
    expect((await admin.storage.from(L).list()).data).toEqual([]);
    expect((await admin.storage.from(L).upload('ok.png', Buffer.alloc(1000), { contentType: 'image/png' })).error).toBeNull();
  });

  it('a streamed body far over the limit gets its 413 and the server keeps serving', async () => {
    const chunks = Array.from({ length: 96 }, () => Buffer.alloc(64 * 1024, 9)); // 6 MiB, sent chunked
    const res = await fetch(`${lb.url}/storage/v1/object/${L}/huge.png`, {
      method: 'POST',
      headers: { authorization: `Bearer ${lb.serviceRoleKey}`, 'content-type': 'image/png' },
      body: Readable.toWeb(Readable.from(chunks)) as ReadableStream,
      duplex: 'half',
    } as RequestInit);
    expect(res.status).toBe(400);
    expect((await res.json()) as unknown).toMatchObject({ statusCode: '413', code: 'EntityTooLarge' });
    await new Promise((r) => setTimeout(r, 200));
    expect((await admin.storage.from(L).list()).error).toBeNull();
    expect((await admin.storage.from(L).exists('huge.png')).data).toBe(false);
  });

  it('a type outside allowed_mime_types is 415', async () => {
    const up = await admin.storage.from(L).upload('a.pdf', 'x', { contentType: 'application/pdf' });
    expect(errOf(up.error)).toEqual({ statusCode: '415', message: 'mime type application/pdf is not supported' });
    expect((await admin.storage.from(L).upload('a.txt', 'x', { contentType: 'text/plain;charset=UTF-8' })).error).toBeNull();
  });

  it('the global limit applies to buckets without one', async () => {
    const small = await startTestServer({ storageFileSizeLimit: 10 });
    try {
      const a = serviceClient(small);
      const id = `g-${sfx}`;
      await a.storage.createBucket(id);
      expect(errOf((await a.storage.from(id).upload('a.txt', '12345678901')).error)?.statusCode).toBe('413');
      expect((await a.storage.from(id).upload('b.txt', '1234567890')).error).toBeNull();
      await a.storage.emptyBucket(id);
      await a.storage.deleteBucket(id);
    } finally {
      await small.stop();
    }
  });
});

describe('hostile names', () => {
  it('"../" stays a name: stored in the database, the bytes inside the storage folder', async () => {
    // fetch resolves a literal ../ in the URL before sending (storage-js does not encode keys): a clean 404
    const viaClient = await admin.storage.from(B).upload('../../etc/passwd', 'x');
    expect(errOf(viaClient.error)?.statusCode).toBe('404');
    // encoded slashes reach the server as the key ../../etc/passwd
    const res = await fetch(`${lb.url}/storage/v1/object/${B}/..%2F..%2Fetc%2Fpasswd`, {
      method: 'POST',
      headers: { authorization: `Bearer ${lb.serviceRoleKey}`, 'content-type': 'text/plain' },
      body: 'not really',
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ Key: `${B}/../../etc/passwd` });
    const info = await admin.storage.from(B).info('..%2F..%2Fetc%2Fpasswd');
    expect(info.data?.name).toBe('../../etc/passwd');
    const id = info.data?.id as string;
    expect(fs.readdirSync(path.join(lb.storageDir, 'objects', id.slice(0, 2), id))).toHaveLength(1);
    const list = await admin.storage.from(B).list('..');
    expect(list.data?.map((e) => e.name)).toEqual(['..']);
  });

  it('NUL, unicode and over-long keys are 400 InvalidKey, as Supabase (S3-safe ASCII only)', async () => {
    for (const key of ['a\u0000b.txt', 'ünïcødé.txt', 'x'.repeat(1100)]) {
      const up = await admin.storage.from(B).upload(key, 'x');
      expect(errOf(up.error)?.statusCode, key.slice(0, 20)).toBe('400');
      expect(errOf(up.error)?.message.startsWith('Invalid key: ')).toBe(true);
    }
  });
});

describe('downloads', () => {
  const get = (p: string, headers: Record<string, string> = {}) =>
    fetch(`${lb.url}/storage/v1/object/${B}/${p}`, { headers: { authorization: `Bearer ${lb.serviceRoleKey}`, ...headers } });

  beforeAll(async () => {
    await admin.storage.from(B).upload('video.bin', Buffer.from('0123456789'), { contentType: 'video/mp4', cacheControl: '120' });
  });

  it('Content-Type, Cache-Control, ETag, Last-Modified, Accept-Ranges', async () => {
    const res = await get('video.bin');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('video/mp4');
    expect(res.headers.get('cache-control')).toBe('max-age=120');
    expect(res.headers.get('content-length')).toBe('10');
    expect(res.headers.get('accept-ranges')).toBe('bytes');
    expect(res.headers.get('etag')).toMatch(/^"[0-9a-f]{32}"$/);
    expect(new Date(res.headers.get('last-modified') ?? '').getTime()).toBeGreaterThan(0);
    expect(await res.text()).toBe('0123456789');
  });

  it('a browser on another origin may read the headers it needs (CORS)', async () => {
    const res = await get('video.bin', { origin: 'http://app.example' });
    expect(res.headers.get('access-control-allow-origin')).toBe('http://app.example');
    expect(res.headers.get('access-control-expose-headers')).toContain('ETag');
    expect(res.headers.get('access-control-expose-headers')).toContain('Content-Range');
    const pre = await fetch(`${lb.url}/storage/v1/object/${B}/x.png`, {
      method: 'OPTIONS',
      headers: { origin: 'http://app.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'x-upsert, authorization' },
    });
    expect(pre.status).toBe(204);
    expect(pre.headers.get('access-control-allow-headers')).toContain('x-upsert');
  });

  it('If-None-Match with the ETag is 304', async () => {
    const etag = (await get('video.bin')).headers.get('etag') as string;
    const res = await get('video.bin', { 'if-none-match': etag });
    expect(res.status).toBe(304);
  });

  it('If-Modified-Since at or after Last-Modified is 304 (the header echoed back), before it 200', async () => {
    // It was ignored: a cache revalidating with the date alone downloaded the whole object again.
    const lastModified = (await get('video.bin')).headers.get('last-modified') as string;
    const same = await get('video.bin', { 'if-modified-since': lastModified });
    expect([same.status, await same.text()]).toEqual([304, '']);
    expect(same.headers.get('etag')).toMatch(/^"[0-9a-f]{32}"$/);
    expect((await get('video.bin', { 'if-modified-since': new Date(Date.now() + 60_000).toUTCString() })).status).toBe(304);
    const before = await get('video.bin', { 'if-modified-since': new Date(Date.parse(lastModified) - 1000).toUTCString() });
    expect([before.status, await before.text()]).toEqual([200, '0123456789']);
    expect((await get('video.bin', { 'if-modified-since': 'not a date' })).status).toBe(200);
    // If-None-Match decides when both are sent (RFC 9110 13.2.2): another ETag downloads even with a later date.
    const other = await get('video.bin', { 'if-none-match': '"0000"', 'if-modified-since': new Date(Date.now() + 60_000).toUTCString() });
    expect(other.status).toBe(200);
  });

  it("HEAD answers the whole object's headers with 200, whatever Range or If-None-Match say, as storage's HEAD", async () => {
    // HEAD with Range answered 206 with a partial Content-Length; with the ETag, 304.
    const head = (headers: Record<string, string>) =>
      fetch(`${lb.url}/storage/v1/object/${B}/video.bin`, { method: 'HEAD', headers: { authorization: `Bearer ${lb.serviceRoleKey}`, ...headers } });
    const ranged = await head({ range: 'bytes=2-5' });
    expect([ranged.status, ranged.headers.get('content-length'), ranged.headers.get('content-range')]).toEqual([200, '10', null]);
    const etag = ranged.headers.get('etag') as string;
    expect((await head({ 'if-none-match': etag })).status).toBe(200);
    expect((await head({ range: 'bytes=20-' })).status).toBe(200);
    expect((await admin.storage.from(B).exists('video.bin')).data).toBe(true);
  });

  it('Range gives 206 with Content-Range (a video can seek); an unsatisfiable range is 416', async () => {
    const res = await get('video.bin', { range: 'bytes=2-5' });
    expect(res.status).toBe(206);
    expect(res.headers.get('content-range')).toBe('bytes 2-5/10');
    expect(await res.text()).toBe('2345');
    const tail = await get('video.bin', { range: 'bytes=-3' });
    expect(await tail.text()).toBe('789');
    const past = await get('video.bin', { range: 'bytes=20-' });
    // the storage server's own (file backend's) answer; it said "The requested range is not satisfiable"
    expect([past.status, past.headers.get('content-range'), await past.json()]).toEqual([
      416,
      'bytes */10',
      { statusCode: '416', code: 'InvalidRange', error: 'invalid_range', message: 'invalid range provided' },
    ]);
  });

  it('a Range the file backend cannot read (malformed, reversed, several ranges, another unit) is 416, as storage answers; the unit is read case-insensitively', async () => {
    // These were answered 200 with the whole object (and "Bytes=2-5" too).
    for (const range of ['bytes=abc', 'bytes=5-2', 'bytes=0-1,4-5', 'bytes=-', 'bytes=-0', 'items=0-1', 'bytes=1.5-3']) {
      const res = await get('video.bin', { range });
      expect([res.status, res.headers.get('content-range')], range).toEqual([416, 'bytes */10']);
      expect(await res.json()).toEqual({ statusCode: '416', code: 'InvalidRange', error: 'invalid_range', message: 'invalid range provided' });
    }
    for (const [range, body, contentRange] of [['Bytes=2-5', '2345', 'bytes 2-5/10'], ['BYTES=7-100', '789', 'bytes 7-9/10']]) {
      const res = await get('video.bin', { range: range! });
      expect([res.status, res.headers.get('content-range'), await res.text()], range).toEqual([206, contentRange, body]);
    }
  });

  it('?download sets Content-Disposition; unknown query parameters are ignored', async () => {
    const res = await get('video.bin?download=clip%20one.mp4&cacheNonce=1');
    expect(res.headers.get('content-disposition')).toBe("attachment; filename=clip%20one.mp4; filename*=UTF-8''clip%20one.mp4");
    const d = await admin.storage.from(B).download('video.bin', { cacheNonce: 'x' } as never);
    expect(d.error).toBeNull();
  });

  it('text/html is served as text/plain', async () => {
    await admin.storage.from(B).upload('page.html', '<script>alert(1)</script>', { contentType: 'text/html' });
    expect((await get('page.html')).headers.get('content-type')).toBe('text/plain');
  });

  it('a stored file never runs as localbase\'s origin (the mailbox\'s): sandboxed and nosniff, by every download path', async () => {
    const svg = '<svg xmlns="http://www.w3.org/2000/svg"><script>fetch("/mailbox/api/messages")</script></svg>';
    await admin.storage.from(PUB).upload('x.svg', svg, { contentType: 'image/svg+xml' });
    await admin.storage.from(B).upload('x.xhtml', svg, { contentType: 'application/xhtml+xml' });
    await admin.storage.from(B).upload('doc.pdf', '%PDF-1.4', { contentType: 'application/pdf' });
    const signed = await admin.storage.from(B).createSignedUrl('x.xhtml', 60);
    const answers = [
      await get('x.xhtml'),
      await fetch(signed.data?.signedUrl ?? ''),
      await fetch(admin.storage.from(PUB).getPublicUrl('x.svg').data.publicUrl),
      await fetch(`${lb.url}/storage/v1/object/public/${PUB}/x.svg`, { method: 'HEAD' }),
    ];
    for (const res of answers) {
      expect(res.status).toBe(200);
      expect(res.headers.get('content-security-policy')).toBe('sandbox');
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    }
    expect(answers[2]?.headers.get('content-type')).toBe('image/svg+xml'); // the stored type, as Storage serves it
    // Chromium shows no sandboxed PDF; its viewer runs in an origin of its own
    const pdf = await get('doc.pdf');
    expect(pdf.headers.get('content-security-policy')).toBeNull();
    expect(pdf.headers.get('x-content-type-options')).toBe('nosniff');
  });
});

describe('list, move, copy, remove', () => {
  const L = `list-${sfx}`;
  beforeAll(async () => {
    await admin.storage.createBucket(L);
    for (const k of ['top.txt', 'dir/a.txt', 'dir/b.txt', 'dir/Cat.txt', 'dir/sub/deep.txt', 'other/x.txt']) {
      await admin.storage.from(L).upload(k, k);
    }
  });

  it('list gives one level, folders as entries with null id, relative names', async () => {
    const root = await admin.storage.from(L).list();
    expect(root.data?.map((e) => [e.name, e.id === null])).toEqual([
      ['dir', true],
      ['other', true],
      ['top.txt', false],
    ]);
    const dir = await admin.storage.from(L).list('dir');
    expect(dir.data?.map((e) => e.name)).toEqual(['a.txt', 'b.txt', 'Cat.txt', 'sub']);
    const file = dir.data?.find((e) => e.name === 'a.txt');
    expect(typeof file?.id).toBe('string');
    expect(file?.metadata).toMatchObject({ size: 9, mimetype: 'text/plain;charset=UTF-8' });
    expect(file?.created_at).toBeTruthy();
  });

  it('list honours search (case-insensitive prefix), limit, offset and sortBy', async () => {
    expect((await admin.storage.from(L).list('dir', { search: 'c' })).data?.map((e) => e.name)).toEqual(['Cat.txt']);
    expect((await admin.storage.from(L).list('dir', { limit: 2, offset: 1 })).data?.map((e) => e.name)).toEqual(['b.txt', 'Cat.txt']);
    expect((await admin.storage.from(L).list('dir', { sortBy: { column: 'name', order: 'desc' } })).data?.map((e) => e.name)).toEqual([
      'sub',
      'Cat.txt',
      'b.txt',
      'a.txt',
    ]);
    const byDate = await admin.storage.from(L).list('dir', { sortBy: { column: 'created_at', order: 'asc' } });
    expect(byDate.data?.map((e) => e.name)).toEqual(['sub', 'a.txt', 'b.txt', 'Cat.txt']);
    const bad = await admin.storage.from(L).list('dir', { sortBy: { column: 'size' as never, order: 'asc' } });
    expect(errOf(bad.error)?.statusCode).toBe('400');
  });

  it('move keeps the bytes under the new key; copy makes a second object; remove returns the deleted rows', async () => {
    expect((await admin.storage.from(L).move('top.txt', 'moved/top.txt')).data).toMatchObject({ message: 'Successfully moved' });
    expect((await admin.storage.from(L).exists('top.txt')).data).toBe(false);
    expect(await (await admin.storage.from(L).download('moved/top.txt')).data?.text()).toBe('top.txt');
    expect(errOf((await admin.storage.from(L).move('nope.txt', 'x.txt')).error)?.statusCode).toBe('404');

    const copied = await admin.storage.from(L).copy('moved/top.txt', 'copy.txt', { destinationBucket: B });
    expect(copied).toEqual({ data: { path: `${B}/copy.txt` }, error: null });
    expect(await (await admin.storage.from(B).download('copy.txt')).data?.text()).toBe('top.txt');
    expect(errOf((await admin.storage.from(L).copy('moved/top.txt', 'copy.txt', { destinationBucket: B })).error)?.statusCode).toBe('409');

    const removed = await admin.storage.from(L).remove(['moved/top.txt', 'dir/a.txt', 'never.txt']);
    expect(removed.data?.map((r) => r.name).sort()).toEqual(['dir/a.txt', 'moved/top.txt']);
    expect(removed.data?.every((r) => typeof r.id === 'string' && r.bucket_id === L)).toBe(true);
    expect((await admin.storage.from(L).exists('dir/a.txt')).data).toBe(false);
    // the copy's bytes are its own
    expect(await (await admin.storage.from(B).download('copy.txt')).data?.text()).toBe('top.txt');
  });
});

describe('listV2', () => {
  const V = `v2-${sfx}`;
  const names = Array.from({ length: 8 }, (_, i) => `testpath/file-${i}.txt`);
  beforeAll(async () => {
    await admin.storage.createBucket(V);
    for (const n of names) await admin.storage.from(V).upload(n, n); // created in this order
    await admin.storage.from(V).upload('testpath/sub/deep.txt', 'deep');
    await admin.storage.from(V).upload('testpath2/other.txt', 'other');
  });

  async function pages(sortBy: { column: 'name' | 'created_at'; order: 'asc' | 'desc' }): Promise<string[][]> {
    const out: string[][] = [];
    let cursor: string | undefined;
    for (;;) {
      const { data, error } = await admin.storage.from(V).listV2({ prefix: 'testpath/file', limit: 2, sortBy, cursor });
      expect(error).toBeNull();
      out.push(data!.objects.map((o) => o.name));
      if (!data!.hasNext) return out;
      expect(data!.nextCursor).toBeTruthy();
      cursor = data!.nextCursor;
    }
  }

  it('pages of exactly 2 in name and created_at order, both directions, hasNext false at the end', async () => {
    const chunk = (list: string[]) => [0, 2, 4, 6].map((i) => list.slice(i, i + 2));
    expect(await pages({ column: 'name', order: 'asc' })).toEqual(chunk(names));
    expect(await pages({ column: 'name', order: 'desc' })).toEqual(chunk([...names].reverse()));
    expect(await pages({ column: 'created_at', order: 'asc' })).toEqual(chunk(names));
    expect(await pages({ column: 'created_at', order: 'desc' })).toEqual(chunk([...names].reverse()));
  });

  it('with_delimiter folds deeper keys into folders; the prefix is a raw string prefix', async () => {
    const { data } = await admin.storage.from(V).listV2({ prefix: 'testpath/', with_delimiter: true });
    expect(data?.folders).toEqual([{ key: 'sub', name: 'testpath/sub/' }]);
    expect(data?.objects.map((o) => o.name)).toEqual(names);
    const top = await admin.storage.from(V).listV2({ prefix: 'testpath', with_delimiter: true });
    expect(top.data?.folders).toEqual([
      { key: 'testpath', name: 'testpath/' },
      { key: 'testpath2', name: 'testpath2/' },
    ]);
    const flat = await admin.storage.from(V).listV2({ prefix: 'testpath' });
    expect(flat.data?.objects).toHaveLength(10);
    expect(flat.data?.folders).toEqual([]);
  });
});

describe('signed and public URLs', () => {
  beforeAll(async () => {
    await admin.storage.from(B).upload('secret.txt', 'for your eyes');
    await admin.storage.from(PUB).upload('logo.txt', 'public logo', { contentType: 'text/plain' });
  });

  it("sign and list bodies are read as storage's validator reads them: a number in a string is a number, and what is not one is refused with its message", async () => {
    // expiresIn "60" and limit "1" were refused ("body/expiresIn must be >= 1", "body/limit must be an integer >= 0"),
    // limit 0 listed nothing where storage refuses it; storage's JSON-schema validator coerces types (Fastify's Ajv).
    const post = async (p: string, body: Record<string, unknown>) => {
      const res = await fetch(`${lb.url}/storage/v1/object/${p}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${lb.serviceRoleKey}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      return [res.status, await res.json()] as const;
    };
    for (const expiresIn of ['60', [60], 60]) {
      const [status, body] = await post(`sign/${B}/secret.txt`, { expiresIn });
      expect([status, typeof (body as { signedURL?: unknown }).signedURL], JSON.stringify(expiresIn)).toEqual([200, 'string']);
    }
    const refused = (message: string) => [400, { statusCode: '400', code: 'InvalidRequest', error: 'Bad Request', message }];
    expect(await post(`sign/${B}/secret.txt`, { expiresIn: 'soon' })).toEqual(refused('body/expiresIn must be integer'));
    expect(await post(`sign/${B}/secret.txt`, { expiresIn: 1.5 })).toEqual(refused('body/expiresIn must be integer'));
    expect(await post(`sign/${B}/secret.txt`, { expiresIn: 0 })).toEqual(refused('body/expiresIn must be >= 1'));
    expect(await post('sign/' + B, { expiresIn: '60', paths: ['secret.txt'] })).toMatchObject([200, [{ path: 'secret.txt' }]]);
    const [listed, items] = await post(`list/${B}`, { prefix: '', limit: '1', offset: '0' });
    expect([listed, (items as unknown[]).length]).toEqual([200, 1]);
    expect(await post(`list/${B}`, { prefix: '', limit: 0 })).toEqual(refused('body/limit must be >= 1'));
    expect(await post(`list/${B}`, { prefix: '', limit: 'x' })).toEqual(refused('body/limit must be integer'));
    expect(await post(`list/${B}`, { prefix: '', offset: -1 })).toEqual(refused('body/offset must be >= 0'));
    expect(await post(`list/${B}`, { prefix: {} })).toEqual(refused('body/prefix must be string'));
  });

  it("copy and move read their keys as storage's validator does: a number is its text, an object is refused", async () => {
    // destinationKey 123 was refused "body must have required property 'destinationKey'" though it was there.
    const post = async (op: string, body: Record<string, unknown>) => {
      const res = await fetch(`${lb.url}/storage/v1/object/${op}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${lb.serviceRoleKey}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      return [res.status, await res.json()] as const;
    };
    expect(await post('copy', { bucketId: B, sourceKey: 'secret.txt', destinationKey: 123 })).toMatchObject([200, { Key: `${B}/123` }]);
    expect(await post('move', { bucketId: B, sourceKey: 123, destinationKey: 456, destinationBucket: '' })).toMatchObject([200, { message: 'Successfully moved' }]);
    expect(await (await admin.storage.from(B).download('456')).data?.text()).toBe('for your eyes');
    const refused = (message: string) => [400, { statusCode: '400', code: 'InvalidRequest', error: 'Bad Request', message }];
    expect(await post('copy', { bucketId: B, sourceKey: 'secret.txt', destinationKey: {} })).toEqual(refused('body/destinationKey must be string'));
    expect(await post('move', { bucketId: B, sourceKey: 'secret.txt' })).toEqual(refused("body must have required property 'destinationKey'"));
  });

  it('createSignedUrl: fetchable without any header until it expires; download adds Content-Disposition', async () => {
    const s = await admin.storage.from(B).createSignedUrl('secret.txt', 60, { download: 'x.txt' });
    expect(s.error).toBeNull();
    expect(s.data?.signedUrl).toContain(`/storage/v1/object/sign/${B}/secret.txt?token=`);
    const res = await fetch(s.data!.signedUrl);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('for your eyes');
    expect(res.headers.get('content-disposition')).toContain('filename=x.txt');

    const short = await admin.storage.from(B).createSignedUrl('secret.txt', 1);
    await new Promise((r) => setTimeout(r, 2100));
    const late = await fetch(short.data!.signedUrl);
    expect(late.status).toBe(400);
    expect(await late.json()).toMatchObject({ statusCode: '400', error: 'InvalidJWT' });
  });

  it('a token is only good for its own object', async () => {
    const s = await admin.storage.from(B).createSignedUrl('secret.txt', 60);
    const token = new URL(s.data!.signedUrl).searchParams.get('token');
    const res = await fetch(`${lb.url}/storage/v1/object/sign/${B}/here.txt?token=${token}`);
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ statusCode: '400', error: 'InvalidSignature' });
    const forged = await fetch(`${lb.url}/storage/v1/object/sign/${B}/secret.txt?token=${lb.serviceRoleKey}`);
    expect(forged.status).toBe(400);
  });

  it("a token signed for uploads does not download, nor one for downloads upload: storage's 'Token is not scoped for …'", async () => {
    // Both said only "Invalid signature", which reads as a forged or mistyped token.
    const up = await admin.storage.from(B).createSignedUploadUrl('secret.txt', { upsert: true });
    const asDownload = await fetch(`${lb.url}/storage/v1/object/sign/${B}/secret.txt?token=${up.data!.token}`);
    expect([asDownload.status, await asDownload.json()]).toEqual([
      400,
      { statusCode: '400', code: 'InvalidSignature', error: 'InvalidSignature', message: 'Token is not scoped for download' },
    ]);
    const down = await admin.storage.from(B).createSignedUrl('secret.txt', 60);
    const token = new URL(down.data!.signedUrl).searchParams.get('token')!;
    const asUpload = await admin.storage.from(B).uploadToSignedUrl('secret.txt', token, 'overwritten?');
    expect(errOf(asUpload.error)).toEqual({ statusCode: '400', message: 'Token is not scoped for upload' });
    expect(await (await admin.storage.from(B).download('secret.txt')).data?.text()).toBe('for your eyes');
  });

  it('createSignedUrls: one entry per path, in order, missing ones with an error', async () => {
    const s = await admin.storage.from(B).createSignedUrls(['secret.txt', 'missing.txt'], 60);
    expect(s.data?.map((e) => [e.path, e.error, typeof e.signedUrl])).toEqual([
      ['secret.txt', null, 'string'],
      ['missing.txt', 'Either the object does not exist or you do not have access to it', 'object'],
    ]);
    expect(await (await fetch(s.data![0]!.signedUrl as string)).text()).toBe('for your eyes');
    expect(errOf((await admin.storage.from(B).createSignedUrl('missing.txt', 60)).error)?.statusCode).toBe('404');
  });

  it('signed upload URL: one use without upsert (then 409), overwrites with upsert', async () => {
    const s = await admin.storage.from(B).createSignedUploadUrl('signed/up.txt');
    expect(s.error).toBeNull();
    expect(s.data?.signedUrl).toContain(`/storage/v1/object/upload/sign/${B}/signed/up.txt`);
    const first = await admin.storage.from(B).uploadToSignedUrl('signed/up.txt', s.data!.token, 'first');
    expect(first.error).toBeNull();
    expect(first.data).toMatchObject({ path: 'signed/up.txt', fullPath: `${B}/signed/up.txt` });
    const second = await admin.storage.from(B).uploadToSignedUrl('signed/up.txt', s.data!.token, 'second');
    expect(errOf(second.error)).toEqual({ statusCode: '409', message: 'The resource already exists' });

    const u = await admin.storage.from(B).createSignedUploadUrl('signed/up.txt', { upsert: true });
    expect((await admin.storage.from(B).uploadToSignedUrl('signed/up.txt', u.data!.token, 'third')).error).toBeNull();
    expect(await (await admin.storage.from(B).download('signed/up.txt')).data?.text()).toBe('third');
    const other = await admin.storage.from(B).uploadToSignedUrl('signed/other.txt', u.data!.token, 'x');
    expect(errOf(other.error)?.statusCode).toBe('400');
  });

  it('public URLs work without any header for public buckets only', async () => {
    const url = admin.storage.from(PUB).getPublicUrl('logo.txt').data.publicUrl;
    expect(url).toBe(`${lb.url}/storage/v1/object/public/${PUB}/logo.txt`);
    const res = await fetch(url);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('public logo');
    const priv = await fetch(admin.storage.from(B).getPublicUrl('secret.txt').data.publicUrl);
    expect(priv.status).toBe(400);
    expect(await priv.json()).toEqual({ statusCode: '404', code: 'NoSuchBucket', error: 'Bucket not found', message: 'Bucket not found' });
  });

  it('image transformations are not offered: the render routes answer 404', async () => {
    const res = await fetch(`${lb.url}/storage/v1/render/image/public/${PUB}/logo.txt?width=10`);
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ statusCode: '404', error: 'Not Found' });
  });
});
