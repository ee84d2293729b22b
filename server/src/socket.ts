// The one adapter to the kernel's socket options: setsockopt(SO_MAX_PACING_RATE)
// and getsockopt(TCP_INFO) on a connection's file descriptor, through koffi
// (README "Binding": prebuilt, no build step, ~1 us per call).
import { createRequire } from 'node:module';
import { parseTcpInfo, TCP_INFO_BUFFER_BYTES, type TcpInfo } from './tcpinfo.js';

const SOL_SOCKET = 1;
const SO_MAX_PACING_RATE = 47;
const IPPROTO_TCP = 6;
const TCP_INFO = 11;
/** The kernel's "no cap" (~0UL): what a socket starts with, and what a finished response restores. */
export const UNLIMITED_PACING_RATE = 2n ** 64n - 1n;

export type SetRateResult = { ok: true } | { ok: false; error: string };

export interface SocketControl {
  /** False where the binding cannot work (not Linux, no libc): everything is served unpaced. */
  readonly available: boolean;
  /** Why it is unavailable, for the one log line. */
  readonly unavailableReason: string | null;
  /** Caps the socket's TCP sending rate; UNLIMITED_PACING_RATE removes the cap. */
  setMaxPacingRate(fd: number, rateBytesPerS: bigint): SetRateResult;
  /** The connection's TCP_INFO, or null if the kernel refuses or returns too little. */
  readTcpInfo(fd: number): TcpInfo | null;
}

interface Koffi {
  load(path: string): { func(signature: string): (...args: unknown[]) => number };
  errno(): number;
}

const ERRNO_NAMES: Record<number, string> = { 9: 'EBADF', 22: 'EINVAL', 92: 'ENOPROTOOPT', 95: 'EOPNOTSUPP', 1: 'EPERM' };

function unavailable(reason: string): SocketControl {
  return {
    available: false,
    unavailableReason: reason,
    setMaxPacingRate: () => ({ ok: false, error: reason }),
    readTcpInfo: () => null,
  };
}

/** Loads libc through koffi; never throws (an unavailable control serves unpaced). */
export function loadSocketControl(): SocketControl {
  if (process.platform !== 'linux') return unavailable(`SO_MAX_PACING_RATE is Linux-only (platform ${process.platform})`);
  let koffi: Koffi;
  let setsockopt: (...args: unknown[]) => number;
  let getsockopt: (...args: unknown[]) => number;
  try {
    koffi = createRequire(import.meta.url)('koffi') as Koffi;
    const libc = koffi.load('libc.so.6');
    setsockopt = libc.func('int setsockopt(int, int, int, const void *, uint32_t)');
    // Plain pointers: koffi passes a Buffer's or typed array's memory as it is, where an
    // annotated in/out array costs a conversion each way (twice the call, measured).
    getsockopt = libc.func('int getsockopt(int, int, int, void *, void *)');
  } catch (err) {
    return unavailable(`cannot load setsockopt through koffi: ${(err as Error).message}`);
  }
  // One buffer each: calls are synchronous on the one JS thread.
  const rateBuf = Buffer.alloc(8);
  const infoBuf = Buffer.alloc(TCP_INFO_BUFFER_BYTES);
  const infoLen = new Uint32Array(1);
  return {
    available: true,
    unavailableReason: null,
    setMaxPacingRate(fd, rateBytesPerS) {
      rateBuf.writeBigUInt64LE(rateBytesPerS);
      if (setsockopt(fd, SOL_SOCKET, SO_MAX_PACING_RATE, rateBuf, 8) === 0) return { ok: true };
      const errno = koffi.errno();
      return { ok: false, error: `setsockopt(SO_MAX_PACING_RATE) failed: ${ERRNO_NAMES[errno] ?? `errno ${errno}`}` };
    },
    readTcpInfo(fd) {
      infoLen[0] = infoBuf.length;
      if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, infoBuf, infoLen) !== 0) return null;
      return parseTcpInfo(infoBuf, infoLen[0]!);
    },
  };
}

/** The file descriptor under a Node socket, or null (closed, or not a kernel socket). */
export function socketFd(socket: unknown): number | null {
  const fd = (socket as { _handle?: { fd?: unknown } } | null)?._handle?.fd;
  return typeof fd === 'number' && fd >= 0 ? fd : null;
}
