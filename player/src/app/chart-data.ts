/**
 * What the page's charts plot, as pure functions (no DOM, no uPlot): the video's download
 * rate over time from Resource Timing entries, the scales of the per-chunk chart, and the
 * index whose values a legend shows when nothing is hovered.
 */
import { pathOf } from '../browser/playback.js';

/** The fields of a `PerformanceResourceTiming` the download rate reads (ms on that page's clock). */
export interface ResourceEntryLike {
  name: string;
  startTime: number;
  requestStart: number;
  responseStart: number;
  responseEnd: number;
  transferSize: number;
  encodedBodySize: number;
}

/** One body that crossed the network: its bytes, from its first to its last byte. */
export interface Transfer {
  startMs: number;
  endMs: number;
  bytes: number;
}

/**
 * The body of `entry` as it crossed the network, with its times moved by `offsetMs` (to
 * put another page's entries on this page's clock: the other `timeOrigin` minus this
 * one). Null when no body crossed it or the entry does not say: a cache hit or one
 * revalidated with a 304 (`transferSize` below the body's size), or a cross-origin
 * answer without `Timing-Allow-Origin` (both sizes 0). The bytes flow from the first
 * byte (`responseStart`) to the last; before it the request waits a round trip and the
 * server, which sends nothing.
 */
export function transferOf(entry: ResourceEntryLike, offsetMs = 0): Transfer | null {
  const bytes = entry.encodedBodySize;
  if (!(bytes > 0) || entry.transferSize < bytes || !(entry.responseEnd > 0)) return null;
  const start = entry.responseStart > 0 ? entry.responseStart : entry.requestStart > 0 ? entry.requestStart : entry.startTime;
  if (entry.responseEnd < start) return null;
  return { startMs: start + offsetMs, endMs: entry.responseEnd + offsetMs, bytes };
}

/** A rate over time: `kbps[i]` holds from `t[i]` to `t[i + 1]` (seconds); the last point closes the last bin. */
export interface RateSeries {
  t: number[];
  kbps: number[];
  /** The mean rate over the bins of the trailing `meanWindowMs`, at each bin. */
  meanKbps: number[];
}

/**
 * The download rate of `transfers` in bins of `binMs` from `originMs` to `endMs` (the
 * last bin may be shorter): each transfer's bytes are spread evenly over its first to
 * last byte, a transfer of no measurable length lands whole in the bin of its start,
 * and a bin's rate is its bytes over its length. Bytes before `originMs` or after
 * `endMs` are left out. Times are in ms; `t` is in seconds since `originMs`.
 */
export function downloadRate(transfers: readonly Transfer[], originMs: number, endMs: number, binMs: number, meanWindowMs = 10_000): RateSeries {
  if (!(binMs > 0)) throw new Error(`binMs must be positive, got ${binMs}`);
  const spanMs = endMs - originMs;
  if (!(spanMs > 0)) return { t: [], kbps: [], meanKbps: [] };
  const count = Math.ceil(spanMs / binMs);
  const bytes = new Array<number>(count).fill(0);
  const binOf = (ms: number) => Math.min(count - 1, Math.floor((ms - originMs) / binMs));
  for (const x of transfers) {
    const durationMs = x.endMs - x.startMs;
    if (durationMs <= 0) {
      if (x.startMs >= originMs && x.startMs < endMs) bytes[binOf(x.startMs)]! += x.bytes;
      continue;
    }
    const from = Math.max(x.startMs, originMs);
    const to = Math.min(x.endMs, endMs);
    for (let i = binOf(from); i < count && from < to; i++) {
      const binStart = originMs + i * binMs;
      const overlap = Math.min(to, binStart + binMs) - Math.max(from, binStart);
      if (overlap > 0) bytes[i]! += (x.bytes * overlap) / durationMs;
      if (binStart + binMs >= to) break;
    }
  }
  const t: number[] = [];
  const kbps: number[] = [];
  for (let i = 0; i < count; i++) {
    const lengthMs = Math.min(binMs, spanMs - i * binMs);
    t.push((i * binMs) / 1000);
    kbps.push((bytes[i]! * 8) / lengthMs); // bits per ms = kbit/s
  }
  const meanKbps = trailingMean(kbps, Math.max(1, Math.round(meanWindowMs / binMs)));
  t.push(spanMs / 1000);
  kbps.push(kbps.at(-1)!);
  meanKbps.push(meanKbps.at(-1)!);
  return { t, kbps, meanKbps };
}

/** A linear range from 0 that holds every series' largest value (the download-rate charts share one). */
export function rateRange(...series: readonly (readonly number[])[]): [number, number] {
  const max = Math.max(0, ...series.map((s) => Math.max(0, ...s.filter(Number.isFinite))));
  return [0, max > 0 ? max * 1.1 : 1000];
}

export interface ChunkScales {
  /** The range of the bitrate, the rtp sent and the rate applied (log kbps). */
  main: [number, number];
  /** The range of the measured throughput: `main` unless it is split off. */
  throughput: [number, number];
  /** The throughput has its own range (and axis), since on `main` it would squeeze the rest. */
  split: boolean;
}

/** How far beyond the other lines' range the throughput may reach (factor) before it gets its own axis. */
export const THROUGHPUT_SPLIT_FACTOR = 10;
const PAD = 1.25;
const DEFAULT_RANGE: [number, number] = [100, 10_000];

function positive(values: readonly (number | null | undefined)[]): number[] {
  return values.filter((v): v is number => typeof v === 'number' && Number.isFinite(v) && v > 0);
}

function padded(values: readonly number[]): [number, number] {
  let min = Infinity;
  let max = -Infinity;
  for (const v of values) {
    if (v < min) min = v;
    if (v > max) max = v;
  }
  return [min / PAD, max * PAD];
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/**
 * The per-chunk chart's log scales. The bitrate, rtp and applied rate share one; the
 * measured throughput shares it too (its outliers widen it: the unpaced chunks before
 * Sammy's first frame) unless most of it lies more than {@link THROUGHPUT_SPLIT_FACTOR}x
 * beyond the others' values (the player's own ABR, unpaced on a fast link, measures 30x
 * its bitrate and more), where it gets its own scale, so the bitrate line keeps the
 * height of the chart.
 */
export function chunkScales(main: readonly (number | null | undefined)[], throughput: readonly (number | null | undefined)[]): ChunkScales {
  const m = positive(main);
  const th = positive(throughput);
  if (m.length === 0 && th.length === 0) return { main: DEFAULT_RANGE, throughput: DEFAULT_RANGE, split: false };
  if (m.length === 0 || th.length === 0) {
    const r = padded(m.length ? m : th);
    return { main: r, throughput: r, split: false };
  }
  const mid = median(th);
  if (mid > Math.max(...m) * THROUGHPUT_SPLIT_FACTOR || mid < Math.min(...m) / THROUGHPUT_SPLIT_FACTOR) return { main: padded(m), throughput: padded(th), split: true };
  const shared = padded([...m, ...th]);
  return { main: shared, throughput: shared, split: false };
}

/**
 * Tick values for a log axis from `min` to `max`: 1, 2 and 5 times the powers of 10 in
 * it, only the powers when that makes more than 8, and finer steps when it makes fewer
 * than 3 (a range within one decade).
 */
export function logTicks(min: number, max: number): number[] {
  if (!(min > 0) || !(max > min)) return [];
  const ticks = (mantissas: readonly number[]) => {
    const out: number[] = [];
    for (let k = Math.floor(Math.log10(min)); k <= Math.ceil(Math.log10(max)); k++) {
      for (const m of mantissas) {
        const v = Number((m * 10 ** k).toPrecision(6));
        if (v >= min && v <= max) out.push(v);
      }
    }
    return out;
  };
  const coarse = ticks([1, 2, 5]);
  if (coarse.length > 8) return ticks([1]);
  if (coarse.length < 3) return ticks([1, 1.5, 2, 3, 4, 5, 6, 7, 8, 9]);
  return coarse;
}

/** A tick label in kbit/s, short: 150, 1.5k, 20k, 1.2M. */
export function shortKbps(v: number): string {
  const [div, unit] = v >= 1e6 ? [1e6, 'M'] : v >= 1e3 ? [1e3, 'k'] : [1, ''];
  return `${Number((v / div).toPrecision(3))}${unit}`;
}

/** The mean of the `n` values up to and including each one (fewer at the start). */
export function trailingMean(values: readonly number[], n: number): number[] {
  const out: number[] = [];
  let sum = 0;
  for (let i = 0; i < values.length; i++) {
    sum += values[i]!;
    if (i >= n) sum -= values[i - n]!;
    out.push(sum / Math.min(i + 1, n));
  }
  return out;
}

/** The index a legend shows when the cursor is off the chart: the latest point, or null before any. */
export function latestIndex(xs: { readonly length: number }): number | null {
  return xs.length > 0 ? xs.length - 1 : null;
}

/** The fields of a request as the page recorded it (`window.sammy.requests()`) that say what it fetched. */
export interface RequestLike {
  path: string;
  mediaType: string;
  type: string;
}

/**
 * The network transfers of the video's media segments among a page's Resource Timing
 * `entries`: those whose path the page requested as a video media segment (the audio,
 * init segments, manifests and the page itself are left out). `offsetMs` as for
 * {@link transferOf}.
 */
export function videoTransfers(entries: readonly ResourceEntryLike[], requests: readonly RequestLike[], offsetMs = 0): Transfer[] {
  const paths = new Set(requests.filter((r) => r.mediaType === 'video' && r.type === 'MediaSegment').map((r) => r.path));
  const out: Transfer[] = [];
  for (const e of entries) {
    if (!paths.has(pathOf(e.name))) continue;
    const x = transferOf(e, offsetMs);
    if (x) out.push(x);
  }
  return out;
}
