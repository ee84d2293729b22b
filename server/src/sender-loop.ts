// The sender thread of the zero-copy body path (README "Body path"): it owns the
// wait for writable sockets, so the event loop never wakes for a paced socket's
// drained buffer. The kernel moves file bytes to the socket with sendfile(2); this
// thread only decides when. Started by body-sender.ts through sender-thread.mjs.
//
// It never opens or closes a descriptor: the event loop's thread hands it a
// duplicate of the socket and an open file, and closes both when this thread
// reports the transfer ended (done, failed or aborted). A transfer ends exactly
// once, and nothing is reported for a transfer this thread does not hold.
import { parentPort, receiveMessageOnPort, workerData, type MessagePort } from 'node:worker_threads';
import { BurstClock, type BurstClockOptions } from './burst.js';
import {
  CONNECTION_ERRNOS,
  EAGAIN,
  ECONNRESET,
  EINVAL,
  EINTR,
  EPOLLERR,
  EPOLLET,
  EPOLLHUP,
  EPOLLIN,
  EPOLLOUT,
  loadSendfileBinding,
  type EpollEvents,
  type SendfileBinding,
} from './sendfile-binding.js';
import { TCP_INFO_BUFFER_BYTES, TCP_INFO_FIELDS } from './tcpinfo.js';
import { TransferRecord } from './transfer-record.js';

export interface SenderSetup {
  epollFd: number;
  /** The eventfd the event loop's thread signals after posting commands; its epoll token is WAKE_TOKEN. */
  wakeFd: number;
  /** Int32[1]: 1 while a wake-up is pending, so a burst of commands costs one signal. */
  wakeFlag: SharedArrayBuffer;
  commands: MessagePort;
}

export const WAKE_TOKEN = 0;


export type SenderCommand =
  | {
      type: 'start';
      /** 1 to 2^32-1; the socket's epoll token. */
      id: number;
      socketFd: number;
      fileFd: number;
      offsetBytes: number;
      lengthBytes: number;
      /** TRANSFER_RECORD_BYTES: what the thread has done (TransferRecord), written here, read by the event loop's thread at any time. */
      progress: SharedArrayBuffer;
      /** Application-timed bursts (mechanism `app`); null: send whenever the socket takes more. */
      burst: BurstClockOptions | null;
      /** TCP_NOTSENT_LOWAT for the transfer (restored after it); null: the socket's own limit. */
      notsentLimitBytes: number | null;
      /** Whether the event loop writes the body's last bytes after this part (TailMode). */
      tail: TailMode;
      /** The event loop corked the socket before the response head (BodySender.corkHead): uncork once the first bytes are in. */
      corked: boolean;
    }
  /** The event loop has written the tail: the transfer is done once it has left the socket. */
  | { type: 'tailWritten'; id: number }
  | { type: 'abort'; id: number }
  | { type: 'stop' };

/**
 * Who sends a body's last bytes (file-body.ts): `none`, this thread (the transfer is
 * done when they have left); otherwise the event loop writes them once this thread
 * reports `tailDue`: `afterLeft` when every byte before them has left the socket (a
 * paced body: the cap is lifted in between), `afterHanded` as soon as the kernel has
 * them. Either way the thread then waits, without a timer, for the tail to leave.
 */
export type TailMode = 'none' | 'afterLeft' | 'afterHanded';

export type TransferEnd =
  /** Every byte has left the socket (TCP has sent it), not only been handed to the kernel. */
  | { id: number; outcome: 'done' }
  | { id: number; outcome: 'aborted' }
  /** errno 0: the file ended before the response's length. `connection`: the client went away. */
  | { id: number; outcome: 'failed'; errno: number; connection: boolean };

/** What the thread says about a transfer: its end, or (before it) that the event loop may write the tail (TailMode). */
export type TransferEvent = TransferEnd | { id: number; outcome: 'tailDue' };

export type SenderReport = { type: 'ready' } | { type: 'transfers'; events: TransferEvent[] } | { type: 'fatal'; message: string };

/** A TCP_INFO reply must reach past tcpi_notsent_bytes to be read. */
const NOTSENT_END = TCP_INFO_FIELDS.notsentBytes.offset + TCP_INFO_FIELDS.notsentBytes.bytes;
/** The longest wait without a timer due, so a terminate() lands within it. */
const MAX_WAIT_MS = 250;
/** The most any burst may go early (BurstClock.earlyMs: a quarter of a strict interval). */
const MAX_EARLY_MS = 2;
/** sendfile moves at most 0x7ffff000 bytes per call. */
const MAX_CALL_BYTES = 0x7ffff000;
const EVENTS_PER_WAIT = 256;

interface Job {
  id: number;
  socketFd: number;
  fileFd: number;
  /** sendfile's file position. */
  offset: BigInt64Array;
  remainingBytes: number;
  sentBytes: number;
  progress: BigInt64Array;
  /** The record's TCP_INFO length (Int32 view, published at the end) and bytes (the latest read). */
  infoLength: Int32Array;
  info: Uint8Array;
  infoView: DataView;
  /** Bytes of the latest TCP_INFO read in `info` (0: none yet, or it failed). */
  infoBytes: number;
  clock: BurstClock | null;
  /** Bytes of the current burst the socket has not taken yet (it was full). */
  owedBytes: number;
  /** When this job's timer is due; null: no timer (waiting for the socket, or none needed). */
  dueMs: number | null;
  /** The TCP_NOTSENT_LOWAT this transfer set (restored to the default when it ends); null: none set. */
  notsentLimitBytes: number | null;
  /** What happens once this thread's part is in the kernel. */
  tail: TailMode;
  /** The socket is still corked: the head waits for the body's first bytes. */
  corked: boolean;
  /**
   * sending: bytes left to send; draining: every byte is in the kernel, waiting for the
   * last to leave; tailDue: reported, waiting for the event loop to write the tail.
   */
  phase: 'sending' | 'draining' | 'tailDue';
}

/** A min-heap of timers; an entry whose job has since moved or ended is skipped when it surfaces. */
class TimerHeap {
  readonly #items: Array<{ dueMs: number; id: number }> = [];

  get nextDueMs(): number | null {
    return this.#items[0]?.dueMs ?? null;
  }

  push(dueMs: number, id: number): void {
    const items = this.#items;
    items.push({ dueMs, id });
    let i = items.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (items[parent]!.dueMs <= items[i]!.dueMs) break;
      [items[parent], items[i]] = [items[i]!, items[parent]!];
      i = parent;
    }
  }

  pop(): { dueMs: number; id: number } | undefined {
    const items = this.#items;
    const top = items[0];
    const last = items.pop();
    if (items.length > 0 && last !== undefined) {
      items[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let min = i;
        if (l < items.length && items[l]!.dueMs < items[min]!.dueMs) min = l;
        if (r < items.length && items[r]!.dueMs < items[min]!.dueMs) min = r;
        if (min === i) break;
        [items[min], items[i]] = [items[i]!, items[min]!];
        i = min;
      }
    }
    return top;
  }
}

class SenderLoop {
  readonly #b: SendfileBinding;
  readonly #setup: SenderSetup;
  readonly #wakeFlag: Int32Array;
  readonly #events: EpollEvents;
  readonly #jobs = new Map<number, Job>();
  readonly #timers = new TimerHeap();
  #reports: TransferEvent[] = [];
  #stopping = false;

  constructor(binding: SendfileBinding, events: EpollEvents, setup: SenderSetup) {
    this.#b = binding;
    this.#events = events;
    this.#setup = setup;
    this.#wakeFlag = new Int32Array(setup.wakeFlag);
  }

  run(): void {
    while (!this.#stopping) {
      this.#runDueTimers();
      this.#report();
      const nextDueMs = this.#timers.nextDueMs;
      const waitMs = nextDueMs === null ? MAX_WAIT_MS : Math.min(MAX_WAIT_MS, Math.max(0, nextDueMs - performance.now()));
      const n = this.#b.epollWait(this.#setup.epollFd, this.#events, waitMs);
      if (n < 0) {
        if (n === -EINTR) continue;
        throw new Error(`epoll_wait failed: errno ${-n}`);
      }
      for (let i = 0; i < n; i++) {
        const token = this.#events.token(i);
        if (token === WAKE_TOKEN) this.#readCommands();
        else {
          const job = this.#jobs.get(token);
          if (job === undefined) continue;
          if (job.phase === 'draining') this.#checkDrained(job, this.#events.events(i));
          else if (job.phase === 'sending') this.#pump(job, performance.now());
        }
      }
    }
    for (const job of [...this.#jobs.values()]) this.#end(job, { id: job.id, outcome: 'aborted' });
    this.#report();
  }

  #readCommands(): void {
    this.#b.drain(this.#setup.wakeFd);
    Atomics.store(this.#wakeFlag, 0, 0);
    for (let m = receiveMessageOnPort(this.#setup.commands); m !== undefined; m = receiveMessageOnPort(this.#setup.commands)) {
      const command = m.message as SenderCommand;
      if (command.type === 'start') this.#start(command);
      else if (command.type === 'tailWritten') {
        const job = this.#jobs.get(command.id);
        if (job !== undefined && job.phase === 'tailDue') {
          job.tail = 'none';
          this.#drain(job);
        }
      } else if (command.type === 'abort') {
        const job = this.#jobs.get(command.id);
        if (job !== undefined) this.#end(job, { id: job.id, outcome: 'aborted' });
      } else this.#stopping = true;
    }
  }

  #start(c: Extract<SenderCommand, { type: 'start' }>): void {
    const job: Job = {
      id: c.id,
      socketFd: c.socketFd,
      fileFd: c.fileFd,
      offset: new BigInt64Array([BigInt(c.offsetBytes)]),
      remainingBytes: c.lengthBytes,
      sentBytes: 0,
      progress: new BigInt64Array(c.progress, 0, 1),
      infoLength: new Int32Array(c.progress, 0, TransferRecord.infoOffset / 4),
      info: new Uint8Array(c.progress, TransferRecord.infoOffset, TCP_INFO_BUFFER_BYTES),
      infoView: new DataView(c.progress, TransferRecord.infoOffset, TCP_INFO_BUFFER_BYTES),
      infoBytes: 0,
      clock: c.burst === null ? null : new BurstClock(c.burst),
      owedBytes: 0,
      dueMs: null,
      notsentLimitBytes: c.notsentLimitBytes !== null && this.#b.setNotsentLimit(c.socketFd, c.notsentLimitBytes) === 0 ? c.notsentLimitBytes : null,
      tail: c.tail,
      corked: c.corked,
      phase: 'sending',
    };
    // Edge-triggered: one event each time the socket's buffer frees up after it was
    // found full, none while it simply has room (application bursts keep their own time).
    const added = this.#b.epollAdd(this.#setup.epollFd, job.socketFd, EPOLLOUT | EPOLLET, job.id);
    if (added < 0) {
      this.#uncork(job);
      this.#reports.push({ id: job.id, outcome: 'failed', errno: -added, connection: false });
      return;
    }
    this.#jobs.set(job.id, job);
    this.#pump(job, performance.now());
  }

  /** Sends every burst that is due, and every one that may go early in this wake-up. */
  #runDueTimers(): void {
    const notYet: Array<{ dueMs: number; id: number }> = [];
    for (;;) {
      const nextDueMs = this.#timers.nextDueMs;
      const nowMs = performance.now();
      if (nextDueMs === null || nextDueMs > nowMs + MAX_EARLY_MS) break;
      const entry = this.#timers.pop()!;
      const job = this.#jobs.get(entry.id);
      if (job === undefined || job.dueMs !== entry.dueMs || job.phase !== 'sending') continue;
      if (job.clock !== null && job.clock.waitMs(nowMs) > job.clock.earlyMs) {
        notYet.push(entry);
        continue;
      }
      job.dueMs = null;
      this.#pump(job, nowMs);
    }
    for (const entry of notYet) this.#timers.push(entry.dueMs, entry.id);
  }

  /** Sends what the job may send now; returns when the socket is full, a timer is set, or the job ended. */
  #pump(job: Job, nowMs: number): void {
    if (job.clock === null) {
      if (this.#send(job, job.remainingBytes) < 0) return;
    } else {
      if (job.owedBytes > 0) {
        job.owedBytes = this.#send(job, job.owedBytes);
        if (job.owedBytes !== 0) return;
      }
      if (job.remainingBytes > 0) {
        if (job.clock.waitMs(nowMs) > job.clock.earlyMs) return this.#schedule(job, job.clock.dueMs);
        job.owedBytes = this.#send(job, job.clock.take(nowMs, job.remainingBytes));
        if (job.owedBytes !== 0) return;
        if (job.remainingBytes > 0) return this.#schedule(job, job.clock.dueMs);
      }
    }
    if (job.remainingBytes > 0) return;
    if (job.tail === 'afterHanded') this.#tailDue(job);
    else this.#drain(job);
  }

  /** This thread's part is sent: the event loop writes the tail; the socket's events are ignored until it says so. */
  #tailDue(job: Job): void {
    job.phase = 'tailDue';
    this.#reports.push({ id: job.id, outcome: 'tailDue' });
  }

  /**
   * The body is in the kernel: wait for its last byte to leave, so the event loop
   * hears once, when the response is over, and never polls for it. With
   * TCP_NOTSENT_LOWAT at 1 the socket counts as writable only with nothing unsent;
   * re-arming the watch makes the kernel report that edge (on the ACK that follows
   * the last packet), or report it at once if it already holds.
   */
  #drain(job: Job): void {
    job.phase = 'draining';
    if (job.notsentLimitBytes !== 1 && this.#b.setNotsentLimit(job.socketFd, 1) === 0) job.notsentLimitBytes = 1;
    if (this.#notsentBytes(job) === 0) return this.#drained(job);
    this.#b.epollModify(this.#setup.epollFd, job.socketFd, EPOLLOUT | EPOLLET, job.id);
  }

  #checkDrained(job: Job, events: number): void {
    // An error or hang-up while the tail drained: the client is gone.
    if ((events & (EPOLLERR | EPOLLHUP)) !== 0) return this.#end(job, { id: job.id, outcome: 'failed', errno: ECONNRESET, connection: true });
    const notsent = this.#notsentBytes(job);
    if (notsent < 0) this.#end(job, { id: job.id, outcome: 'failed', errno: -notsent, connection: true });
    else if (notsent === 0) this.#drained(job);
  }

  /**
   * tcpi_notsent_bytes of the job's socket (bytes TCP holds but has not sent), or
   * -errno. TCP_INFO is read into the job's record, so the read that finds the last
   * byte gone is also the one the response's line reports.
   */
  #notsentBytes(job: Job): number {
    const length = this.#b.readTcpInfo(job.socketFd, job.info);
    job.infoBytes = Math.max(0, length);
    if (length < 0) return length;
    return length >= NOTSENT_END ? job.infoView.getUint32(TCP_INFO_FIELDS.notsentBytes.offset, true) : -EINVAL;
  }

  /** Every byte this thread sent has left: done, or the event loop's turn to write the tail. */
  #drained(job: Job): void {
    if (job.tail === 'afterLeft') this.#tailDue(job);
    else this.#end(job, { id: job.id, outcome: 'done' });
  }

  #schedule(job: Job, dueMs: number): void {
    if (job.dueMs === dueMs) return;
    job.dueMs = dueMs;
    this.#timers.push(dueMs, job.id);
  }

  /**
   * Sends up to `countBytes`: returns what is left of them (more than 0: the socket
   * is full and an EPOLLOUT edge will come), or -1 when the job ended in failure.
   */
  #send(job: Job, countBytes: number): number {
    let leftBytes = countBytes;
    while (leftBytes > 0) {
      const n = this.#b.sendfile(job.socketFd, job.fileFd, job.offset, Math.min(leftBytes, MAX_CALL_BYTES));
      if (n > 0) {
        // The head and these first bytes share a segment: the rest need not wait.
        this.#uncork(job);
        leftBytes -= n;
        job.remainingBytes -= n;
        job.sentBytes += n;
        Atomics.store(job.progress, TransferRecord.sentIndex, BigInt(job.sentBytes));
        // A short count is not proof that the socket is full (a signal can cut the
        // call short too), and only a call that found it full guarantees an EPOLLOUT
        // edge later: ask again until EAGAIN.
      } else if (n === -EAGAIN) return leftBytes;
      else if (n !== -EINTR) {
        const errno = -n;
        this.#end(job, { id: job.id, outcome: 'failed', errno, connection: CONNECTION_ERRNOS[errno] !== undefined });
        return -1;
      }
    }
    return 0;
  }

  /** Sends what the cork holds (the response head, with the body's first bytes once they are in). */
  #uncork(job: Job): void {
    if (!job.corked) return;
    job.corked = false;
    this.#b.setCork(job.socketFd, false);
  }

  #end(job: Job, end: TransferEnd): void {
    this.#uncork(job);
    // The connection's TCP_INFO for the response's line (the event loop's own descriptor
    // may be closed by then): a done job's last read found the last byte gone; any other
    // is read now. Published after the bytes: a reader that sees the length sees them too.
    if (end.outcome !== 'done' || job.infoBytes === 0) job.infoBytes = Math.max(0, this.#b.readTcpInfo(job.socketFd, job.info));
    Atomics.store(job.infoLength, TransferRecord.infoLengthIndex, job.infoBytes);
    this.#b.epollDelete(this.#setup.epollFd, job.socketFd);
    // The next response on the connection may be unpaced, or sent by Node.
    if (job.notsentLimitBytes !== null) this.#b.setNotsentLimit(job.socketFd, 0);
    this.#jobs.delete(job.id);
    job.dueMs = null;
    this.#reports.push(end);
  }

  #report(): void {
    if (this.#reports.length === 0) return;
    const report: SenderReport = { type: 'transfers', events: this.#reports };
    this.#reports = [];
    parentPort!.postMessage(report);
  }
}

function main(): void {
  const setup = workerData as SenderSetup;
  const loaded = loadSendfileBinding();
  if (!loaded.available) {
    parentPort!.postMessage({ type: 'fatal', message: loaded.reason } satisfies SenderReport);
    return;
  }
  const added = loaded.binding.epollAdd(setup.epollFd, setup.wakeFd, EPOLLIN, WAKE_TOKEN);
  if (added < 0) {
    parentPort!.postMessage({ type: 'fatal', message: `epoll_ctl on the wake-up eventfd failed: errno ${-added}` } satisfies SenderReport);
    return;
  }
  parentPort!.postMessage({ type: 'ready' } satisfies SenderReport);
  new SenderLoop(loaded.binding, loaded.newEvents(EVENTS_PER_WAIT), setup).run();
  setup.commands.close();
}

main();
