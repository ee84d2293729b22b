// The spiral guard: a paced response is never paced below a floor derived from what
// the request says about its stream (the floor the player declares, CMCD `sammy-floor`;
// else a multiple of `tb`, else of `br`). Why: a stock player
// (dash.js, Shaka) derives its `rtp` from the bitrate it is playing now and its
// buffer; a server that honours it makes the player measure about that rate, and a
// throughput rule that picks the highest rung below a fraction of what it measured
// then steps down, asks for less, and so on to the lowest rung (thesis 2.2.3; stock
// Shaka went from 1050 to 500 kbit/s in 27 s on loopback). A floor tied to the *top*
// bitrate does not follow the player down, which is how Sammy's own pace avoids the
// spiral (thesis 2.4.2).
import { clampRateKbps, DECLARED_FLOOR_KEY, type StreamBitrates } from './cmcd.js';

/**
 * The default multiple of `tb` (or `br`) below which no response is paced, for a
 * request that declares no floor of its own.
 *
 * Eq. 2.1 says a throughput-based ABR needs an estimate of at least r / beta /
 * (1 + B_0 / D_T) to keep picking bitrate r: at most r / beta, at an empty buffer.
 * The most cautious stock rule we know picks the highest rung below c = 0.5 of its
 * estimate (the thesis 2.2.3 example; dash.js's rule at a low buffer is of this kind;
 * dash.js's throughput rule uses 0.9, Shaka 0.85 to switch up), i.e. beta = 0.5; and a
 * paced chunk measures below its pace (its time includes the request's round trip
 * and the response's start): 0.8 leaves room for that. 1 / (0.5 x 0.8) = 2.5: with only
 * `br`, such a player still measures its own bitrate and holds its rung; with `tb`
 * it can climb to the top.
 *
 * A player that knows its own rule's need says so (`sammy-floor`, cmcd.ts): the Sammy
 * player's pace never falls below its Eq. 2.1 floor, but with a deep buffer or on a
 * link slower than 2.5x the top that floor is well under 2.5 x `tb` (down to about 1.1x),
 * and raising it there would undo the pace. So a declared floor replaces the multiple.
 */
export const DEFAULT_SPIRAL_GUARD_MULTIPLIER = 2.5;

export interface GuardFloor {
  /** The least rate a response may be paced at, kbps (rounded up to an integer). */
  floorKbps: number;
  /** Which request field the floor came from: the player's declared `sammy-floor`, else `tb` (top bitrate), else `br`. */
  basis: typeof DECLARED_FLOOR_KEY | 'tb' | 'br';
}

/** The floor for a request, or null when it says nothing usable about its stream. */
export function guardFloor(stream: StreamBitrates, multiplier: number): GuardFloor | null {
  if (stream.declaredFloorKbps !== null) return { floorKbps: Math.ceil(stream.declaredFloorKbps - 1e-9), basis: DECLARED_FLOOR_KEY };
  const basis = stream.topBitrateKbps !== null ? 'tb' : stream.bitrateKbps !== null ? 'br' : null;
  if (basis === null) return null;
  const kbps = basis === 'tb' ? stream.topBitrateKbps! : stream.bitrateKbps!;
  return { floorKbps: Math.ceil(multiplier * kbps - 1e-9), basis };
}

/** What the guard did to one requested rate. */
export interface GuardDecision {
  /** The rate to apply before clamping: the request, or the floor when that is higher. */
  rateKbps: number;
  floor: GuardFloor | null;
  /** The floor was above the request, so the response is paced at the floor. */
  raised: boolean;
}

export function applyGuard(rtpKbps: number, floor: GuardFloor | null): GuardDecision {
  const raised = floor !== null && floor.floorKbps > rtpKbps;
  return { rateKbps: raised ? floor.floorKbps : rtpKbps, floor, raised };
}

/** The server's settings the rate of a paced response depends on (ServerOptions). */
export interface RateSettings {
  spiralGuard: boolean;
  spiralGuardMultiplier: number;
  minRateKbps: number;
  maxRateKbps: number;
}

/** The rate a request with `rtpKbps` is paced at: raised to the guard's floor (when on), then clamped to [min, max]. */
export function appliedRateKbps(rtpKbps: number, stream: StreamBitrates, settings: RateSettings): { rateKbps: number; guard: GuardDecision | null } {
  const guard = settings.spiralGuard ? applyGuard(rtpKbps, guardFloor(stream, settings.spiralGuardMultiplier)) : null;
  return { rateKbps: clampRateKbps(guard?.rateKbps ?? rtpKbps, settings.minRateKbps, settings.maxRateKbps), guard };
}
