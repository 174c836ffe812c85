/**
 * Object bytes on disk (decision 036). Each stored version is one file, named by the object's id and version:
 * `<root>/objects/<id[0..2]>/<id>/<version>`. Names chosen by clients never reach the file system, so `../`, NUL or
 * very long keys cannot escape the folder. A write goes to `<root>/tmp/`, is fsynced, then renamed into place
 * (rename is atomic within one file system) before the database row that points to it is committed; the previous
 * version's file is deleted after that commit. A crash (kill -9) in between leaves an unreferenced file, never a row
 * without its bytes nor a torn file; `sweep` deletes such leftovers when the server starts.
 */
import { createHash, randomUUID } from 'node:crypto';
import { createReadStream, type ReadStream } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Queryable } from '../db/types.ts';
import type { Readable } from 'node:stream';
import { invalidRequest, tooLarge } from './errors.ts';

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
    const md5 = createHash('md5');
    let size = 0;
    try {
      await consume(source, async (chunk) => {
        size += chunk.byteLength;
        if (size > limit) throw tooLarge();
        md5.update(chunk);
        let off = 0;
        while (off < chunk.byteLength) off += (await fh.write(chunk, off, chunk.byteLength - off)).bytesWritten;
      });
      await fh.sync();
    } catch (err) {
      await fh.close().catch(() => {});
      await fs.rm(tmp, { force: true });
      throw err;
    }
    await fh.close();
    return { tmp, size, etag: `"${md5.digest('hex')}"` };
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

  open(id: string, version: string, range?: { start: number; end: number }): ReadStream {
    return createReadStream(this.pathOf(id, version), range ? { start: range.start, end: range.end } : {});
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
    let pending: Promise<void> = Promise.resolve();
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
    const onData = (chunk: Buffer | string): void => {
      const buf = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
      source.pause();
      pending = pending
        .then(() => (done ? undefined : onChunk(buf)))
        .then(() => {
          if (!done) source.resume();
        });
      pending.catch(finish);
    };
    const onEnd = (): void => {
      pending.then(() => finish(), finish);
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

/** A body that stopped before its end (the client went away): a client error, not a server failure. */
function abortedOr(err: unknown): unknown {
  if (err instanceof Error && !/aborted|ECONNRESET|premature close/i.test(err.message)) return err;
  return invalidRequest('The request body ended before it was complete');
}
