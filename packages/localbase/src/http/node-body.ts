// Responses whose body is a stored file, sent straight from disk into the Node response by the HTTP layer.
import { createReadStream } from 'node:fs';
import { open } from 'node:fs/promises';
import type { ServerResponse } from 'node:http';
import { Readable } from 'node:stream';

/** Bytes `start` to `end` (inclusive) of the file at `path`: `end` < `start` for none. */
export interface FileBody {
  path: string;
  start: number;
  end: number;
}

/** Chunk size: 64 KiB (Node's default) costs one trip through the streams per 64 KiB. */
const CHUNK_BYTES = 1024 * 1024;

/**
 * The file behind each file Response's body. Keyed by the body, not the Response: hono copies a handler's Response
 * into a new one, with the same body, to add the context's headers.
 */
const fileBodies = new WeakMap<ReadableStream, FileBody>();

/**
 * A Response whose body is (part of) a file, opened only when the body is read. Served by the Node server, the HTTP
 * layer sends the file itself instead (fileBodyOf, sendFile). Elsewhere (`app.request()` in tests) it is an
 * ordinary Response.
 */
export function fileResponse(file: FileBody, init: ResponseInit): Response {
  let reader: ReadableStreamDefaultReader<Uint8Array> | undefined;
  const body = new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        if (file.end < file.start) return controller.close();
        reader ??= (
          Readable.toWeb(createReadStream(file.path, { start: file.start, end: file.end, highWaterMark: CHUNK_BYTES })) as ReadableStream<Uint8Array>
        ).getReader();
        const { done, value } = await reader.read();
        if (done) controller.close();
        else controller.enqueue(value);
      },
      cancel: (reason) => reader?.cancel(reason),
    },
    // nothing is read (the file is not even opened) until someone reads the body
    { highWaterMark: 0 },
  );
  fileBodies.set(body, file);
  return new Response(body, init);
}

/** The file of a Response made by fileResponse whose body nobody has read. */
export function fileBodyOf(response: Response): FileBody | undefined {
  const body = response.body;
  return !body || response.bodyUsed || body.locked ? undefined : fileBodies.get(body);
}

/**
 * Writes the file's bytes to `out` (its head already written) and ends it, through two buffers used in turn: each is
 * read into again only once the socket has taken its bytes (the write's callback). A stream of the file allocates a
 * new 1 MiB buffer per chunk, and collecting those cost more than the reads and writes (ADR 179). Resolves when done
 * or when the client went away; rejects when the file cannot be read (the response is then destroyed).
 */
export async function sendFile(file: FileBody, out: ServerResponse): Promise<void> {
  let gone = out.destroyed;
  const onClose = () => {
    gone = true;
  };
  out.once('close', onClose);
  const handle = file.end < file.start ? undefined : await open(file.path, 'r');
  try {
    const buffers = [Buffer.allocUnsafe(CHUNK_BYTES), Buffer.allocUnsafe(CHUNK_BYTES)];
    const written: (Promise<void> | undefined)[] = [undefined, undefined];
    const write = (chunk: Buffer) =>
      new Promise<void>((resolve) => {
        // resolved once the socket has the bytes, or with the connection gone (its error is the close's)
        out.once('close', resolve);
        out.write(chunk, () => {
          out.off('close', resolve);
          resolve();
        });
      });
    let position = file.start;
    for (let turn = 0; handle && position <= file.end && !gone; turn ^= 1) {
      await written[turn];
      if (gone) break;
      const buffer = buffers[turn] as Buffer;
      const { bytesRead } = await handle.read(buffer, 0, Math.min(CHUNK_BYTES, file.end - position + 1), position);
      if (bytesRead === 0) throw new Error(`${file.path}: the file ended before byte ${file.end}`);
      position += bytesRead;
      written[turn] = write(buffer.subarray(0, bytesRead));
    }
    await Promise.all(written);
    if (!gone) out.end();
  } catch (err) {
    out.destroy();
    throw err;
  } finally {
    out.off('close', onClose);
    await handle?.close();
  }
}
