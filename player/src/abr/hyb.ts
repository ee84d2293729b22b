/**
 * HYB with lookahead (Akhtar et al. 2018, as analysed in thesis 2.4.2): for each rung,
 * predict the buffer after the next T chunks at the discounted throughput beta * x,
 * using their real sizes, and take the highest rung whose prediction stays above zero.
 */
import { lookahead, type Ladder } from './ladder.js';

/**
 * Theorem 1 (thesis 2.4.3): B_T = B_0 + D_T - S_T / x, with S_T / x the time to fetch
 * the T chunks at average throughput x. HYB evaluates it at beta * x.
 */
export function predictedBufferS(bufferS: number, durationS: number, sizeKbit: number, throughputKbps: number): number {
  return bufferS + durationS - sizeKbit / throughputKbps;
}

export interface HybInput {
  /** B_0. */
  bufferS: number;
  /** First segment of the lookahead (the one about to be requested). */
  segmentIndex: number;
  /** x: the throughput estimate. */
  estimateKbps: number;
  /** The highest rung allowed now (a resolution or user cap); the ladder's top when none. */
  maxRung: number;
  beta: number;
  lookaheadSegments: number;
}

export interface HybResult {
  rung: number;
  /** B_T of the chosen rung (negative when even the lowest rung is predicted to drain the buffer). */
  predictedBufferS: number;
  /** No rung keeps B_T > 0: the lowest is taken. */
  noSafeRung: boolean;
}

export function hybRung(ladder: Ladder, input: HybInput): HybResult {
  const x = input.beta * input.estimateKbps;
  let lowestPrediction = -Infinity;
  for (let rung = input.maxRung; rung >= 0; rung--) {
    const la = lookahead(ladder, rung, input.segmentIndex, input.lookaheadSegments);
    const b = x > 0 ? predictedBufferS(input.bufferS, la.durationS, la.sizeKbit, x) : -Infinity;
    if (b > 0) return { rung, predictedBufferS: b, noSafeRung: false };
    lowestPrediction = b;
  }
  return { rung: 0, predictedBufferS: lowestPrediction, noSafeRung: true };
}
