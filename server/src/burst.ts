// The burst-size knob (thesis 2.5.5): at most N packets leave back-to-back.
//
// With SO_MAX_PACING_RATE the kernel paces whole TSO/GSO packets: each skb leaves
// at line rate, then the socket waits skb_len / rate. So the kernel's train length
// is the skb size TCP picks (tcp_tso_autosize), which at microsecond RTTs is a full
// 64 KB (45 packets) whatever the rate. Two mechanisms give shorter trains:
//   kernel: where the egress device's gso_max_segs (and the namespace's
//           tcp_min_tso_segs) are set to N, the kernel's own trains are N packets
//           at any rate, for free. This is per device and namespace, so the server
//           can only detect it (here) and the lab sets it.
//   app:    the server writes N x MSS at a time, one write per N x MSS / rate, so
//           the socket never holds more than one burst. Per response, costs a timer
//           per burst, and cannot hold N once the interval falls below a timer's
//           resolution (then it writes what the schedule owes about every 1 ms).
import type { BurstMode } from './options.js';

export interface KernelTsoSettings {
  /** net.ipv4.tcp_min_tso_segs of the server's namespace. */
  minTsoSegs: number;
  /** net.ipv4.tcp_tso_rtt_log: at RTTs below 2^log us TCP adds up to 64 KB per skb. */
  tsoRttLog: number;
  /** net.ipv4.tcp_congestion_control: bbr supplies its own minimum TSO size. */
  congestionControl: string;
}

export interface DeviceGso {
  gsoMaxSize: number;
  gsoMaxSegs: number;
}

export const DEFAULT_KERNEL_TSO: KernelTsoSettings = { minTsoSegs: 2, tsoRttLog: 9, congestionControl: 'cubic' };
export const DEFAULT_DEVICE_GSO: DeviceGso = { gsoMaxSize: 65536, gsoMaxSegs: 65535 };

/** sk_pacing_shift: TCP sizes an skb to about 1/2^10 s (1 ms) of the pacing rate. */
const PACING_SHIFT = 10;
/** tcp_bbr.c bbr_min_tso_rate (1.2 Mbit/s) in bytes/s: below it bbr allows 1-segment skbs. */
const BBR_MIN_TSO_RATE_BYTES_PER_S = 1_200_000 / 8;

export interface KernelTrainInputs {
  rateBytesPerS: number;
  mssBytes: number;
  minRttUs: number;
  kernel: KernelTsoSettings;
  device: DeviceGso;
}

/**
 * Packets per skb the kernel will send back-to-back for this socket at this pacing
 * rate: tcp_tso_autosize() and tcp_tso_segs() of net/ipv4/tcp_output.c (Linux 6.x).
 */
export function predictKernelTrainPackets(i: KernelTrainInputs): number {
  let bytes = Math.floor(i.rateBytesPerS / 2 ** PACING_SHIFT);
  const rttShift = Math.floor(i.minRttUs / 2 ** i.kernel.tsoRttLog);
  if (rttShift < 32) bytes += Math.floor(i.device.gsoMaxSize / 2 ** rttShift);
  bytes = Math.min(bytes, i.device.gsoMaxSize);
  const minTso =
    i.kernel.congestionControl === 'bbr' ? (i.rateBytesPerS < BBR_MIN_TSO_RATE_BYTES_PER_S ? 1 : 2) : i.kernel.minTsoSegs;
  const segs = Math.max(Math.floor(bytes / Math.max(1, i.mssBytes)), minTso);
  return Math.max(1, Math.min(segs, i.device.gsoMaxSegs));
}

/**
 * Below this interval between bursts Node's timers (1 ms granularity, ~0.3 ms late
 * on a busy machine) merge or drop bursts: measured, timed trains merge below ~2 ms.
 */
export const APP_MIN_BURST_INTERVAL_MS = 2;
/** In the too-fast regime the writer wakes about this often and writes what it owes. */
export const APP_TIMER_MS = 1;

/**
 * With application-timed bursts the writer holds the rate, and the kernel's cap is
 * this multiple of it: at the plain rate the kernel would hold a burst back while
 * the next one arrives and send both as one train. The writer never catches up
 * faster than twice the rate (bursts at least half an interval apart), so the cap
 * also bounds what a late timer can do.
 */
export const APP_KERNEL_CAP_FACTOR = 2;

export type BurstPlan =
  | { mechanism: 'kernel'; trainPackets: number }
  | {
      mechanism: 'app';
      /** Bytes per write (a multiple of the MSS). */
      chunkBytes: number;
      /** Planned time between writes. */
      intervalMs: number;
      /** Upper bound on packets per train. */
      trainPackets: number;
      /** True when every write is exactly N x MSS (the knob holds); false when timers are too coarse. */
      strict: boolean;
    };

export interface BurstPlanInputs {
  mode: BurstMode;
  burstPackets: number;
  rateBytesPerS: number;
  mssBytes: number;
  /** predictKernelTrainPackets() for this socket. */
  kernelTrainPackets: number;
}

/** Which mechanism keeps this response's trains shortest; the kernel on a tie (it costs nothing). */
export function planBursts(i: BurstPlanInputs): BurstPlan {
  const kernel: BurstPlan = { mechanism: 'kernel', trainPackets: i.kernelTrainPackets };
  if (i.mode === 'kernel' || (i.mode === 'auto' && i.kernelTrainPackets <= i.burstPackets)) return kernel;
  const mss = Math.max(1, i.mssBytes);
  const strictIntervalMs = ((i.burstPackets * mss) / i.rateBytesPerS) * 1000;
  if (strictIntervalMs >= APP_MIN_BURST_INTERVAL_MS) {
    return { mechanism: 'app', chunkBytes: i.burstPackets * mss, intervalMs: strictIntervalMs, trainPackets: i.burstPackets, strict: true };
  }
  const chunkPackets = Math.max(i.burstPackets, Math.ceil((i.rateBytesPerS * APP_TIMER_MS) / 1000 / mss));
  // A late timer makes the writer catch up with at most two chunks at once; the
  // kernel never sends more than its own train in one go either.
  const trainPackets = Math.min(2 * chunkPackets, i.kernelTrainPackets);
  if (i.mode === 'auto' && i.kernelTrainPackets <= trainPackets) return kernel;
  return {
    mechanism: 'app',
    chunkBytes: chunkPackets * mss,
    intervalMs: ((chunkPackets * mss) / i.rateBytesPerS) * 1000,
    trainPackets,
    strict: false,
  };
}

export interface BurstClockOptions {
  rateBytesPerS: number;
  /** Bytes per burst: burstPackets x MSS (strict), or the ~1 ms chunk (not strict). */
  chunkBytes: number;
  /** Strict: every burst is exactly chunkBytes (the last may be shorter), never two at once. */
  strict: boolean;
  /** Burst sizes stay multiples of this so each burst is whole packets. */
  mssBytes: number;
}

/**
 * The schedule of application-timed bursts (mechanism `app`), without timers or
 * I/O: when the next burst is due and how many bytes it carries. The stream path's
 * writer (burst-pacer.ts) and the zero-copy sender (sender-loop.ts) both follow it.
 *
 * Strict mode keeps its schedule (a late wake-up shortens the next wait, to no less
 * than half an interval), so it never sends two bursts together. Non-strict mode is
 * due about once per chunk interval and sends what the schedule owes, between one
 * and two chunks, in whole packets.
 */
export class BurstClock {
  readonly intervalMs: number;
  readonly #rateBytesPerS: number;
  readonly #chunkBytes: number;
  readonly #strict: boolean;
  readonly #mssBytes: number;
  #startMs: number | null = null;
  #dueMs = 0;
  #sentBytes = 0;

  constructor(o: BurstClockOptions) {
    this.#rateBytesPerS = o.rateBytesPerS;
    this.#chunkBytes = Math.max(1, o.chunkBytes);
    this.#strict = o.strict;
    this.#mssBytes = Math.max(1, o.mssBytes);
    this.intervalMs = (this.#chunkBytes / o.rateBytesPerS) * 1000;
  }

  /** The most bytes one burst may carry; a writer holding less (and not at the end) waits for more. */
  get maxBurstBytes(): number {
    return this.#strict ? this.#chunkBytes : 2 * this.#chunkBytes;
  }

  /**
   * How early a burst may go without changing the rate, so that bursts of several
   * connections share a wake-up: a strict schedule counts from the due time, not from
   * when the burst went. A non-strict one sends what it owes but at least one chunk,
   * so an early burst would add up: none.
   */
  get earlyMs(): number {
    return this.#strict ? this.intervalMs / 4 : 0;
  }

  /** When the next burst is due (the caller's clock; before the first burst: 0, at once). */
  get dueMs(): number {
    return this.#dueMs;
  }

  /** Milliseconds until the next burst is due; zero or less: now. */
  waitMs(nowMs: number): number {
    return this.#startMs === null ? 0 : this.#dueMs - nowMs;
  }

  /** Call when a burst is due: its size (at most `availableBytes`), recorded as sent, and the next due time set. */
  take(nowMs: number, availableBytes: number): number {
    if (this.#startMs === null) {
      this.#startMs = nowMs;
      this.#dueMs = nowMs;
    }
    const bytes = Math.min(availableBytes, this.#strict ? this.#chunkBytes : this.#owedBytes(nowMs));
    this.#sentBytes += bytes;
    this.#dueMs = this.#strict ? Math.max(this.#dueMs + this.intervalMs, nowMs + this.intervalMs / 2) : nowMs + this.intervalMs;
    return bytes;
  }

  /** Non-strict: what the schedule owes, whole packets, one to two chunks. */
  #owedBytes(nowMs: number): number {
    const owed = (this.#rateBytesPerS * (nowMs - this.#startMs!)) / 1000 - this.#sentBytes;
    const wholePackets = Math.floor(owed / this.#mssBytes) * this.#mssBytes;
    return Math.min(2 * this.#chunkBytes, Math.max(this.#chunkBytes, wholePackets));
  }
}
