/**
 * A room's fan-out (decision 163): the frames one message sends to every member of a room (broadcasts, presence
 * diffs), written at most BYTES_PER_TURN per event-loop turn. A broadcast of 1 MiB to 300 members is 300 MiB of socket
 * writes (≈ 0.5 s of the kernel's copying here); written in one turn, every other socket, HTTP request and database
 * answer of the server waited for it. Written in slices, the rest of the server runs between them.
 *
 * Order is kept: a room's messages reach each member in the order they were sent to the room, a small one waiting
 * behind a large one still being written. A message that fits in the turn's budget is written at once (no
 * delay for the common case). Members are fixed when the message is sent: one who joins meanwhile does not get it,
 * one who left meanwhile is skipped by `send` (it returns 0).
 */
export const BYTES_PER_TURN = 4 * 1024 * 1024;

interface Job<M> {
  readonly members: readonly M[];
  next: number;
  /** Writes the message to one member; the bytes written (0 when skipped). */
  readonly send: (member: M) => number;
}

export class Fanout<M> {
  readonly #queue: Job<M>[] = [];
  #running = false;
  #scheduled = false;
  readonly #budget: number;
  readonly #defer: (run: () => void) => void;

  constructor(budget = BYTES_PER_TURN, defer: (run: () => void) => void = (run) => void setImmediate(run)) {
    this.#budget = budget;
    this.#defer = defer;
  }

  /** Queues one message for `members`; written now as far as this turn's budget allows. */
  push(members: Iterable<M>, send: (member: M) => number): void {
    const list = [...members];
    if (list.length === 0) return;
    this.#queue.push({ members: list, next: 0, send });
    // A send that causes another message (a socket cut as far behind, whose presence leaves) only queues it.
    if (!this.#running && !this.#scheduled) this.#run();
  }

  /** Messages not yet written to every member. */
  get pending(): number {
    return this.#queue.length;
  }

  #run(): void {
    this.#scheduled = false;
    this.#running = true;
    let left = this.#budget;
    try {
      while (this.#queue.length > 0) {
        const job = this.#queue[0]!;
        while (job.next < job.members.length) {
          if (left <= 0) {
            this.#scheduled = true;
            this.#defer(() => this.#run());
            return;
          }
          left -= job.send(job.members[job.next++]!);
        }
        this.#queue.shift();
      }
    } finally {
      this.#running = false;
    }
  }
}
