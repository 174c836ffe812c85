// Image transformations (decision 046): /storage/v1/render/image/{authenticated,public,sign} as Supabase's storage
// server answers them, driven by supabase-js (download / getPublicUrl / createSignedUrl with `transform`). Results
// are decoded with sharp to check what a browser would get: dimensions, format, size.
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SupabaseClient } from '@supabase/supabase-js';
import { cliPath, freePort, nodeBin, spawnCli, stopCli, waitReady, type CliProcess } from './cli.ts';
import { anonClient, serviceClient, signedInClient, startTestServer, type Localbase } from './helpers.ts';

let lb: Localbase;
let admin: SupabaseClient;
let alice: SupabaseClient;
let bob: SupabaseClient;
let anon: SupabaseClient;
let aliceId: string;
const sfx = randomBytes(4).toString('hex');
const PUB = `pics-${sfx}`;
const PRIV = `private-${sfx}`;
let photo: Buffer; // 400 × 300 JPEG
let alicePath: string;

beforeAll(async () => {
  lb = await startTestServer({ imageTransformation: true });
  admin = serviceClient(lb);
  ({ client: alice } = await signedInClient(lb));
  ({ client: bob } = await signedInClient(lb));
  anon = anonClient(lb);
  aliceId = (await alice.auth.getUser()).data.user!.id;
  alicePath = `${aliceId}/photo.jpg`;
  expect((await admin.storage.createBucket(PUB, { public: true })).error).toBeNull();
  expect((await admin.storage.createBucket(PRIV, { public: false })).error).toBeNull();
  await lb.db.exec(`
    create policy "own read ${sfx}" on storage.objects for select to authenticated
      using (bucket_id = '${PRIV}' and (storage.foldername(name))[1] = (select auth.uid()::text));
    create policy "own write ${sfx}" on storage.objects for insert to authenticated
      with check (bucket_id = '${PRIV}' and (storage.foldername(name))[1] = (select auth.uid()::text));
  `);
  // a picture with detail (a gradient), so that quality changes the size
  const w = 400;
  const h = 300;
  const pixels = Buffer.alloc(w * h * 3);
  for (let y = 0; y < h; y++)
    for (let x = 0; x < w; x++) pixels.set([(x * 255) / w, (y * 255) / h, ((x ^ y) * 7) & 255], (y * w + x) * 3);
  photo = await sharp(pixels, { raw: { width: w, height: h, channels: 3 } }).jpeg({ quality: 95 }).toBuffer();
  const png = await sharp(pixels, { raw: { width: w, height: h, channels: 3 } }).png().toBuffer();
  // 10 000 × 6 000 = 60 megapixels, a few hundred kB on disk: a decompression bomb for the 50 MP limit
  const bomb = await sharp({ create: { width: 10_000, height: 6_000, channels: 3, background: '#ffffff' } }).png().toBuffer();
  const up = async (c: SupabaseClient, bucket: string, path: string, body: Buffer | string, contentType: string) =>
    expect((await c.storage.from(bucket).upload(path, body, { contentType, cacheControl: '3600' })).error).toBeNull();
  await up(admin, PUB, 'photo.jpg', photo, 'image/jpeg');
  await up(admin, PUB, 'photo.png', png, 'image/png');
  await up(admin, PUB, 'notes.txt', 'not a picture', 'text/plain');
  await up(admin, PUB, 'bomb.png', bomb, 'image/png');
  // 25 MB + 1 byte: above the source size limit (the bytes need not be an image, the size is checked first)
  await up(admin, PUB, 'huge.jpg', Buffer.concat([photo, Buffer.alloc(25_000_001 - photo.length)]), 'image/jpeg');
  await up(alice, PRIV, alicePath, photo, 'image/jpeg');
}, 60_000);

afterAll(async () => {
  await lb?.db.exec(`
    drop policy if exists "own read ${sfx}" on storage.objects;
    drop policy if exists "own write ${sfx}" on storage.objects;
  `);
  await lb?.stop();
});

const dims = async (bytes: ArrayBuffer | Buffer) => {
  const m = await sharp(Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes)).metadata();
  return { format: m.format, width: m.width, height: m.height };
};
const publicUrl = (path: string, transform: Record<string, unknown>) =>
  admin.storage.from(PUB).getPublicUrl(path, { transform }).data.publicUrl;
const errOf = (e: unknown) => {
  const x = e as { statusCode?: string; message?: string } | null;
  return x && { statusCode: x.statusCode, message: x.message };
};

describe('download, public and signed URLs with transform', () => {
  it('download({ transform }) renders the private object for its owner (RLS select as the caller)', async () => {
    const { data, error } = await alice.storage.from(PRIV).download(alicePath, { transform: { width: 100, height: 100 } });
    expect(error).toBeNull();
    expect(data!.type).toBe('image/jpeg');
    expect(await dims(await data!.arrayBuffer())).toEqual({ format: 'jpeg', width: 100, height: 100 });
    // without transform, the original
    const plain = await alice.storage.from(PRIV).download(alicePath);
    expect(Buffer.from(await plain.data!.arrayBuffer()).equals(photo)).toBe(true);
  });

  it('bob cannot render alice’s private object, anon neither; render/public refuses a private bucket', async () => {
    for (const c of [bob, anon]) {
      const { error } = await c.storage.from(PRIV).download(alicePath, { transform: { width: 100 } });
      expect(errOf(error)).toEqual({ statusCode: '404', message: 'Object not found' });
    }
    const res = await fetch(`${lb.url}/storage/v1/render/image/public/${PRIV}/${alicePath}?width=100`);
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ statusCode: '404', code: 'NoSuchBucket', error: 'Bucket not found', message: 'Bucket not found' });
    // render/authenticated needs a valid JWT (unlike GET /object/{bucket}/…, which lets anon through)
    const none = await fetch(`${lb.url}/storage/v1/render/image/authenticated/${PUB}/photo.jpg?width=100`);
    expect(none.status).toBe(400);
    expect(await none.json()).toMatchObject({ statusCode: '403', code: 'AccessDenied', message: 'Invalid Compact JWS' });
    // and it reads under RLS whatever the bucket: no select policy on the public bucket's objects → not found
    const viaAuth = await alice.storage.from(PUB).download('photo.jpg', { transform: { width: 100 } });
    expect(errOf(viaAuth.error)).toEqual({ statusCode: '404', message: 'Object not found' });
    expect((await admin.storage.from(PUB).download('photo.jpg', { transform: { width: 100 } })).error).toBeNull();
  });

  it('getPublicUrl({ transform }) is served without any header, with the object’s cache headers', async () => {
    const url = publicUrl('photo.jpg', { width: 200, height: 300, quality: 70 });
    expect(url).toBe(`${lb.url}/storage/v1/render/image/public/${PUB}/photo.jpg?width=200&height=300&quality=70`);
    const res = await fetch(url);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('image/jpeg');
    expect(res.headers.get('x-transformations')).toBe('height:300,width:200,resizing_type:fill,quality:70');
    expect(res.headers.get('cache-control')).toBe('max-age=3600');
    expect(res.headers.get('vary')).toBe('Accept');
    expect(res.headers.get('x-robots-tag')).toBe('none');
    const body = Buffer.from(await res.arrayBuffer());
    expect(Number(res.headers.get('content-length'))).toBe(body.length);
    expect(await dims(body)).toEqual({ format: 'jpeg', width: 200, height: 300 });
    // the object's ETag: a browser's revalidation of the same URL gets 304 without a render
    const etag = res.headers.get('etag')!;
    expect(etag).toMatch(/^"[0-9a-f]{32}"$/);
    const again = await fetch(url, { headers: { 'if-none-match': etag } });
    expect(again.status).toBe(304);
    // ?download names the file
    const dl = await fetch(`${url}&download=small.jpg`);
    expect(dl.headers.get('content-disposition')).toBe("attachment; filename=small.jpg; filename*=UTF-8''small.jpg");
    // HEAD: the same headers, no body
    const head = await fetch(url, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-length')).toBe(String(body.length));
  });

  it('createSignedUrl({ transform }): the render path, the token carries the transformations', async () => {
    const { data, error } = await alice.storage
      .from(PRIV)
      .createSignedUrl(alicePath, 60, { transform: { width: 200, height: 200, quality: 60 } });
    expect(error).toBeNull();
    expect(data!.signedUrl).toContain(`/storage/v1/render/image/sign/${PRIV}/${alicePath}?token=`);
    const res = await fetch(data!.signedUrl);
    expect(res.status).toBe(200);
    expect(Number(res.headers.get('content-length'))).toBeGreaterThan(0);
    expect(res.headers.get('x-transformations')).toBe('height:200,width:200,resizing_type:fill,quality:60');
    expect(res.headers.get('expires')).toBe(new Date(Date.parse(res.headers.get('expires')!)).toUTCString());
    expect(res.headers.get('cache-control')).toBeNull();
    expect(await dims(await res.arrayBuffer())).toEqual({ format: 'jpeg', width: 200, height: 200 });
    // the query cannot change what the token says
    const forged = await fetch(`${data!.signedUrl}&width=10&height=10`);
    expect(await dims(await forged.arrayBuffer())).toEqual({ format: 'jpeg', width: 200, height: 200 });
    // nor can the token be used for another object
    const other = await fetch(data!.signedUrl.replace('photo.jpg', 'other.jpg'));
    expect(await other.json()).toMatchObject({ statusCode: '400', code: 'InvalidSignature' });
    // without transform, the object path as before; bob cannot sign alice's object
    const plain = await alice.storage.from(PRIV).createSignedUrl(alicePath, 60);
    expect(plain.data!.signedUrl).toContain(`/storage/v1/object/sign/${PRIV}/${alicePath}?token=`);
    const denied = await bob.storage.from(PRIV).createSignedUrl(alicePath, 60, { transform: { width: 10 } });
    expect(errOf(denied.error)).toEqual({ statusCode: '404', message: 'Object not found' });
    const bad = await alice.storage.from(PRIV).createSignedUrl(alicePath, 60, { transform: { quality: 5 } });
    expect(errOf(bad.error)).toEqual({ statusCode: '400', message: 'body/transform/quality must be >= 20' });
    // numbers sent as strings are taken as numbers, as the server's validator coerces them
    const token = (await alice.auth.getSession()).data.session!.access_token;
    const coerced = await fetch(`${lb.url}/storage/v1/object/sign/${PRIV}/${alicePath}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ expiresIn: 60, transform: { width: '50', resize: 'contain' } }),
    });
    const { signedURL } = (await coerced.json()) as { signedURL: string };
    expect(signedURL).toMatch(new RegExp(`^/render/image/sign/${PRIV}/${alicePath}\\?token=`));
    const small = await fetch(`${lb.url}/storage/v1${signedURL}`);
    expect(small.headers.get('x-transformations')).toBe('width:50,resizing_type:fit');
    expect(await dims(await small.arrayBuffer())).toEqual({ format: 'jpeg', width: 50, height: 38 });
  });
});

describe('resize modes, format and quality', () => {
  const cases: Array<[Record<string, unknown>, { width: number; height: number }, string]> = [
    [{ width: 200, height: 200 }, { width: 200, height: 200 }, 'height:200,width:200,resizing_type:fill'],
    [{ width: 200, height: 200, resize: 'cover' }, { width: 200, height: 200 }, 'height:200,width:200,resizing_type:fill'],
    [{ width: 200, height: 200, resize: 'contain' }, { width: 200, height: 150 }, 'height:200,width:200,resizing_type:fit'],
    [{ width: 200, height: 200, resize: 'fill' }, { width: 200, height: 200 }, 'height:200,width:200,resizing_type:force'],
    [{ width: 200 }, { width: 200, height: 150 }, 'width:200,resizing_type:fill'],
    [{ height: 150 }, { width: 200, height: 150 }, 'height:150,resizing_type:fill'],
    // above the 2000 px clamp, and never enlarged
    [{ width: 5000 }, { width: 400, height: 300 }, 'width:2000,resizing_type:fill'],
  ];
  for (const [transform, size, header] of cases) {
    it(`${JSON.stringify(transform)} → ${size.width}×${size.height}`, async () => {
      const res = await fetch(publicUrl('photo.jpg', transform));
      expect(res.status).toBe(200);
      expect(res.headers.get('x-transformations')).toBe(header);
      expect(await dims(await res.arrayBuffer())).toEqual({ format: 'jpeg', ...size });
    });
  }

  it('webp when the client accepts it and no format is asked; format=origin keeps the source’s; avif on request', async () => {
    const url = publicUrl('photo.jpg', { width: 100 });
    const chrome = await fetch(url, { headers: { accept: 'image/avif,image/webp,image/apng,image/*,*/*;q=0.8' } });
    expect(chrome.headers.get('content-type')).toBe('image/webp');
    expect(await dims(await chrome.arrayBuffer())).toEqual({ format: 'webp', width: 100, height: 75 });
    const refused = await fetch(url, { headers: { accept: 'image/webp;q=0, image/*' } });
    expect(refused.headers.get('content-type')).toBe('image/jpeg');
    const origin = await fetch(publicUrl('photo.jpg', { width: 100, format: 'origin' }), { headers: { accept: 'image/webp' } });
    expect(origin.headers.get('content-type')).toBe('image/jpeg');
    expect(origin.headers.get('vary')).toBeNull();
    const png = await fetch(publicUrl('photo.png', { width: 100 }));
    expect(await dims(await png.arrayBuffer())).toEqual({ format: 'png', width: 100, height: 75 });
    const avif = await fetch(publicUrl('photo.jpg', { width: 100, format: 'avif' }));
    expect(avif.headers.get('content-type')).toBe('image/avif');
    expect(avif.headers.get('x-transformations')).toBe('width:100,resizing_type:fill,format:avif');
    expect(await dims(await avif.arrayBuffer())).toEqual({ format: 'heif', width: 100, height: 75 });
    const webp = await fetch(`${lb.url}/storage/v1/render/image/public/${PUB}/photo.png?format=webp`);
    expect(webp.headers.get('content-type')).toBe('image/webp');
    expect(webp.headers.get('x-transformations')).toBe('format:webp');
    expect(await dims(await webp.arrayBuffer())).toEqual({ format: 'webp', width: 400, height: 300 });
  });

  it('quality changes the size of the result', async () => {
    const low = await (await fetch(publicUrl('photo.jpg', { width: 300, quality: 20 }))).arrayBuffer();
    const high = await (await fetch(publicUrl('photo.jpg', { width: 300, quality: 100 }))).arrayBuffer();
    expect(low.byteLength * 2).toBeLessThan(high.byteLength);
  });
});

describe('errors as the storage server’s', () => {
  const base = () => `${lb.url}/storage/v1/render/image/public/${PUB}`;
  it.each([
    ['width=abc', 'querystring/width must be integer'],
    ['width=1.5', 'querystring/width must be integer'],
    ['height=-5', 'querystring/height must be >= 0'],
    ['quality=10', 'querystring/quality must be >= 20'],
    ['quality=101', 'querystring/quality must be <= 100'],
    ['resize=stretch', 'querystring/resize must be equal to one of the allowed values'],
    ['format=png', 'querystring/format must be equal to one of the allowed values'],
  ])('%s → 400 %s', async (query, message) => {
    const res = await fetch(`${base()}/photo.jpg?${query}`);
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ statusCode: '400', code: 'InvalidRequest', error: 'Bad Request', message });
  });

  it('a file that is not an image, a 60-megapixel bomb and a 25 MB source get a 400, not a crash', async () => {
    const expectError = async (path: string, message: string) => {
      const res = await fetch(`${base()}/${path}?width=100`);
      expect(res.status).toBe(400);
      expect(await res.json()).toEqual({ statusCode: '400', code: 'InvalidRequest', error: 'InvalidRequest', message });
    };
    const before = process.memoryUsage().rss;
    await expectError('notes.txt', 'The source image is invalid or unsupported for rendering');
    await expectError('bomb.png', 'The source image resolution is too large to process');
    await expectError('huge.jpg', 'The source image file is too large to process');
    // 60 MP decoded would be 180 MB of pixels: the bomb was refused from its header
    expect(process.memoryUsage().rss - before).toBeLessThan(100 * 1024 * 1024);
    // missing objects and buckets as on the object routes
    expect(await (await fetch(`${base()}/nothing.jpg`)).json()).toEqual({
      statusCode: '404',
      code: 'NoSuchKey',
      error: 'not_found',
      message: 'Object not found',
    });
    // the server still renders afterwards
    expect((await fetch(publicUrl('photo.jpg', { width: 10 }))).status).toBe(200);
  });

  it('a bad or expired signed token is refused', async () => {
    const res = await fetch(`${lb.url}/storage/v1/render/image/sign/${PRIV}/${alicePath}?token=abc`);
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ statusCode: '400', code: 'InvalidJWT' });
    const missing = await fetch(`${lb.url}/storage/v1/render/image/sign/${PRIV}/${alicePath}`);
    expect(await missing.json()).toMatchObject({ statusCode: '400', code: 'InvalidRequest' });
  });
});

describe('switched off (the default, as the Supabase CLI)', () => {
  let off: Localbase;
  beforeAll(async () => {
    off = await startTestServer({ imageTransformation: false });
  });
  afterAll(async () => {
    await off?.stop();
  });

  it('the render routes answer 404 and signed URLs keep the object path', async () => {
    for (const mode of ['public', 'authenticated', 'sign']) {
      const res = await fetch(`${off.url}/storage/v1/render/image/${mode}/${PUB}/photo.jpg?width=10`);
      expect(res.status).toBe(404);
      expect(await res.json()).toEqual({
        statusCode: '404',
        code: 'InvalidRequest',
        error: 'Not Found',
        message: `Route GET:/render/image/${mode}/${PUB}/photo.jpg not found`,
      });
    }
    const client = serviceClient(off);
    const bucket = `off-${sfx}`;
    expect((await client.storage.createBucket(bucket, { public: true })).error).toBeNull();
    expect((await client.storage.from(bucket).upload('p.jpg', photo, { contentType: 'image/jpeg' })).error).toBeNull();
    const { data } = await client.storage.from(bucket).createSignedUrl('p.jpg', 60, { transform: { width: 10 } });
    expect(data!.signedUrl).toContain(`/storage/v1/object/sign/${bucket}/p.jpg?token=`);
    const res = await fetch(data!.signedUrl);
    expect(Buffer.from(await res.arrayBuffer()).equals(photo)).toBe(true);
  });
});

describe('the switch on the command line', () => {
  const procs: CliProcess[] = [];
  afterAll(async () => {
    for (const p of procs) await stopCli(p);
  });

  it('LOCALBASE_IMAGE_TRANSFORMATION=true turns the render routes on, --no-image-transformation off; --help names both', async () => {
    const on = spawnCli(['--memory', '--quiet'], await freePort(), { LOCALBASE_IMAGE_TRANSFORMATION: 'true' });
    const off = spawnCli(['--memory', '--quiet', '--no-image-transformation'], await freePort(), { LOCALBASE_IMAGE_TRANSFORMATION: 'true' });
    procs.push(on, off);
    await Promise.all([waitReady(on), waitReady(off)]);
    // on: the route exists (the bucket does not)
    const a = await fetch(`${on.url}/storage/v1/render/image/public/nothing/x.png?width=10`);
    expect(await a.json()).toEqual({ statusCode: '404', code: 'NoSuchBucket', error: 'Bucket not found', message: 'Bucket not found' });
    const b = await fetch(`${off.url}/storage/v1/render/image/public/nothing/x.png?width=10`);
    expect(b.status).toBe(404);
    expect(await b.json()).toMatchObject({ error: 'Not Found', message: 'Route GET:/render/image/public/nothing/x.png not found' });
    const help = spawnSync(nodeBin, [cliPath, 'start', '--help'], { encoding: 'utf8' });
    for (const flag of ['--image-transformation', '--no-image-transformation', 'LOCALBASE_IMAGE_TRANSFORMATION'])
      expect(help.stdout).toContain(flag);
  }, 120_000);
});
