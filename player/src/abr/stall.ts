/**
 * The stalled-download rule: give up a chunk in flight that would arrive too late, and
 * fetch the same segment at a rung that arrives in time.
 *
 * HYB (hyb.ts) chooses a rung before a request, from an estimate of the link. When the
 * link then falls (a cellular fade, an outage), the chunk already requested can take far
 * longer than the buffer lasts: a top-rung chunk of 262 KB on a link that now carries
 * 50 kbit/s takes 42 s, and nothing else can be fetched meanwhile. The player knows
 * more while the chunk downloads than at its request: the bytes so far and the time
 * they took. The rule, at each progress report in the playing phase:
 *
 *   rate      = bytes so far / time since the request (0 if none has come)
 *   finishS   = bytes still to come / rate
 *   stalled   = buffer now - finishS < stallReserveS
 *
 * A stalled chunk is given up when a lower rung, fetched anew at the same rate, would
 * arrive sooner than the rest of this one: the highest rung that leaves the reserve, or
 * else the lowest rung. With no byte at all since the request, the lowest rung is taken:
 * a small request on a fresh start is the best chance of getting anything through.
 *
 * Pacing does not set the rule off: a paced chunk comes at its pace, which is at least
 * the top bitrate / beta (the Eq. 2.1 floor), so its rest takes well under a segment's
 * duration and the rule fires only on a buffer already near the reserve, where a
 * smaller chunk is the right call anyway.
 *
 * The rule waits `stallMinElapsedS` after the request before judging (the first bytes
 * of a request come one round trip late, so an early rate is too low), and acts once
 * per segment (session.ts): the refetch runs to its end.
 */
import type { SammyConfig } from './config.js';
import { bytesToKbit, type Ladder } from './ladder.js';

export type StallRule = Pick<SammyConfig, 'stallAbandon' | 'stallReserveS' | 'stallMinElapsedS'>;

/** A video chunk in flight, as the player sees it at a progress report. */
export interface DownloadProgress {
  /** 0-based index of the segment downloading. */
  segmentIndex: number;
  /** The rung it was requested at. */
  rung: number;
  /** Bytes of the response body received so far. */
  loadedBytes: number;
  /** Since the request was sent. */
  elapsedS: number;
  /** Media buffered ahead of the playhead now (it drains while the chunk downloads). */
  bufferS: number;
}

export interface StallVerdict {
  /** The rung to fetch the segment at instead. */
  rung: number;
  /** The chunk's rate so far (kbps; 0: no byte yet). */
  rateKbps: number;
  /** When the rest of the chunk would arrive at that rate (s from now; Infinity at 0). */
  finishS: number;
  /** One line a person can read. */
  reason: string;
}

function secondsAt(kbit: number, rateKbps: number): number {
  return rateKbps > 0 ? kbit / rateKbps : Infinity;
}

/** The rung to give the download up for, or null to let it run. */
export function stallVerdict(ladder: Ladder, rule: StallRule, p: DownloadProgress): StallVerdict | null {
  if (rule.stallAbandon === 0 || p.rung <= 0 || !(p.elapsedS >= rule.stallMinElapsedS) || p.elapsedS <= 0) return null;
  const sizeBytes = ladder.segmentSizesBytes[p.rung]?.[p.segmentIndex];
  if (sizeBytes === undefined || !(p.loadedBytes < sizeBytes)) return null;
  const loadedBytes = Math.max(0, p.loadedBytes);
  const rateKbps = bytesToKbit(loadedBytes) / p.elapsedS;
  const finishS = secondsAt(bytesToKbit(sizeBytes - loadedBytes), rateKbps);
  const bufferS = Math.max(0, p.bufferS);
  if (bufferS - finishS >= rule.stallReserveS) return null;
  let rung = 0;
  for (let k = p.rung - 1; k > 0; k--) {
    const size = ladder.segmentSizesBytes[k]?.[p.segmentIndex];
    if (size !== undefined && bufferS - secondsAt(bytesToKbit(size), rateKbps) >= rule.stallReserveS) {
      rung = k;
      break;
    }
  }
  const refetchS = secondsAt(bytesToKbit(ladder.segmentSizesBytes[rung]?.[p.segmentIndex] ?? Infinity), rateKbps);
  // Starting over must pay: at a rate above 0 the new chunk must arrive before the rest of this one.
  if (rateKbps > 0 && !(refetchS < finishS)) return null;
  const rateText = rateKbps > 0 ? `${Math.round(rateKbps)} kbps, the rest in ${finishS.toFixed(1)} s` : 'no byte yet';
  return {
    rung,
    rateKbps,
    finishS,
    reason: `stalled: rung ${p.rung} chunk ${p.segmentIndex} at ${rateText} with ${bufferS.toFixed(1)} s buffered (reserve ${rule.stallReserveS} s): refetch at rung ${rung}`,
  };
}
