/**
 * A stable rung choice on top of HYB. HYB alone flaps on a link near a rung: with a
 * full buffer its buffer term (r <= beta x (1 + B_0 / D_T)) admits a rung above the
 * throughput, the buffer drains, HYB steps down, the buffer refills, and so on; the VBR
 * sizes of the next T chunks move the test back and forth as well.
 *
 * The rule keeps HYB's safety: it never picks a rung above HYB's, so never one whose
 * lookahead (Theorem 1) drains the buffer. Down-switches and holds are HYB's own. An
 * up-switch additionally needs a rung the link sustains. By Theorem 1,
 * B_{T+1} - B_0 = D_T (1 - rbar / xbar): at a rung whose bitrate is at most x the buffer
 * does not fall, and the next lookahead does not undo the switch. The bitrate is the
 * larger of the rung's nominal one and the next T chunks' S_T / D_T, so that a few light
 * VBR chunks do not carry the player onto a rung whose heavier chunks then push it
 * back; `upSwitchSafety` scales x for estimate error.
 *
 * That is hysteresis on the estimate: going up takes x above the rung's bitrate, staying
 * takes only HYB's buffer test, so a buffer fed by a link near a rung carries the player
 * through the estimate's dips instead of switching at each one.
 *
 * An up-switch also keeps a reserve (`bufferReserveFraction`, `reserveFillRate`): its
 * predicted B_T must exceed min(B_0 + g D_T, R), not just 0. A session then climbs only
 * as far as lets its buffer grow towards R, and spends on quality only the buffer above
 * R, so a link lost early in a session (a tunnel, a lost handover) finds a buffer to play
 * from. Holds and down-switches stay HYB's, so the reserve never forces a switch down.
 */
import { bufferReserve, type BufferReserve, type SammyConfig } from './config.js';
import { hybRung, predictedBufferS, type HybInput, type HybResult } from './hyb.js';
import { lookahead, type Ladder } from './ladder.js';

export type StabilityRule = Pick<SammyConfig, 'upSwitchSafety' | 'bufferReserveFraction' | 'reserveFillRate' | 'maxBufferS'>;

/**
 * The B_T an up-switch must leave over a lookahead of D_T: min(B_0 + g D_T, R). Above
 * the reserve R the plan may spend the buffer down to R; under it the buffer must grow
 * by g seconds per second of lookahead. 0 without a reserve (HYB's own B_T > 0).
 */
export function keptBufferS(bufferS: number, durationS: number, reserve: BufferReserve): number {
  return Math.min(Math.max(0, bufferS) + reserve.reserveFillRate * durationS, reserve.reserveS);
}

export interface StableInput extends HybInput {
  /** The rung of the previous chunk; null for the session's first chunk. */
  currentRung: number | null;
}

export interface StableResult extends HybResult {
  /** HYB's own choice, when the rule held a lower rung instead. */
  heldBelowRung: number | null;
}

/** The highest rung in (current, hyb] that passes the up-switch test, or null. */
function upSwitchRung(ladder: Ladder, input: StableInput, hyb: HybResult, rule: StabilityRule): { rung: number; predictedBufferS: number } | null {
  const x = input.estimateKbps;
  const reserve = bufferReserve(rule);
  for (let rung = hyb.rung; rung > input.currentRung!; rung--) {
    const la = lookahead(ladder, rung, input.segmentIndex, input.lookaheadSegments);
    const bT = predictedBufferS(input.bufferS, la.durationS, la.sizeKbit, input.beta * x);
    const bitrateKbps = Math.max(ladder.bitratesKbps[rung]!, la.sizeKbit / la.durationS);
    if (bitrateKbps <= rule.upSwitchSafety * x && bT > keptBufferS(input.bufferS, la.durationS, reserve)) return { rung, predictedBufferS: bT };
  }
  return null;
}

export function stableRung(ladder: Ladder, input: StableInput, rule: StabilityRule): StableResult {
  const hyb = hybRung(ladder, input);
  const current = input.currentRung;
  if (current === null || hyb.noSafeRung || hyb.rung <= current) return { ...hyb, heldBelowRung: null };
  const up = upSwitchRung(ladder, input, hyb, rule);
  if (up !== null) return { rung: up.rung, predictedBufferS: up.predictedBufferS, noSafeRung: false, heldBelowRung: up.rung < hyb.rung ? hyb.rung : null };
  // Hold the current rung, which HYB also finds safe (it scans down from its pick; a lower rung is smaller).
  const la = lookahead(ladder, current, input.segmentIndex, input.lookaheadSegments);
  const bT = predictedBufferS(input.bufferS, la.durationS, la.sizeKbit, input.beta * input.estimateKbps);
  if (bT <= 0) return { ...hyb, heldBelowRung: null };
  return { rung: current, predictedBufferS: bT, noSafeRung: false, heldBelowRung: hyb.rung };
}
