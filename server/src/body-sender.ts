// The event loop's side of the zero-copy body path (README "Body path"): starts the
// sender thread (sender-loop.ts), hands it transfers and hears when they end.
//
// Descriptors belong to this side: it duplicates the socket (Node may close its
// own descriptor at any moment, and the number could then name a new connection),
// takes over the file, and closes both once the thread reports the transfer ended,
// so a descriptor the thread may still use is never closed under it.
import { MessageChannel, Worker } from 'node:worker_threads';
import type { BurstClockOptions } from './burst.js';
import { errnoName, loadSendfileBinding, type SendfileBinding } from './sendfile-binding.js';
import type { SenderCommand, SenderReport, SenderSetup, TailMode, TransferEnd, TransferEvent } from './sender-loop.js';
import { parseTcpInfo, type TcpInfo } from './tcpinfo.js';
import { TransferRecord } from './transfer-record.js';

/** How long the thread may take to start (it compiles its TypeScript on a cold cache). */
const START_TIMEOUT_MS = 30_000;
/** Epoll tokens are u32 and 0 is the wake-up eventfd's. */
const MAX_TRANSFER_ID = 0xffffffff;

export interface TransferRequest {
  /** Node's descriptor for the connection (duplicated here; Node keeps its own). */
  socketFd: number;
  /** An open file; the sender owns it from this call on and closes it when the transfer ends. */
  fileFd: number;
  offsetBytes: number;
  lengthBytes: number;
  /** Application-timed bursts; null: the socket takes bytes as fast as its cap lets it. */
  burst: BurstClockOptions | null;
  /** At most about this many bytes wait unsent in the socket (TCP_NOTSENT_LOWAT); null: no limit. */
  notsentLimitBytes: number | null;
  /** Whether the caller writes the body's last bytes after `lengthBytes` (sender-loop.ts TailMode). */
  tail: TailMode;
  /** The caller corked the socket before writing the head (`corkHead`); the thread uncorks it. */
  corked: boolean;
}

export interface TransferCallbacks {
  /** The thread's part is sent (`tail` not `none`): write the tail, then call `Transfer.tailWritten()`. */
  onTailDue: () => void;
  /** Exactly once, after both descriptors are closed. */
  onEnd: (result: TransferResult) => void;
}

export type TransferResult =
  | { outcome: 'done' }
  /** Ended by abort() before it was done. */
  | { outcome: 'aborted' }
  /** `connection`: the client went away (EPIPE, ECONNRESET...); otherwise the file or the sender failed. */
  | { outcome: 'failed'; reason: string; connection: boolean };

/** One file body on its way to a socket. */
export class Transfer {
  readonly #record: SharedArrayBuffer;
  readonly #sent: BigInt64Array;
  readonly #ints: Int32Array;
  readonly #post: (command: 'abort' | 'tailWritten') => void;

  constructor(record: SharedArrayBuffer, post: (command: 'abort' | 'tailWritten') => void) {
    this.#record = record;
    this.#sent = new BigInt64Array(record, 0, 1);
    this.#ints = new Int32Array(record, 0, TransferRecord.infoOffset / 4);
    this.#post = post;
  }

  /** Body bytes the kernel has taken so far (exact at any moment: the thread writes it after each call). */
  get sentBytes(): number {
    return Number(Atomics.load(this.#sent, TransferRecord.sentIndex));
  }

  /** The socket's TCP_INFO when the transfer ended (done: its last byte had left); null before, or if it was unreadable. */
  endTcpInfo(): TcpInfo | null {
    const length = Atomics.load(this.#ints, TransferRecord.infoLengthIndex);
    return length === 0 ? null : parseTcpInfo(Buffer.from(this.#record, TransferRecord.infoOffset, length), length);
  }

  /** Stops sending; its end (aborted, or done if it finished first) still comes. */
  abort(): void {
    this.#post('abort');
  }

  /** The tail is written (after onTailDue): the thread reports `done` once it has left the socket. */
  tailWritten(): void {
    this.#post('tailWritten');
  }
}

interface Pending extends TransferCallbacks {
  socketDup: number;
  fileFd: number;
}

export class BodySender {
  readonly #b: SendfileBinding;
  readonly #worker: Worker;
  readonly #commands: MessageChannel['port1'];
  readonly #epollFd: number;
  readonly #wakeFd: number;
  readonly #wakeFlag: Int32Array;
  readonly #pending = new Map<number, Pending>();
  readonly #exited: Promise<void>;
  #nextId = 1;
  /** Why the thread is gone (null while it runs). */
  #gone: string | null = null;

  private constructor(b: SendfileBinding, worker: Worker, commands: MessageChannel['port1'], setup: SenderSetup, onLost: (reason: string) => void) {
    this.#b = b;
    this.#worker = worker;
    this.#commands = commands;
    this.#epollFd = setup.epollFd;
    this.#wakeFd = setup.wakeFd;
    this.#wakeFlag = new Int32Array(setup.wakeFlag);
    worker.on('message', (report: SenderReport) => {
      if (report.type === 'transfers') for (const event of report.events) this.#onEvent(event);
    });
    let error: Error | null = null;
    worker.on('error', (err) => (error = err));
    this.#exited = new Promise((resolve) => {
      worker.once('exit', (code) => {
        const expected = this.#gone !== null;
        const reason = this.#gone ?? `sender thread exited (code ${code})${error === null ? '' : `: ${error.message}`}`;
        this.#gone = reason;
        // The thread is gone: nothing uses these descriptors any more.
        for (const id of [...this.#pending.keys()]) this.#ended({ id, outcome: 'failed', errno: -1, connection: false }, reason);
        this.#b.close(this.#epollFd);
        this.#b.close(this.#wakeFd);
        commands.close();
        if (!expected) onLost(reason);
        resolve();
      });
    });
  }

  /**
   * Starts the sender thread; rejects with the reason zero-copy is unavailable.
   * `onLost` is told if the thread dies later (its transfers have then failed).
   */
  static async start(onLost: (reason: string) => void): Promise<BodySender> {
    const loaded = loadSendfileBinding();
    if (!loaded.available) throw new Error(loaded.reason);
    const b = loaded.binding;
    const epollFd = b.epollCreate();
    const wakeFd = b.eventfd();
    if (epollFd < 0 || wakeFd < 0) {
      if (epollFd >= 0) b.close(epollFd);
      if (wakeFd >= 0) b.close(wakeFd);
      throw new Error(`cannot create the sender's epoll/eventfd: ${errnoName(-Math.min(epollFd, wakeFd))}`);
    }
    const channel = new MessageChannel();
    const setup: SenderSetup = { epollFd, wakeFd, wakeFlag: new SharedArrayBuffer(4), commands: channel.port2 };
    const worker = new Worker(new URL('./sender-thread.mjs', import.meta.url), { workerData: setup, transferList: [channel.port2] });
    // Idle, the thread must not keep the process alive; stop() ends it cleanly.
    worker.unref();
    const sender = new BodySender(b, worker, channel.port1, setup, onLost);
    await sender.#ready();
    return sender;
  }

  #ready(): Promise<void> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => fail(`sender thread did not start within ${START_TIMEOUT_MS} ms`), START_TIMEOUT_MS);
      const fail = (reason: string): void => {
        clearTimeout(timer);
        this.#gone = reason;
        void this.#worker.terminate();
        reject(new Error(reason));
      };
      this.#worker.once('message', (report: SenderReport) => {
        if (report.type === 'ready') {
          clearTimeout(timer);
          resolve();
        } else fail(report.type === 'fatal' ? report.message : `sender thread said ${report.type} first`);
      });
      this.#worker.once('error', (err) => fail(`sender thread failed to start: ${err.message}`));
    });
  }

  /** False once the thread is gone (stopped or died): bodies then take the stream path. */
  get available(): boolean {
    return this.#gone === null;
  }

  /** Transfers the thread holds. */
  get inFlight(): number {
    return this.#pending.size;
  }

  /**
   * Hands a file body to the thread; `onEnd` is called exactly once, after both
   * descriptors are closed. Returns a reason instead when it cannot (the file is
   * then still the caller's to close).
   */
  transfer(request: TransferRequest, callbacks: TransferCallbacks): Transfer | string {
    if (this.#gone !== null) return this.#gone;
    const socketDup = this.#b.dup(request.socketFd);
    if (socketDup < 0) return `cannot duplicate the socket: ${errnoName(-socketDup)}`;
    const id = this.#nextId;
    this.#nextId = id >= MAX_TRANSFER_ID ? 1 : id + 1;
    const progress = new SharedArrayBuffer(TransferRecord.bytes);
    this.#pending.set(id, { socketDup, fileFd: request.fileFd, ...callbacks });
    this.#post({
      type: 'start',
      id,
      socketFd: socketDup,
      fileFd: request.fileFd,
      offsetBytes: request.offsetBytes,
      lengthBytes: request.lengthBytes,
      progress,
      burst: request.burst,
      notsentLimitBytes: request.notsentLimitBytes,
      tail: request.tail,
      corked: request.corked,
    });
    return new Transfer(progress, (type) => {
      if (this.#pending.has(id)) this.#post({ type, id });
    });
  }

  /**
   * Corks the connection (TCP_CORK) before its response head is written, so the head
   * leaves in one segment with the body's first bytes: the transfer that follows
   * (with `corked: true`) uncorks it once its first bytes are in, or when it ends.
   * Written on its own, the head is a short segment ahead of the body; at a paced
   * rate the kernel then sends the body in trains of two full segments, and a client
   * that acknowledges every second full segment may fall one segment out of step and
   * hold each train's ACK until the next train arrives (docs/server-internals.md, step 3).
   * False if the option could not be set (the head then goes alone).
   */
  corkHead(socketFd: number): boolean {
    return this.#gone === null && this.#b.setCork(socketFd, true) === 0;
  }

  /** Sends what a cork holds, for a body whose transfer never started. */
  uncork(socketFd: number): void {
    this.#b.setCork(socketFd, false);
  }

  /** Ends the thread once it has aborted what it still holds. */
  async stop(): Promise<void> {
    if (this.#gone === null) {
      this.#gone = 'sender stopped';
      this.#post({ type: 'stop' });
    }
    // Keep the process up until the thread has let go of its descriptors.
    this.#worker.ref();
    await this.#exited;
  }

  #post(command: SenderCommand): void {
    this.#commands.postMessage(command);
    // One signal per batch: the thread clears the flag before it reads the commands.
    if (Atomics.exchange(this.#wakeFlag, 0, 1) === 0) this.#b.signal(this.#wakeFd);
  }

  #onEvent(event: TransferEvent): void {
    if (event.outcome === 'tailDue') this.#pending.get(event.id)?.onTailDue();
    else this.#ended(event);
  }

  #ended(end: TransferEnd, lostReason?: string): void {
    const pending = this.#pending.get(end.id);
    if (pending === undefined) return;
    this.#pending.delete(end.id);
    this.#b.close(pending.socketDup);
    this.#b.close(pending.fileFd);
    let result: TransferResult;
    if (end.outcome !== 'failed') result = { outcome: end.outcome };
    else if (lostReason !== undefined) result = { outcome: 'failed', reason: lostReason, connection: false };
    else {
      const reason = end.errno === 0 ? 'the file ended before the response length' : `sendfile: ${errnoName(end.errno)}`;
      result = { outcome: 'failed', reason, connection: end.connection };
    }
    pending.onEnd(result);
  }
}
