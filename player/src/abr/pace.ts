/**
 * Sammy's pace rate (thesis 2.4.2): buffer-based between a multiple of the top bitrate
 * at an empty buffer and a smaller one at a full buffer, never below the throughput
 * HYB needs to keep choosing the top rung (Eq. 2.1) nor below the one the stability
 * rule needs to switch back up to it; from `linkPaceMinBufferS` of buffer, and while it
 * is not already under the link, not above a fraction of what the link carried when a
 * recent pace was above it (the pace under the link, config.ts).
 */
import { bufferReserve, type SammyConfig } from './config.js';
import { lookahead, type Ladder } from './ladder.js';
import { keptBufferS } from './stability.js';

/**
 * Eq. 2.1: the least throughput estimate with which HYB still picks bitrate `topKbps`:
 * x >= r / beta / (1 + B_0 / D_T).
 */
export function eq21FloorKbps(topKbps: number, beta: number, bufferS: number, durationS: number): number {
  return topKbps / beta / (1 + Math.max(0, bufferS) / durationS);
}

/**
 * The fullest buffer a request ever sees: the player requests only while buffer + one
 * segment < target (dash.js ScheduleController; the segment is not counted when the
 * target is within one segment), so at a 30 s target with 2 s segments it is 28 s.
 * The pace reaches its full-buffer multiple there, not at a target it never reaches.
 */
export function fullBufferS(maxBufferS: number, segmentDurationS: number): number {
  return maxBufferS > segmentDurationS ? maxBufferS - segmentDurationS : maxBufferS;
}

/** f = buffer / full buffer, clamped to [0, 1]. */
export function bufferFraction(bufferS: number, fullS: number): number {
  if (!Number.isFinite(bufferS) || bufferS <= 0) return 0;
  return Math.min(1, bufferS / fullS);
}

/** top * (empty * (1 - f) + full * f): 11x the top bitrate when empty, 2.9x when full. */
export function bufferBasedPaceKbps(topKbps: number, fraction: number, cfg: Pick<SammyConfig, 'paceEmptyMultiplier' | 'paceFullMultiplier'>): number {
  return topKbps * (cfg.paceEmptyMultiplier * (1 - fraction) + cfg.paceFullMultiplier * fraction);
}

/** CTA-5004: rtp is sent in kbps, rounded to 100 kbps (a fixed step of the specification, not a parameter). */
export const RTP_STEP_KBPS = 100;

/** CTA-5004 rtp: integer kbps in steps of `stepKbps`, rounded up so it never falls below the pace. */
export function roundRtpKbps(paceKbps: number, stepKbps = RTP_STEP_KBPS): number {
  return Math.max(stepKbps, Math.ceil(paceKbps / stepKbps - 1e-9) * stepKbps);
}

/**
 * The floor a paced request declares to the server (CMCD `sammy-floor`): the pace's
 * floor rounded up to an integer kbps, and never above the rtp it goes with (the
 * rtp's own rounding may leave it a hair under an exact floor), so a server's guard
 * that raises an rtp to a declared floor never raises Sammy's.
 */
export function declaredFloorKbps(floorKbps: number, rtpKbps: number): number {
  return Math.min(Math.ceil(floorKbps - 1e-9), rtpKbps);
}

export interface PaceInput {
  bufferS: number;
  /** First segment of the lookahead (the one about to be requested). */
  segmentIndex: number;
  /** The highest rung the player may choose now: its bitrate is "top". */
  maxRung: number;
  /**
   * What the link carried in the slowest recent paced chunk it held back (session.ts);
   * null or absent: none. When the buffer-based pace is at or above it, the pace is at
   * most `linkPaceFraction` of it (the pace under the link), never below the floor.
   */
  linkKbps?: number | null;
}

export interface Pace {
  /** max(min(buffer-based, link cap), floor). */
  paceKbps: number;
  /** What is sent as CMCD rtp: the pace rounded up. */
  rtpKbps: number;
  topKbps: number;
  bufferBasedKbps: number;
  /** Eq. 2.1 with the nominal top bitrate (the thesis's form). */
  eq21Kbps: number;
  /**
   * Eq. 2.1 over the real sizes of the next T top-rung chunks, S_T / (beta (B_0 + D_T)):
   * the same bound for the lookahead HYB actually runs (equal to `eq21Kbps` when the
   * chunks are exactly at the nominal bitrate).
   */
  eq21LookaheadKbps: number;
  /**
   * The least estimate with which the stability rule lets Sammy switch up to the top
   * rung: its bitrate (nominal or lookahead, the larger) / upSwitchSafety, and with a
   * reserve (stability.ts) S_T / (beta (B_0 + D_T - K)), K = min(B_0 + g D_T, R).
   */
  upSwitchKbps: number;
  /** max(eq21, eq21Lookahead, upSwitch) * floorHeadroom. */
  floorKbps: number;
  /** The pace under the link (`linkPaceFraction` x the link's rate) when it applied; null: none. */
  linkCapKbps: number | null;
  /** Which bound set the pace. */
  bound: 'buffer' | 'floor' | 'link';
}

export function paceFor(ladder: Ladder, cfg: SammyConfig, input: PaceInput): Pace {
  const topKbps = ladder.bitratesKbps[input.maxRung]!;
  const bufferS = Math.max(0, input.bufferS);
  const la = lookahead(ladder, input.maxRung, input.segmentIndex, cfg.lookaheadSegments);
  const eq21Kbps = eq21FloorKbps(topKbps, cfg.beta, bufferS, la.durationS);
  const eq21LookaheadKbps = la.sizeKbit / (cfg.beta * (bufferS + la.durationS));
  // Stability (stability.ts): an up-switch to the top needs x >= its bitrate / upSwitchSafety,
  // and an x at which its lookahead keeps the reserve K.
  const keptS = keptBufferS(bufferS, la.durationS, bufferReserve(cfg));
  const reserveKbps = la.sizeKbit / (cfg.beta * (bufferS + la.durationS - keptS));
  const upSwitchKbps = Math.max(Math.max(topKbps, la.sizeKbit / la.durationS) / cfg.upSwitchSafety, reserveKbps);
  const floorKbps = Math.max(eq21Kbps, eq21LookaheadKbps, upSwitchKbps) * cfg.floorHeadroom;
  const fraction = bufferFraction(bufferS, fullBufferS(cfg.maxBufferS, ladder.segmentDurationS));
  const bufferBasedKbps = bufferBasedPaceKbps(topKbps, fraction, cfg);
  // A pace already under what the link carried leaves its queue to drain: no cap needed.
  const linkKbps = input.linkKbps ?? null;
  const linkCapKbps = linkKbps !== null && bufferBasedKbps >= linkKbps ? cfg.linkPaceFraction * linkKbps : null;
  const cappedKbps = linkCapKbps === null ? bufferBasedKbps : Math.min(bufferBasedKbps, linkCapKbps);
  const bound = floorKbps > cappedKbps ? 'floor' : cappedKbps < bufferBasedKbps ? 'link' : 'buffer';
  const paceKbps = Math.max(cappedKbps, floorKbps);
  return {
    paceKbps,
    rtpKbps: roundRtpKbps(paceKbps),
    topKbps,
    bufferBasedKbps,
    eq21Kbps,
    eq21LookaheadKbps,
    upSwitchKbps,
    floorKbps,
    linkCapKbps,
    bound,
  };
}
