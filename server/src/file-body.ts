// A media body sent by the kernel (README "Body path"): fastify is handed this
// stream, which never carries a byte itself. Once the pacing controller has set
// the socket's rate and begun the response, it writes the response head through
// Node, waits until Node has nothing left to write on the socket, and gives the
// socket and the open file to the sender thread. When the thread reports the last
// byte handed to the kernel, the stream ends and Node finishes the response as if
// it had written the body (it was told the length), so the next response on the
// connection starts after it, never during it.
//
// A body's last byte is not the sender's: the sender sends all but it, then the byte
// is pushed through Node, so the response's 'finish' comes before the client can
// have everything and close. A paced body's byte waits until the rest has left the
// socket and `liftCap` has removed the cap (tail.ts, README "Keep-alive
// carry-over"); an unpaced one's goes as soon as the rest is in the kernel. Once
// Node has written it the sender waits for it to leave too, so no timer polls.
import { closeSync, readSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { Readable } from 'node:stream';
import type { BodySender, Transfer, TransferResult } from './body-sender.js';
import type { BurstClockOptions } from './burst.js';
import { socketFd } from './socket.js';
import { TAIL_BYTES } from './tail.js';
import type { TcpInfo } from './tcpinfo.js';

export interface FileBodyStart {
  sender: BodySender;
  socket: Socket;
  response: ServerResponse;
  /** Application-timed bursts, or null for the kernel's own pacing. */
  burst: BurstClockOptions | null;
  /** At most about this many bytes wait unsent in the socket; null: no limit. */
  notsentLimitBytes: number | null;
  /**
   * For a paced body: removes the cap, called once the bytes before the last
   * TAIL_BYTES have left the socket, just before Node writes those. null: unpaced.
   */
  liftCap: (() => void) | null;
}

const NOTHING = Buffer.alloc(0);

export class FileBody extends Readable {
  readonly offsetBytes: number;
  readonly lengthBytes: number;
  /** The open file until the sender takes it (then null: the sender closes it). */
  #fd: number | null;
  #start: FileBodyStart | null = null;
  #wanted = false;
  #handedOver = false;
  #transfer: Transfer | null = null;
  /** The body's last bytes, read before the sender takes the file, for Node to write once the sender's part is sent. */
  #tail: Buffer | null = null;
  /** The tail has been pushed for Node to write: the body has ended, the transfer has not. */
  #tailGiven = false;
  /** Waiting for the sender's report on a transfer it holds. */
  #settledCallbacks: Array<() => void> | null = null;
  /** Body bytes moved when the socket's idle timer last fired. */
  #sentAtLastTimeout = 0;
  /** The socket was corked before the head; the transfer uncorks it (or, if none starts, _destroy does). */
  #corked = false;

  constructor(fd: number, offsetBytes: number, lengthBytes: number) {
    super();
    this.#fd = fd;
    this.offsetBytes = offsetBytes;
    this.lengthBytes = lengthBytes;
  }

  /**
   * The kernel has taken the whole body. Read from the sender's shared counter, so it
   * holds as soon as the last byte is sent, before the thread's report arrives.
   */
  get complete(): boolean {
    if (this.lengthBytes === 0) return this.#handedOver;
    // A held-back tail is Node's to write: its 'finish' says when the body is over.
    return this.#tail === null && this.sentBytes === this.lengthBytes;
  }

  /** Body bytes the kernel has taken so far. */
  get sentBytes(): number {
    return this.#transfer?.sentBytes ?? 0;
  }

  /** The socket's TCP_INFO when the transfer ended (done: the moment the sender found the last byte gone); null before. */
  get endTcpInfo(): TcpInfo | null {
    return this.#transfer?.endTcpInfo() ?? null;
  }

  /**
   * Calls `fn` once the sender has reported on its transfer (at once if it holds
   * none). Only then is `sentBytes` final: the thread records what a sendfile call
   * moved just after the call returns, and a client may have read those bytes and
   * left before then.
   */
  whenSettled(fn: () => void): void {
    if (this.#settledCallbacks === null) fn();
    else this.#settledCallbacks.push(fn);
  }

  /**
   * The response is over for the pacing controller (its last byte has left, as a later
   * response on the connection found): a transfer still waiting for the tail to leave
   * stops, before the next response's transfer can start on the same socket.
   */
  release(): void {
    if (this.#tailGiven) this.#transfer?.abort();
  }

  /** The response owns the socket and its rate is set: send when fastify starts reading. */
  begin(start: FileBodyStart): void {
    this.#start = start;
    this.#maybeHandOver();
  }

  override _read(): void {
    this.#wanted = true;
    this.#maybeHandOver();
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    // Once the tail is Node's the body has ended (and is destroyed right after), but the
    // transfer goes on until the tail has left; the connection's close aborts it then.
    if (!this.#tailGiven) {
      this.#transfer?.abort();
      this.#start?.response.removeListener('timeout', this.#onTimeout);
    }
    // A head corked for a transfer that never started must not wait for bytes that will not come.
    if (this.#corked && this.#transfer === null && this.#start !== null) {
      const fd = socketFd(this.#start.socket);
      if (fd !== null) this.#start.sender.uncork(fd);
    }
    this.#closeFile();
    callback(error);
  }

  #closeFile(): void {
    if (this.#fd === null) return;
    closeSync(this.#fd);
    this.#fd = null;
  }

  #maybeHandOver(): void {
    const start = this.#start;
    if (start === null || !this.#wanted || this.#handedOver || this.destroyed) return;
    const { socket, response } = start;
    // Node gives a pipelined response the socket once the one before has finished.
    if ((socket as Socket & { _httpMessage?: unknown })._httpMessage !== response) {
      response.once('socket', () => this.#maybeHandOver());
      return;
    }
    this.#handedOver = true;
    if (socket.destroyed) return void this.destroy();
    // Before the head, a failure can still be answered with an error response.
    if (!start.sender.available) return void this.destroy(new Error('the zero-copy sender is gone'));
    // The head waits in the kernel for the body's first bytes (BodySender.corkHead).
    const fd = socketFd(socket);
    this.#corked = this.lengthBytes > 0 && fd !== null && start.sender.corkHead(fd);
    response.flushHeaders();
    if (this.lengthBytes === 0) {
      this.#closeFile();
      this.push(null);
      return;
    }
    this.#sendAfterHead(start);
  }

  /** sendfile must not overtake the head: Node's writes on the socket reach the kernel first. */
  #sendAfterHead(start: FileBodyStart): void {
    if (this.destroyed) return;
    if (start.socket.destroyed) return void this.destroy();
    // A write queued behind the head calls back once everything before it is written.
    if (!nothingPending(start.socket)) return void start.socket.write(NOTHING, () => this.#sendAfterHead(start));
    const fd = socketFd(start.socket);
    if (fd === null || this.#fd === null) return void this.destroy();
    // Every body's last byte goes through Node: then the response's 'finish' (fastify's
    // onResponse, the request counter) comes before the client, which has everything only
    // once that byte is in, can close the connection. A paced body's waits for the rest to leave.
    if (this.lengthBytes > TAIL_BYTES) {
      const tail = Buffer.alloc(TAIL_BYTES);
      if (readSync(this.#fd, tail, 0, TAIL_BYTES, this.offsetBytes + this.lengthBytes - TAIL_BYTES) !== TAIL_BYTES) {
        return void this.destroy(new Error('the file ended before the response length'));
      }
      this.#tail = tail;
    }
    const transfer = start.sender.transfer(
      {
        socketFd: fd,
        fileFd: this.#fd,
        offsetBytes: this.offsetBytes,
        lengthBytes: this.lengthBytes - (this.#tail?.length ?? 0),
        burst: start.burst,
        notsentLimitBytes: start.notsentLimitBytes,
        tail: this.#tail === null ? 'none' : start.liftCap !== null ? 'afterLeft' : 'afterHanded',
        corked: this.#corked,
      },
      { onTailDue: () => this.#writeTail(start), onEnd: (result) => this.#ended(result) },
    );
    if (typeof transfer === 'string') return void this.destroy(new Error(transfer));
    this.#fd = null;
    this.#transfer = transfer;
    this.#settledCallbacks = [];
    // Node sees no writes while the kernel sends: its idle timer is answered here.
    start.response.on('timeout', this.#onTimeout);
  }

  #ended(result: TransferResult): void {
    const start = this.#start!;
    start.response.removeListener('timeout', this.#onTimeout);
    start.socket.removeListener('close', this.#abortTransfer);
    const settled = this.#settledCallbacks ?? [];
    this.#settledCallbacks = null;
    for (const fn of settled) fn();
    if (this.destroyed) return;
    // Done: with a tail, the body already ended when Node was given it (#writeTail).
    if (result.outcome === 'done') {
      if (this.#tail === null) this.push(null);
    }
    // The client went away: close the connection as Node does when a write fails.
    else if (result.outcome === 'failed' && result.connection) start.socket.destroy();
    else this.destroy(result.outcome === 'failed' ? new Error(result.reason) : undefined);
  }

  /**
   * The sender's part is sent (a paced one has left the socket): the cap goes, the tail
   * is Node's to write, and the body ends. Once Node has written it ('finish') the
   * sender waits for it to leave and then reports the transfer done.
   */
  #writeTail(start: FileBodyStart): void {
    if (this.destroyed) return;
    start.liftCap?.();
    this.#tailGiven = true;
    start.socket.once('close', this.#abortTransfer);
    start.response.once('finish', () => this.#transfer?.tailWritten());
    this.push(this.#tail);
    this.push(null);
  }

  readonly #abortTransfer = (): void => this.#transfer?.abort();

  /** The socket was idle a whole timeout as Node sees it: still moving, it stays; stalled, it is closed. */
  readonly #onTimeout = (): void => {
    const sent = this.sentBytes;
    const socket = this.#start!.socket;
    if (sent > this.#sentAtLastTimeout) {
      this.#sentAtLastTimeout = sent;
      socket.setTimeout(socket.timeout ?? 0);
    } else socket.destroy();
  };
}

/** Node has no bytes of this socket waiting, in its stream or in libuv. */
function nothingPending(socket: Socket): boolean {
  const handle = (socket as Socket & { _handle?: { writeQueueSize?: number } })._handle;
  return socket.writableLength === 0 && (handle?.writeQueueSize ?? 0) === 0;
}
