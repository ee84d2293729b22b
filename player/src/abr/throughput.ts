/** Chunk throughput samples and the averages the core takes of them. */
import type { Phase } from './phase.js';
import { bytesToKbit } from './ladder.js';

/** One downloaded video chunk, as the core needs it. */
export interface ThroughputSample {
  sizeBytes: number;
  /** From request to last byte. */
  downloadS: number;
  /**
   * The phase when the chunk was *requested*: an `initial` chunk went out without rtp
   * (unpaced), a `playing` chunk with one. Only `initial` samples may enter the history.
   */
  phase: Phase;
  /** The rtp the chunk was requested with (null or absent: unpaced). */
  rtpKbps?: number | null;
  /**
   * From request to the response's first byte (the round trip and the server's start);
   * null or absent when unknown, and then the whole download counts as transfer.
   */
  firstByteS?: number | null;
}

export function sampleKbps(s: Pick<ThroughputSample, 'sizeBytes' | 'downloadS'>): number {
  return bytesToKbit(s.sizeBytes) / s.downloadS;
}

/** Whether the chunk was requested with an rtp. */
export function isPaced(s: ThroughputSample): s is ThroughputSample & { rtpKbps: number } {
  return s.rtpKbps !== undefined && s.rtpKbps !== null;
}

/** TCP's initial congestion window (RFC 6928: 10 segments), in bytes of payload. */
export const INITIAL_WINDOW_BYTES = 10 * 1448;

/** The chunk's round trip as far as it is known (its time to first byte), else 0. */
function roundTripS(s: ThroughputSample): number {
  const t = s.firstByteS;
  return typeof t === 'number' && Number.isFinite(t) && t > 0 && t < s.downloadS ? t : 0;
}

/** The body's time on the wire: first byte to last (the whole download when the first byte's time is unknown). */
export function transferS(s: ThroughputSample): number {
  return s.downloadS - roundTripS(s);
}

/** What the link carried while the body arrived (kbps): the size over the transfer time, the round trip left out. */
export function linkKbps(s: ThroughputSample): number {
  return bytesToKbit(s.sizeBytes) / transferS(s);
}

/**
 * How long a body of `sizeBytes` takes, first byte to last, when only a pace of
 * `rtpKbps` limits it over a path of this round trip: after an idle gap TCP starts from
 * its initial window and doubles it each round trip, and once a window carries a round
 * trip's worth of the pace, the rest flows at the pace. With no round trip known, just
 * size / pace.
 */
export function paceLimitedTransferS(sizeBytes: number, rtpKbps: number, roundTripS: number): number {
  const bytesPerS = (rtpKbps * 1000) / 8;
  let sentBytes = 0;
  let windowBytes = INITIAL_WINDOW_BYTES;
  let elapsedS = 0;
  while (roundTripS > 0 && windowBytes < bytesPerS * roundTripS && sentBytes + windowBytes < sizeBytes) {
    sentBytes += windowBytes;
    windowBytes *= 2;
    elapsedS += roundTripS;
  }
  return elapsedS + (sizeBytes - sentBytes) / bytesPerS;
}

/**
 * Whether a chunk's throughput measured the link: unpaced, or paced and its body took
 * longer than 1 / `paceFraction` times what its pace alone allows over its round trip
 * (`paceLimitedTransferS`). The round trip is not the link: a chunk requested over a
 * long path measures well below its pace on a link with room to spare, from the request's
 * latency and TCP's start, and is not link-bound for that. A paced chunk near its pace
 * says only that the link was at least that fast.
 */
export function isLinkBound(s: ThroughputSample, paceFraction: number): boolean {
  if (!isPaced(s)) return true;
  if (!(paceFraction > 0)) return false;
  return transferS(s) * paceFraction > paceLimitedTransferS(s.sizeBytes, s.rtpKbps, roundTripS(s));
}

export function isUsableSample(s: ThroughputSample): boolean {
  return Number.isFinite(s.sizeBytes) && s.sizeBytes > 0 && Number.isFinite(s.downloadS) && s.downloadS > 0;
}

/** Harmonic mean (robust to one fast outlier, as in MPC); null for no values. */
export function harmonicMean(values: readonly number[]): number | null {
  const positive = values.filter((v) => Number.isFinite(v) && v > 0);
  if (positive.length === 0) return null;
  return positive.length / positive.reduce((sum, v) => sum + 1 / v, 0);
}

/**
 * Total bits over total download time: the throughput during the "on" periods of the
 * given chunks (thesis 2.5.1's chunk throughput); null for none.
 */
export function aggregateKbps(samples: readonly Pick<ThroughputSample, 'sizeBytes' | 'downloadS'>[]): number | null {
  let kbit = 0;
  let s = 0;
  for (const x of samples) {
    kbit += bytesToKbit(x.sizeBytes);
    s += x.downloadS;
  }
  return s > 0 ? kbit / s : null;
}
