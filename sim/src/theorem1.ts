/**
 * Theorem 1 (thesis 2.4.3) over a run of consecutive chunks:
 *   B_end = B_0 + D_T - D_T * rbar / xbar,
 * with D_T their media duration, rbar = S_T / D_T their time-average bitrate (real
 * sizes) and xbar = S_T / sum(Delta_t) their time-average throughput, Delta_t being
 * request to last byte. The thesis assumes the buffer is never full and never empty
 * and notes the alternative, "keep track of the amount of full and empty time": time
 * spent idle with a full buffer drains it (-idle), time the playhead stands still
 * (startup, rebuffers) does not (+stopped). Both are 0 on a stretch without them,
 * where the identity holds as the thesis states it.
 */
import type { SimChunkRecord } from './session.js';

export interface Theorem1 {
  /** Buffer when the first chunk was requested. */
  b0S: number;
  /** Buffer right after the last chunk landed. */
  bEndS: number;
  dTS: number;
  sTKbit: number;
  rBarKbps: number;
  xBarKbps: number;
  /** Idle time before the requests after the first. */
  idleS: number;
  /** Time the playhead stood still during the run. */
  stoppedS: number;
  /** B_0 + D_T - D_T rbar / xbar - idle + stopped. */
  predictedEndS: number;
  /** bEndS - predictedEndS. */
  errorS: number;
}

export function theorem1(chunks: readonly SimChunkRecord[], segmentDurationS: number): Theorem1 {
  if (chunks.length === 0) throw new RangeError('Theorem 1 needs at least one chunk');
  const dTS = chunks.length * segmentDurationS;
  let sTKbit = 0;
  let deltaS = 0;
  let idleS = 0;
  let stoppedS = 0;
  chunks.forEach((c, i) => {
    sTKbit += (c.sizeBytes * 8) / 1000;
    deltaS += c.downloadS;
    if (i > 0) idleS += c.waitS;
    stoppedS += c.stoppedS;
  });
  const rBarKbps = sTKbit / dTS;
  const xBarKbps = sTKbit / deltaS;
  const b0S = chunks[0]!.bufferBeforeS;
  const bEndS = chunks[chunks.length - 1]!.bufferAfterS;
  const predictedEndS = b0S + dTS - (dTS * rBarKbps) / xBarKbps - idleS + stoppedS;
  return { b0S, bEndS, dTS, sTKbit, rBarKbps, xBarKbps, idleS, stoppedS, predictedEndS, errorS: bEndS - predictedEndS };
}

/**
 * The first stretch after the first frame with neither idle time nor a stall: where
 * Theorem 1 holds without corrections. Empty if the very next request had to wait.
 */
export function firstSteadyStretch(chunks: readonly SimChunkRecord[]): SimChunkRecord[] {
  const start = chunks.findIndex((c) => c.phase === 'playing');
  if (start < 0) return [];
  const stretch: SimChunkRecord[] = [];
  for (let i = start; i < chunks.length; i++) {
    const c = chunks[i]!;
    if (c.stoppedS > 0 || (stretch.length > 0 && c.waitS > 0)) break;
    stretch.push(c);
  }
  return stretch;
}
