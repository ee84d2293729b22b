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
}

export function sampleKbps(s: Pick<ThroughputSample, 'sizeBytes' | 'downloadS'>): number {
  return bytesToKbit(s.sizeBytes) / s.downloadS;
}

/** Whether the chunk was requested with an rtp. */
export function isPaced(s: ThroughputSample): s is ThroughputSample & { rtpKbps: number } {
  return s.rtpKbps !== undefined && s.rtpKbps !== null;
}

/**
 * Whether a chunk's throughput measured the link: unpaced, or paced and still below
 * `paceFraction` of its rtp. A paced chunk near its pace says only that the link was at
 * least that fast.
 */
export function isLinkBound(s: ThroughputSample, paceFraction: number): boolean {
  return !isPaced(s) || sampleKbps(s) < paceFraction * s.rtpKbps;
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
