/**
 * Object bytes on disk (decision 036). Each stored version is one file, named by the object's id and version:
 * `<root>/objects/<id[0..2]>/<id>/<version>`. Names chosen by clients never reach the file system, so `../`, NUL or
 * very long keys cannot escape the folder. A write goes to `<root>/tmp/`, is fsynced, then renamed into place
 * (rename is atomic within one file system) before the database row that points to it is committed; the previous
 * version's file is deleted after that commit. A crash (kill -9) in between leaves an unreferenced file, never a row
 * without its bytes nor a torn file; `sweep` deletes such leftovers when the server starts. A connection lost during
 * the row's transaction (perhaps after its COMMIT) keeps the file unless the database says the row did not commit.
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Queryable } from '../db/types.ts';
import type { Readable } from 'node:stream';
import { invalidRequest, tooLarge } from './errors.ts';
import { UploadHasher } from './hasher.ts';

export interface WrittenFile {
  /** The temporary file, to be handed to `commit` (or `discard`). */
  tmp: string;
  size: number;
  /** Quoted MD5 of the bytes, as S3 / Supabase's storage server's ETag. */
  etag: string;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export class ObjectFiles {
  readonly root: string;
  readonly #tmpDir: string;
  readonly #objectsDir: string;
  /** The uploads' MD5, computed by a worker thread from what is written (decision 054). */
  readonly hasher = new UploadHasher();
  constructor(root: string) {
    this.root = root;
    this.#tmpDir = path.join(root, 'tmp');
    this.#objectsDir = path.join(root, 'objects');
  }

  async init(): Promise<void> {
    await fs.mkdir(this.#tmpDir, { recursive: true });
    await fs.mkdir(this.#objectsDir, { recursive: true });
  }

  /** The file of one version; ids and versions are UUIDs generated here, checked again so no path can be forged. */
  pathOf(id: string, version: string): string {
    if (!UUID.test(id) || !UUID.test(version)) throw new Error(`storage: not an object id/version: ${id}/${version}`);
    return path.join(this.#objectsDir, id.slice(0, 2), id, version);
  }

  /**
   * Streams `source` into a temporary file, counting bytes: past `limit` the stream is abandoned and the file
   * deleted (413). The bytes are fsynced before this returns.
   */
  async write(source: Readable, limit: number): Promise<WrittenFile> {
    const tmp = path.join(this.#tmpDir, randomUUID());
    const fh = await fs.open(tmp, 'wx', 0o600);
    const hash = this.hasher.begin(tmp);
    const out = new FileWriter(fh, (bytes) => hash.written(bytes));
    let size = 0;
    let digest: string;
    let hashed: Promise<string> | undefined;
    try {
      await consume(source, (chunk) => {
        size += chunk.byteLength;
        if (size > limit) throw tooLarge();
        return out.push(chunk);
      });
      // the worker hashes the last batches while the writer writes them and fsyncs
      hashed = hash.end(size);
      await out.finish();
      digest = await hashed;
    } catch (err) {
      hash.abort();
      hashed?.catch(() => {});
      await out.abandon();
      await fh.close().catch(() => {});
      await fs.rm(tmp, { force: true });
      throw err;
    }
    await fh.close();
    return { tmp, size, etag: `"${digest}"` };
  }

  /** Stops the hashing thread (the server stops). */
  async close(): Promise<void> {
    await this.hasher.close();
  }

  /** Copies a stored version to a temporary file (for copy). */
  async duplicate(id: string, version: string): Promise<string> {
    const tmp = path.join(this.#tmpDir, randomUUID());
    await fs.copyFile(this.pathOf(id, version), tmp, fs.constants.COPYFILE_EXCL);
    const fh = await fs.open(tmp, 'r+');
    try {
      await fh.sync();
    } finally {
      await fh.close();
    }
    return tmp;
  }

  /** Moves a temporary file to its final name (atomic rename) and makes the rename durable (fsync of the folder). */
  async commit(tmp: string, id: string, version: string): Promise<void> {
    const dest = this.pathOf(id, version);
    const dir = path.dirname(dest);
    await fs.mkdir(dir, { recursive: true });
    try {
      await fs.rename(tmp, dest);
    } catch (err) {
      // the object's folder was removed meanwhile (its previous version deleted by another request): once more
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT' || !(await exists(tmp))) throw err;
      await fs.mkdir(dir, { recursive: true });
      await fs.rename(tmp, dest);
    }
    await syncDir(dir);
  }

  async discard(tmp: string): Promise<void> {
    await fs.rm(tmp, { force: true });
  }

  /** Deletes one version (and the object's folder when it was the last); missing files are fine. */
  async remove(id: string, version: string | null | undefined): Promise<void> {
    if (!version || !UUID.test(id) || !UUID.test(version)) return;
    const file = this.pathOf(id, version);
    await fs.rm(file, { force: true });
    await fs.rmdir(path.dirname(file)).catch(() => {}); // not empty (another version being written) or gone
  }

  async stat(id: string, version: string): Promise<{ size: number } | null> {
    try {
      return { size: (await fs.stat(this.pathOf(id, version))).size };
    } catch {
      return null;
    }
  }

  /**
   * Deletes what a crash left: every temporary file, and every version file no row of storage.objects names.
   * Run at start, before the server accepts requests.
   */
  async sweep(db: Queryable): Promise<{ removed: number }> {
    let removed = 0;
    for (const name of await fs.readdir(this.#tmpDir).catch(() => [] as string[])) {
      await fs.rm(path.join(this.#tmpDir, name), { force: true, recursive: true });
      removed++;
    }
    const { rows } = await db.query<{ id: string; version: string | null }>('select id::text as id, version from storage.objects');
    const live = new Set(rows.map((r) => `${r.id}/${r.version ?? ''}`));
    for (const shard of await fs.readdir(this.#objectsDir).catch(() => [] as string[])) {
      const shardDir = path.join(this.#objectsDir, shard);
      for (const id of await fs.readdir(shardDir).catch(() => [] as string[])) {
        const idDir = path.join(shardDir, id);
        for (const version of await fs.readdir(idDir).catch(() => [] as string[])) {
          if (live.has(`${id}/${version}`)) continue;
          await fs.rm(path.join(idDir, version), { force: true, recursive: true });
          removed++;
        }
        await fs.rmdir(idDir).catch(() => {});
      }
    }
    return { removed };
  }

  /** Deletes every stored file (db reset). */
  async clear(): Promise<void> {
    await fs.rm(this.#objectsDir, { recursive: true, force: true });
    await this.init();
  }
}

async function exists(file: string): Promise<boolean> {
  return fs.access(file).then(
    () => true,
    () => false,
  );
}

async function syncDir(dir: string): Promise<void> {
  const fh = await fs.open(dir, 'r');
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}

/**
 * Reads a stream chunk by chunk (one `onChunk` at a time, the stream paused meanwhile) without ever destroying it:
 * when `onChunk` throws (too large …) the listeners are removed and the stream is left paused, so that the HTTP layer
 * can answer and then drain the rest of the request body on a live connection (decision 020). Destroying an
 * IncomingMessage would reset the connection before the answer reaches the client.
 */
export function consume(source: Readable, onChunk: (chunk: Buffer) => Promise<void> | void): Promise<void> {
  return new Promise((resolve, reject) => {
    let done = false;
    /** Set while a chunk's promise is pending (the stream is paused meanwhile). */
    let pending: Promise<void> | undefined;
    const finish = (err?: unknown): void => {
      if (done) return;
      done = true;
      source.off('data', onData);
      source.off('end', onEnd);
      source.off('error', onError);
      source.off('close', onClose);
      source.pause();
      if (err === undefined) resolve();
      else reject(err);
    };
    /** One chunk: synchronous work goes on at once; a promise pauses the stream until it settles. */
    const handle = (buf: Buffer): void => {
      if (done) return;
      let result: Promise<void> | void;
      try {
        result = onChunk(buf);
      } catch (err) {
        finish(err);
        return;
      }
      if (!result) return;
      source.pause();
      const waited: Promise<void> = result.then(() => {
        if (pending === waited) pending = undefined;
        if (!done) source.resume();
      });
      pending = waited;
      waited.catch(finish);
    };
    const onData = (chunk: Buffer | string): void => {
      const buf = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
      // a chunk that arrives while one is still pending (paused streams may hand out what they already hold) waits its turn
      if (pending) pending = pending.then(() => handle(buf));
      else handle(buf);
    };
    const onEnd = (): void => {
      if (pending) pending.then(() => finish(), finish);
      else finish();
    };
    const onError = (err: unknown): void => finish(abortedOr(err));
    const onClose = (): void => {
      if (!source.readableEnded) finish(abortedOr(undefined));
    };
    source.on('data', onData);
    source.once('end', onEnd);
    source.once('error', onError);
    source.once('close', onClose);
    source.resume();
  });
}

/** Bytes queued for the file before the body is paused; one batch is written while the next one fills. */
const WRITE_QUEUE_BYTES = 4 * 1024 * 1024;
/** Written bytes after which the disk is asked to start writing them back (fdatasync in the background). */
const WRITEBACK_BYTES = 8 * 1024 * 1024;

/**
 * Writes an upload's chunks to its file while the next ones arrive: chunks are queued and written in batches (one
 * writev at a time, so the body is not paused for every 64 KiB chunk), and every few MiB an fdatasync runs in the
 * background so that the disk writes the bytes back while the upload goes on, instead of all of them in the final
 * fsync. `push` returns a promise (the caller pauses the body) only while WRITE_QUEUE_BYTES wait behind the write in
 * flight: at most about twice that is held in memory. `finish` writes what is left and fsyncs the file: the bytes
 * are durable when it returns, exactly as before (the file is renamed and its row committed only after that).
 */
class FileWriter {
  readonly #fh: fs.FileHandle;
  /** Told the running total of bytes written after each batch. */
  readonly #onWritten: (bytes: number) => void;
  #queue: Buffer[] = [];
  #queued = 0;
  #position = 0;
  #sinceSync = 0;
  #writing: Promise<void> | undefined;
  #syncing: Promise<void> | undefined;
  #failed: { err: unknown } | undefined;
  #waiters: { resolve: () => void; reject: (err: unknown) => void }[] = [];

  constructor(fh: fs.FileHandle, onWritten: (bytes: number) => void = () => {}) {
    this.#fh = fh;
    this.#onWritten = onWritten;
  }

  push(chunk: Buffer): Promise<void> | undefined {
    if (this.#failed) throw this.#failed.err;
    this.#queue.push(chunk);
    this.#queued += chunk.byteLength;
    this.#writing ??= this.#drain();
    if (this.#queued < WRITE_QUEUE_BYTES) return undefined;
    return new Promise((resolve, reject) => this.#waiters.push({ resolve, reject }));
  }

  async finish(): Promise<void> {
    while (this.#writing) await this.#writing;
    if (this.#syncing) await this.#syncing;
    if (this.#failed) throw this.#failed.err;
    await this.#fh.sync();
  }

  /** Waits for the operations in flight (so the file can be closed and deleted); errors no longer matter. */
  async abandon(): Promise<void> {
    this.#failed ??= { err: new Error('abandoned') };
    this.#queue = [];
    this.#queued = 0;
    while (this.#writing) await this.#writing.catch(() => {});
    await this.#syncing?.catch(() => {});
  }

  async #drain(): Promise<void> {
    try {
      while (this.#queue.length > 0 && !this.#failed) {
        const batch = this.#queue;
        const bytes = this.#queued;
        this.#queue = [];
        this.#queued = 0;
        for (const w of this.#waiters.splice(0)) w.resolve(); // room for the next batch while this one is written
        await writeAll(this.#fh, batch, this.#position);
        this.#position += bytes;
        this.#onWritten(this.#position);
        this.#sinceSync += bytes;
        if (this.#sinceSync >= WRITEBACK_BYTES && !this.#syncing) {
          this.#sinceSync = 0;
          this.#syncing = this.#fh.datasync().then(
            () => {
              this.#syncing = undefined;
            },
            (err: unknown) => {
              this.#syncing = undefined;
              this.#fail(err);
            },
          );
        }
      }
    } catch (err) {
      this.#fail(err);
    } finally {
      this.#writing = undefined;
    }
  }

  #fail(err: unknown): void {
    this.#failed ??= { err };
    for (const w of this.#waiters.splice(0)) w.reject(err);
  }
}

/** writev of every buffer at `position`, again for what a short write left. */
async function writeAll(fh: fs.FileHandle, buffers: Buffer[], position: number): Promise<void> {
  let bufs = buffers;
  let pos = position;
  while (bufs.length > 0) {
    let written = (await fh.writev(bufs, pos)).bytesWritten;
    pos += written;
    let i = 0;
    while (i < bufs.length && written >= bufs[i]!.byteLength) written -= bufs[i++]!.byteLength;
    bufs = bufs.slice(i);
    if (written > 0) bufs[0] = bufs[0]!.subarray(written);
  }
}

/** A body that stopped before its end (the client went away): a client error, not a server failure. */
function abortedOr(err: unknown): unknown {
  if (err instanceof Error && !/aborted|ECONNRESET|premature close/i.test(err.message)) return err;
  return invalidRequest('The request body ended before it was complete');
}
