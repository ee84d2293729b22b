// Keep-alive carry-over (README "Keep-alive carry-over"): Linux paces by departure
// time. Every skb sent under SO_MAX_PACING_RATE moves the socket's next departure
// time len / rate ahead; removing the cap changes neither that time nor the pacing
// rate before the next ACK. So whatever skb a paced response sends last, the next
// response on the connection waits its length at the old rate: up to 64 KB (a
// second at 500 kbit/s on a veth pair, where TCP builds 64 KB skbs at microsecond
// RTTs).
//
// The server therefore sends the last byte of a paced body on its own: it holds it
// back until everything before it has left the socket, removes the cap, and then
// writes it. That byte still leaves at its paced time (the departure time the skb
// before it set), so the response keeps its rate to the end; and since the last
// skb is one byte long, the departure time it leaves behind is 1 byte / old rate
// ahead: the next response waits for nothing. The cost is at most one small packet
// more per paced response (measured on a veth pair: bench section `carryover`; a
// whole last packet held back instead left up to 1448 bytes / old rate, 23 ms at
// 500 kbit/s).

import { Transform, type TransformCallback } from 'node:stream';

/** Bytes held back from the end of a paced body: the length of the last skb, whose departure time the next response inherits. */
export const TAIL_BYTES = 1;

/**
 * Passes a body through except its last `tailBytes`, which it writes only once
 * `release()` resolves (the controller waits there for the rest to leave the
 * socket and lifts the cap). Chunks are passed on as they come (sliced, not
 * copied); only a chunk shorter than the tail is ever concatenated.
 */
export class TailGate extends Transform {
  readonly #tailBytes: number;
  readonly #release: () => Promise<void>;
  #held: Buffer[] = [];
  #heldBytes = 0;

  constructor(tailBytes: number, release: () => Promise<void>) {
    super();
    this.#tailBytes = Math.max(1, tailBytes);
    this.#release = release;
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.#held.push(chunk);
    this.#heldBytes += chunk.length;
    let excess = this.#heldBytes - this.#tailBytes;
    while (excess > 0) {
      const head = this.#held[0]!;
      const bytes = Math.min(head.length, excess);
      this.push(bytes === head.length ? head : head.subarray(0, bytes));
      if (bytes === head.length) this.#held.shift();
      else this.#held[0] = head.subarray(bytes);
      this.#heldBytes -= bytes;
      excess -= bytes;
    }
    callback();
  }

  override _flush(callback: TransformCallback): void {
    this.#release().then(
      () => {
        if (this.destroyed) return callback();
        if (this.#heldBytes > 0) this.push(this.#held.length === 1 ? this.#held[0]! : Buffer.concat(this.#held));
        this.#held = [];
        this.#heldBytes = 0;
        callback();
      },
      (err: unknown) => callback(err as Error),
    );
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    this.#held = [];
    this.#heldBytes = 0;
    callback(error);
  }
}
