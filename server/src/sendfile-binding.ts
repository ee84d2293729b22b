// The one adapter to the kernel calls of the zero-copy body path: sendfile(2),
// epoll, eventfd, fcntl(F_DUPFD_CLOEXEC) and close, through koffi on libc (README
// "Body path"). The event loop's thread uses it to hand descriptors over and to
// wake the sender thread; the sender thread (sender-loop.ts) to wait and send.
// Every call returns the kernel's answer as a number: a result, or -errno.
import { createRequire } from 'node:module';
import { TCP_INFO_BUFFER_BYTES } from './tcpinfo.js';

/** Linux flag values, the same on x86-64 and arm64 (asm-generic). */
export const EPOLLIN = 0x1;
export const EPOLLOUT = 0x4;
export const EPOLLERR = 0x8;
export const EPOLLHUP = 0x10;
/** Edge-triggered: one event per change of state, not one per wait while it holds. */
export const EPOLLET = 0x80000000;
export const EAGAIN = 11;
export const EINTR = 4;
export const EINVAL = 22;
export const ECONNRESET = 104;
const EPOLL_CTL_ADD = 1;
const EPOLL_CTL_DEL = 2;
const O_CLOEXEC = 0x80000;
const O_NONBLOCK = 0x800;
const F_DUPFD_CLOEXEC = 1030;
const IPPROTO_TCP = 6;
const TCP_INFO = 11;
const TCP_NOTSENT_LOWAT = 25;
const TCP_CORK = 3;
const EPOLL_CTL_MOD = 3;

/** Errors that mean the connection is gone (the client left), not that the file failed. */
export const CONNECTION_ERRNOS: Record<number, string> = {
  32: 'EPIPE',
  [ECONNRESET]: 'ECONNRESET',
  107: 'ENOTCONN',
  110: 'ETIMEDOUT',
  113: 'EHOSTUNREACH',
};
const OTHER_ERRNOS: Record<number, string> = { 9: 'EBADF', 5: 'EIO', 22: 'EINVAL', 24: 'EMFILE', 75: 'EOVERFLOW', 12: 'ENOMEM', 23: 'ENFILE' };

export function errnoName(errno: number): string {
  return CONNECTION_ERRNOS[errno] ?? OTHER_ERRNOS[errno] ?? `errno ${errno}`;
}

/** struct epoll_event: packed on x86-64 (u32 events, u64 data: 12 bytes), naturally aligned on arm64 (16). */
const EPOLL_EVENT_LAYOUT: Partial<Record<NodeJS.Architecture, { bytes: number; dataOffset: number }>> = {
  x64: { bytes: 12, dataOffset: 4 },
  arm64: { bytes: 16, dataOffset: 8 },
};

export interface SendfileBinding {
  /** sendfile(out, in, &offset, count): bytes sent or -errno; `offset` (one int64) advances by what was sent. */
  sendfile(socketFd: number, fileFd: number, offset: BigInt64Array, countBytes: number): number;
  /**
   * TCP_NOTSENT_LOWAT: the socket takes more (and reports itself writable) only while
   * fewer bytes than this wait unsent; 0 restores the system default (no limit).
   */
  setNotsentLimit(socketFd: number, bytes: number): number;
  /**
   * TCP_CORK: while on, TCP holds a partial segment back until more bytes fill it;
   * turning it off sends what is held at once.
   */
  setCork(socketFd: number, on: boolean): number;
  /** A second descriptor for the same socket or file (close-on-exec), or -errno. */
  dup(fd: number): number;
  close(fd: number): number;
  /** A non-blocking eventfd, or -errno. */
  eventfd(): number;
  /** Adds 1 to an eventfd's counter (wakes its waiter). */
  signal(eventFd: number): number;
  /** Resets an eventfd's counter. */
  drain(eventFd: number): number;
  epollCreate(): number;
  /** Watches `fd` for `events`; each event carries `token` (a u32). */
  epollAdd(epollFd: number, fd: number, events: number, token: number): number;
  /** Changes what `fd` is watched for; with EPOLLET, an event follows at once if it is ready now. */
  epollModify(epollFd: number, fd: number, events: number, token: number): number;
  epollDelete(epollFd: number, fd: number): number;
  /** Reads the socket's TCP_INFO into `target` (TCP_INFO_BUFFER_BYTES long): the length the kernel returned, or -errno. */
  readTcpInfo(socketFd: number, target: Uint8Array): number;
  /** Waits up to `timeoutMs` (fractions honoured where epoll_pwait2 exists); the number of events, or -errno. */
  epollWait(epollFd: number, events: EpollEvents, timeoutMs: number): number;
}

/** A reusable buffer of epoll events. */
export class EpollEvents {
  readonly buffer: Buffer;
  readonly capacity: number;
  readonly #bytes: number;
  readonly #dataOffset: number;

  constructor(capacity: number, layout: { bytes: number; dataOffset: number }) {
    this.capacity = capacity;
    this.#bytes = layout.bytes;
    this.#dataOffset = layout.dataOffset;
    this.buffer = Buffer.alloc(capacity * layout.bytes);
  }

  events(i: number): number {
    return this.buffer.readUInt32LE(i * this.#bytes);
  }

  token(i: number): number {
    return this.buffer.readUInt32LE(i * this.#bytes + this.#dataOffset);
  }

  /** Fills slot 0 for epoll_ctl. */
  set(events: number, token: number): Buffer {
    this.buffer.fill(0, 0, this.#bytes);
    this.buffer.writeUInt32LE(events >>> 0, 0);
    this.buffer.writeUInt32LE(token >>> 0, this.#dataOffset);
    return this.buffer;
  }
}

export type SendfileBindingResult =
  | { available: true; binding: SendfileBinding; newEvents: (capacity: number) => EpollEvents }
  | { available: false; reason: string };

interface Koffi {
  load(path: string): { func(signature: string): (...args: unknown[]) => number };
  errno(): number;
}

/** Loads the calls through koffi; never throws (unavailable: the stream path serves every body). */
export function loadSendfileBinding(): SendfileBindingResult {
  if (process.platform !== 'linux') return { available: false, reason: `sendfile and epoll are Linux-only here (platform ${process.platform})` };
  const layout = EPOLL_EVENT_LAYOUT[process.arch];
  if (layout === undefined) return { available: false, reason: `no epoll_event layout for ${process.arch} (x64 and arm64 are known)` };
  let koffi: Koffi;
  let libc: ReturnType<Koffi['load']>;
  try {
    koffi = createRequire(import.meta.url)('koffi') as Koffi;
    libc = koffi.load('libc.so.6');
  } catch (err) {
    return { available: false, reason: `cannot load libc through koffi: ${(err as Error).message}` };
  }
  let f: Record<string, (...args: unknown[]) => number>;
  try {
    f = {
      sendfile: libc.func('intptr_t sendfile(int, int, void *, uintptr_t)'),
      fcntl: libc.func('int fcntl(int, int, int)'),
      setsockopt: libc.func('int setsockopt(int, int, int, const void *, uint32_t)'),
      // Plain pointers, as in socket.ts: an annotated in/out array costs a conversion each way.
      getsockopt: libc.func('int getsockopt(int, int, int, void *, void *)'),
      close: libc.func('int close(int)'),
      eventfd: libc.func('int eventfd(unsigned int, int)'),
      write: libc.func('intptr_t write(int, void *, uintptr_t)'),
      read: libc.func('intptr_t read(int, void *, uintptr_t)'),
      epollCreate1: libc.func('int epoll_create1(int)'),
      epollCtl: libc.func('int epoll_ctl(int, int, int, void *)'),
      epollWait: libc.func('int epoll_wait(int, void *, int, int)'),
    };
  } catch (err) {
    return { available: false, reason: `libc lacks a zero-copy call: ${(err as Error).message}` };
  }
  let epollPwait2: ((...args: unknown[]) => number) | null = null;
  try {
    // Linux 5.11, glibc 2.35: a nanosecond timeout, so application bursts keep their spacing.
    epollPwait2 = libc.func('int epoll_pwait2(int, void *, int, void *, void *)');
  } catch {
    // millisecond waits (rounded up) instead
  }
  const result = (r: number): number => (r < 0 ? -koffi.errno() : r);
  const one = new BigUint64Array([1n]);
  const counter = new BigUint64Array(1);
  // struct timespec as four 32-bit words (little-endian, as the layouts above): seconds, 0, nanoseconds, 0.
  // Written without a BigInt: the sender waits several times per response.
  const timeout = new Int32Array(4);
  const ctl = new EpollEvents(1, layout);
  const intOption = new Int32Array(1);
  const info = Buffer.alloc(TCP_INFO_BUFFER_BYTES);
  const infoLength = new Uint32Array(1);
  const binding: SendfileBinding = {
    sendfile: (socketFd, fileFd, offset, countBytes) => result(f.sendfile!(socketFd, fileFd, offset, countBytes)),
    setNotsentLimit: (socketFd, bytes) => {
      intOption[0] = bytes;
      return result(f.setsockopt!(socketFd, IPPROTO_TCP, TCP_NOTSENT_LOWAT, intOption, 4));
    },
    setCork: (socketFd, on) => {
      intOption[0] = on ? 1 : 0;
      return result(f.setsockopt!(socketFd, IPPROTO_TCP, TCP_CORK, intOption, 4));
    },
    dup: (fd) => result(f.fcntl!(fd, F_DUPFD_CLOEXEC, 0)),
    close: (fd) => result(f.close!(fd)),
    eventfd: () => result(f.eventfd!(0, O_CLOEXEC | O_NONBLOCK)),
    signal: (eventFd) => result(f.write!(eventFd, one, 8)),
    drain: (eventFd) => result(f.read!(eventFd, counter, 8)),
    epollCreate: () => result(f.epollCreate1!(O_CLOEXEC)),
    epollAdd: (epollFd, fd, events, token) => result(f.epollCtl!(epollFd, EPOLL_CTL_ADD, fd, ctl.set(events, token))),
    epollModify: (epollFd, fd, events, token) => result(f.epollCtl!(epollFd, EPOLL_CTL_MOD, fd, ctl.set(events, token))),
    readTcpInfo: (socketFd, target) => {
      infoLength[0] = info.length;
      const r = result(f.getsockopt!(socketFd, IPPROTO_TCP, TCP_INFO, info, infoLength));
      if (r < 0) return r;
      const length = infoLength[0]!;
      target.set(info.subarray(0, Math.min(length, target.length)));
      return length;
    },
    epollDelete: (epollFd, fd) => result(f.epollCtl!(epollFd, EPOLL_CTL_DEL, fd, ctl.set(0, 0))),
    epollWait: (epollFd, events, timeoutMs) => {
      const ms = Math.max(0, timeoutMs);
      if (epollPwait2 === null) return result(f.epollWait!(epollFd, events.buffer, events.capacity, Math.ceil(ms)));
      const ns = Math.round(ms * 1e6);
      const seconds = Math.floor(ns / 1e9);
      timeout[0] = seconds;
      timeout[2] = ns - seconds * 1e9;
      return result(epollPwait2(epollFd, events.buffer, events.capacity, timeout, null));
    },
  };
  return { available: true, binding, newEvents: (capacity) => new EpollEvents(capacity, layout) };
}
