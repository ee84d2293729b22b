import { Transform, type TransformCallback } from 'node:stream';
import { BurstClock, type BurstClockOptions } from './burst.js';

export type BurstPacerOptions = BurstClockOptions;

/**
 * Re-times a body into bursts on the stream path: one write per burst of the
 * BurstClock's schedule (burst.ts), so the socket holds at most one burst and TCP
 * sends it as one train of that many packets (README "Burst size", mechanism
 * `app`). Destroying the stream clears its timer: an aborted response leaves
 * nothing behind.
 */
export class BurstPacer extends Transform {
  readonly #clock: BurstClock;
  #queue: Buffer[] = [];
  #queuedBytes = 0;
  #timer: NodeJS.Timeout | null = null;
  #writeCallback: TransformCallback | null = null;
  #flushCallback: TransformCallback | null = null;

  constructor(o: BurstPacerOptions) {
    super();
    this.#clock = new BurstClock(o);
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.#queue.push(chunk);
    this.#queuedBytes += chunk.length;
    this.#writeCallback = callback;
    this.#pump();
  }

  override _flush(callback: TransformCallback): void {
    this.#flushCallback = callback;
    this.#pump();
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
    this.#queue = [];
    this.#queuedBytes = 0;
    this.#writeCallback = null;
    this.#flushCallback = null;
    callback(error);
  }

  #take(bytes: number): Buffer {
    const parts: Buffer[] = [];
    let needed = Math.min(bytes, this.#queuedBytes);
    while (needed > 0) {
      const head = this.#queue[0]!;
      if (head.length <= needed) {
        parts.push(head);
        this.#queue.shift();
        needed -= head.length;
      } else {
        parts.push(head.subarray(0, needed));
        this.#queue[0] = head.subarray(needed);
        needed = 0;
      }
    }
    const out = parts.length === 1 ? parts[0]! : Buffer.concat(parts);
    this.#queuedBytes -= out.length;
    return out;
  }

  readonly #pump = (): void => {
    this.#timer = null;
    if (this.destroyed) return;
    const ending = this.#flushCallback !== null;
    while (this.#queuedBytes > 0 && (ending || this.#queuedBytes >= this.#clock.maxBurstBytes)) {
      const nowMs = performance.now();
      const waitMs = this.#clock.waitMs(nowMs);
      if (waitMs > 0) {
        this.#timer = setTimeout(this.#pump, waitMs);
        return;
      }
      this.push(this.#take(this.#clock.take(nowMs, this.#queuedBytes)));
    }
    if (ending) {
      if (this.#queuedBytes === 0) {
        const flush = this.#flushCallback!;
        this.#flushCallback = null;
        flush();
      }
      return;
    }
    const next = this.#writeCallback;
    this.#writeCallback = null;
    next?.();
  };
}
