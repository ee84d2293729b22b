import { Transform, type TransformCallback } from 'node:stream';

export interface BurstPacerOptions {
  rateBytesPerS: number;
  /** Bytes per write: burstPackets x MSS (strict), or the ~1 ms chunk (not strict). */
  chunkBytes: number;
  /** Strict: every write is exactly chunkBytes (the last may be shorter), never two at once. */
  strict: boolean;
  /** Write sizes stay multiples of this so each write is whole packets. */
  mssBytes: number;
}

/**
 * Re-times a body into bursts: one write of `chunkBytes`, then a wait of
 * chunkBytes / rate, so the socket holds at most one burst and TCP sends it as one
 * train of that many packets (README "Burst size", mechanism `app`).
 *
 * Strict mode keeps its schedule (a late timer shortens the next wait, to no less
 * than half an interval), so it never writes two bursts together. Non-strict mode
 * wakes about once per chunk interval and writes what the schedule owes, between one
 * and two chunks. Destroying the stream clears its timer: an aborted response
 * leaves nothing behind.
 */
export class BurstPacer extends Transform {
  readonly #rateBytesPerS: number;
  readonly #chunkBytes: number;
  readonly #intervalMs: number;
  readonly #strict: boolean;
  readonly #mssBytes: number;
  #queue: Buffer[] = [];
  #queuedBytes = 0;
  #startMs: number | null = null;
  #writtenBytes = 0;
  #dueMs = 0;
  #timer: NodeJS.Timeout | null = null;
  #writeCallback: TransformCallback | null = null;
  #flushCallback: TransformCallback | null = null;

  constructor(o: BurstPacerOptions) {
    super();
    this.#rateBytesPerS = o.rateBytesPerS;
    this.#chunkBytes = Math.max(1, o.chunkBytes);
    this.#intervalMs = (this.#chunkBytes / o.rateBytesPerS) * 1000;
    this.#strict = o.strict;
    this.#mssBytes = Math.max(1, o.mssBytes);
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

  /** Bytes to write now (non-strict): what the schedule owes, whole packets, 1 to 2 chunks. */
  #owedBytes(nowMs: number): number {
    const owed = (this.#rateBytesPerS * (nowMs - this.#startMs!)) / 1000 - this.#writtenBytes;
    const wholePackets = Math.floor(owed / this.#mssBytes) * this.#mssBytes;
    return Math.min(2 * this.#chunkBytes, Math.max(this.#chunkBytes, wholePackets));
  }

  readonly #pump = (): void => {
    this.#timer = null;
    if (this.destroyed) return;
    const ending = this.#flushCallback !== null;
    while (this.#queuedBytes > 0 && (ending || this.#queuedBytes >= (this.#strict ? this.#chunkBytes : 2 * this.#chunkBytes))) {
      const nowMs = performance.now();
      if (nowMs < this.#dueMs) {
        this.#timer = setTimeout(this.#pump, this.#dueMs - nowMs);
        return;
      }
      if (this.#startMs === null) {
        this.#startMs = nowMs;
        this.#dueMs = nowMs;
      }
      const bytes = this.#strict ? this.#chunkBytes : this.#owedBytes(nowMs);
      const out = this.#take(bytes);
      this.#writtenBytes += out.length;
      this.push(out);
      this.#dueMs = this.#strict
        ? Math.max(this.#dueMs + this.#intervalMs, nowMs + this.#intervalMs / 2)
        : nowMs + this.#intervalMs;
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
