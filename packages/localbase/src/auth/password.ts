// Password hashing off the HTTP thread (decision 019).
//
// bcrypt at cost 10 costs ~65–100 ms of CPU. On the HTTP thread (bcryptjs) a burst of sign-ins stopped every other
// request for seconds. @node-rs/bcrypt runs each hash/compare in libuv's thread pool; a small FIFO gate keeps at
// most `concurrency` of them running, so that on a small machine the HTTP thread and the PGlite worker keep a core
// and the pool keeps a thread for file-system and DNS work.
import { availableParallelism } from 'node:os';
import { hash as bcryptHash, verify as bcryptVerify } from '@node-rs/bcrypt';

/** GoTrue's cost (golang.org/x/crypto/bcrypt's DefaultCost). */
export const BCRYPT_COST = 10;

/**
 * One fewer than the CPU cores, at least 1 and at most 3 (libuv's pool has 4 threads unless UV_THREADPOOL_SIZE says
 * otherwise): measured on 2 cores, 1 keeps an unrelated request at its idle latency during a burst of 50 sign-ins.
 */
export function defaultPasswordHashConcurrency(): number {
  return Math.min(3, Math.max(1, availableParallelism() - 1));
}

/** A FIFO gate: at most `max` tasks run at once, the others wait in arrival order. */
class Gate {
  #active = 0;
  readonly #waiting: (() => void)[] = [];
  readonly #max: number;

  constructor(max: number) {
    this.#max = max;
  }

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.#active >= this.#max) await new Promise<void>((resolve) => this.#waiting.push(resolve));
    else this.#active += 1;
    try {
      return await task();
    } finally {
      const next = this.#waiting.shift();
      // The slot passes straight to the next waiter (no window in which a newcomer could jump the queue).
      if (next) next();
      else this.#active -= 1;
    }
  }
}

export class PasswordHasher {
  readonly concurrency: number;
  readonly #gate: Gate;

  constructor(concurrency = defaultPasswordHashConcurrency()) {
    if (!Number.isInteger(concurrency) || concurrency < 1)
      throw new RangeError(`passwordHashConcurrency must be a positive integer, got ${concurrency}`);
    this.concurrency = concurrency;
    this.#gate = new Gate(concurrency);
  }

  /**
   * A new `$2a$10$…` hash, as GoTrue (Go's bcrypt) writes them. The binding labels its output `$2y$`; the computation
   * is the same for $2a$/$2b$/$2y$ (the labels differ only for the historical bugs of other implementations), and
   * pgcrypto's crypt() verifies `$2a$` but not `$2b$`, so the hash is stored with GoTrue's label.
   */
  hash(password: string): Promise<string> {
    return this.#gate.run(async () => {
      const hashed = await bcryptHash(password, BCRYPT_COST);
      return hashed.replace(/^\$2[by]\$/, '$2a$');
    });
  }

  /** Does the password match the stored hash ($2a$, $2b$, $2y$, $2x$)? A malformed hash is simply no match. */
  verify(password: string, hash: string): Promise<boolean> {
    return this.#gate.run(async () => {
      try {
        return await bcryptVerify(password, hash);
      } catch {
        return false;
      }
    });
  }
}
