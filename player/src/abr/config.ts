/**
 * Every parameter of the Sammy core, in one typed object, overridden field by field. Results record
 * the resolved object, so a run can always be told apart from another by its config.
 * Units: rates in kbps, durations in seconds, counts as plain integers.
 */

export interface SammyConfig {
  /** Pace rate as a multiple of the top bitrate at an empty buffer (thesis 2.5: 11.0). */
  paceEmptyMultiplier: number;
  /** Pace rate as a multiple of the top bitrate at a full buffer (thesis 2.5: 2.9). */
  paceFullMultiplier: number;
  /**
   * HYB's discount on the throughput estimate, in (0, 1] (thesis 2.4.2, Akhtar et al.
   * 2018). Also sets the Eq. 2.1 floor: at an empty buffer the pace must be at least
   * top / beta.
   */
  beta: number;
  /** HYB lookahead T, in segments: D_T is their total duration. */
  lookaheadSegments: number;
  /**
   * The stability rule's reserve R as a fraction of `maxBufferS`, in [0, 0.99]: an
   * up-switch must keep its predicted buffer B_T above min(B_0 + g D_T, R) (g:
   * `reserveFillRate`), so a session climbs only while its buffer grows towards R and
   * spends on quality only the buffer above R (stability.ts). 0: HYB's own B_T > 0.
   * The pace's floor includes what such an up-switch to the top needs (pace.ts).
   */
  bufferReserveFraction: number;
  /**
   * g: while the buffer is under the reserve, an up-switch's plan must add g seconds of
   * buffer per second of lookahead (at the discounted estimate), in [0, 0.95]: the new
   * rung's bitrate is then at most beta x (1 - g). No effect without a reserve.
   */
  reserveFillRate: number;
  /**
   * The cautious estimate under the reserve (session.ts): while the buffer is under R,
   * every choice (holds and down-switches too) takes at most the lowest link-bound
   * throughput among the last this many chunks, instead of the windowed harmonic mean
   * alone. A buffer under the reserve cannot ride out a fade, so it plans on the worst
   * the link has recently done. 0: off.
   */
  reserveSampleWindow: number;
  /**
   * A paced chunk counts as link-bound (its throughput says what the link carried, not
   * what the pace let through) when its body took longer than 1 / this fraction times
   * what its pace alone allows over the chunk's round trip (throughput.ts
   * `paceLimitedTransferS`: TCP's start from its initial window, then the pace), so
   * that a long round trip is not taken for a slow link. Unpaced chunks always count.
   */
  linkBoundPaceFraction: number;
  /**
   * The pace under the link (pace.ts): while the buffer holds at least
   * `linkPaceMinBufferS`, and the buffer-based pace is at or above the lowest rate the
   * link carried (the body's, round trip left out) among the last `linkPaceWindow`
   * chunks that were paced and still link-bound, the pace is at most this fraction of
   * that rate, and never below the floor. A pace above what the link carries keeps the
   * bottleneck's queue full and paces nothing; under it, the queue drains and the
   * neighbours' packets pass. With less buffer, with no such chunk in the window (a link
   * faster than the pace), or with a pace already under the link, the buffer-based pace
   * stands. 0: off.
   */
  linkPaceFraction: number;
  /** How many recent chunks the pace under the link looks back over. */
  linkPaceWindow: number;
  /**
   * The pace under the link applies from this much buffer, in seconds: a pace under the
   * link fills the buffer more slowly, so it waits for a buffer that rides out the
   * outages a cellular link has.
   */
  linkPaceMinBufferS: number;
  /**
   * The buffer target: the player requests only while buffer + one segment is below it,
   * so the fullest buffer a request sees is this minus one segment; the pace rate's
   * buffer fraction is measured against that (pace.ts `fullBufferS`). 30 s is dash.js's own target at
   * the top rung; the lab sets production-like targets (e.g. 240 s) through `&config=`.
   */
  maxBufferS: number;
  /** How many recent chunk throughputs the in-session estimate averages (harmonic mean). */
  throughputWindow: number;
  /** How many past sessions' initial-phase throughputs the device history keeps. */
  historySize: number;
  /**
   * The no-history rule: with neither history nor an in-session sample, the first chunk
   * is fetched at this rung (0 = lowest: with nothing measured, start conservatively).
   */
  noHistoryRung: number;
  /**
   * The floor is Eq. 2.1 times this factor. Eq. 2.1 is where HYB's B_T > 0 test is
   * exactly tied; a paced chunk measures slightly below its pace (request latency), so a
   * floor without headroom could let HYB step off the top rung for a chunk.
   */
  floorHeadroom: number;
  /**
   * Stability (stability.ts): an up-switch needs the new rung's bitrate (the larger of
   * its nominal bitrate and the lookahead's S_T / D_T) to be at most this multiple of
   * the estimate x, so that the link sustains
   * it and the next lookahead does not undo the switch (Theorem 1). Holds and
   * down-switches are HYB's.
   */
  upSwitchSafety: number;
  /**
   * The throughput estimate never exceeds this multiple of the latest sample. A
   * harmonic mean over a window keeps a 10x fall (a cellular fade) at a fraction of its
   * depth for several chunks, and HYB's buffer term then spends the buffer on a rung the
   * link no longer carries; capping by the latest sample makes a fall count at once,
   * while a rise still waits for the window (and the up-switch rule).
   */
  lastSampleCapMultiplier: number;
  /**
   * The stalled-download rule (stall.ts): 1 gives up a chunk in flight that would arrive
   * with less than `stallReserveS` buffered and fetches the segment at a rung that
   * arrives in time; 0 lets every chunk run to its end.
   */
  stallAbandon: number;
  /** The buffer a chunk in flight must leave when it arrives, or the stalled-download rule gives it up. */
  stallReserveS: number;
  /** The stalled-download rule judges a chunk only this long after its request (an earlier rate is mostly the round trip). */
  stallMinElapsedS: number;
}

export const DEFAULT_SAMMY_CONFIG: Readonly<SammyConfig> = Object.freeze({
  paceEmptyMultiplier: 11.0,
  paceFullMultiplier: 2.9,
  beta: 0.8,
  lookaheadSegments: 7,
  bufferReserveFraction: 0.55,
  reserveFillRate: 0.1,
  reserveSampleWindow: 16,
  linkBoundPaceFraction: 0.5,
  linkPaceFraction: 0.6,
  linkPaceWindow: 64,
  linkPaceMinBufferS: 40,
  maxBufferS: 30,
  throughputWindow: 5,
  historySize: 10,
  noHistoryRung: 0,
  floorHeadroom: 1.1,
  upSwitchSafety: 1,
  lastSampleCapMultiplier: 1.5,
  stallAbandon: 1,
  stallReserveS: 2,
  stallMinElapsedS: 2,
});

export class SammyConfigError extends Error {
  readonly code = 'SAMMY_CONFIG_INVALID';

  constructor(message: string) {
    super(message);
    this.name = 'SammyConfigError';
  }
}

interface Range {
  min: number;
  max: number;
  /** The minimum itself is excluded. */
  openMin?: boolean;
  integer?: boolean;
}

const RANGES: Record<keyof SammyConfig, Range> = {
  paceEmptyMultiplier: { min: 0, max: 1000 },
  paceFullMultiplier: { min: 0, max: 1000 },
  beta: { min: 0, max: 1, openMin: true },
  lookaheadSegments: { min: 1, max: 1000, integer: true },
  bufferReserveFraction: { min: 0, max: 0.99 },
  reserveFillRate: { min: 0, max: 0.95 },
  reserveSampleWindow: { min: 0, max: 1000, integer: true },
  linkBoundPaceFraction: { min: 0, max: 1 },
  linkPaceFraction: { min: 0, max: 100 },
  linkPaceWindow: { min: 1, max: 1000, integer: true },
  linkPaceMinBufferS: { min: 0, max: 86_400 },
  maxBufferS: { min: 0, max: 86_400, openMin: true },
  throughputWindow: { min: 1, max: 1000, integer: true },
  historySize: { min: 1, max: 1000, integer: true },
  noHistoryRung: { min: 0, max: 1000, integer: true },
  floorHeadroom: { min: 1, max: 100 },
  upSwitchSafety: { min: 0, max: 100, openMin: true },
  lastSampleCapMultiplier: { min: 1, max: 1e6 },
  stallAbandon: { min: 0, max: 1, integer: true },
  stallReserveS: { min: 0, max: 86_400 },
  stallMinElapsedS: { min: 0, max: 86_400 },
};

function describe(r: Range): string {
  const kind = r.integer ? 'an integer' : 'a number';
  return `${kind} in ${r.openMin ? '(' : '['}${r.min}, ${r.max}]`;
}

/** Checks one field; throws a {@link SammyConfigError} naming it, the value and the accepted range. */
export function checkSammyField(key: keyof SammyConfig, value: unknown): number {
  const r = RANGES[key];
  const ok =
    typeof value === 'number' &&
    Number.isFinite(value) &&
    (r.openMin ? value > r.min : value >= r.min) &&
    value <= r.max &&
    (!r.integer || Number.isInteger(value));
  if (!ok) throw new SammyConfigError(`invalid ${key}: ${JSON.stringify(value)} (accepted: ${describe(r)})`);
  return value as number;
}

export function isSammyConfigKey(key: string): key is keyof SammyConfig {
  return Object.prototype.hasOwnProperty.call(RANGES, key);
}

/**
 * The defaults overridden field by field. Unknown fields and bad values throw, so a
 * typo in an experiment's config never silently runs the defaults.
 */
export function resolveSammyConfig(overrides: Partial<Record<string, unknown>> = {}): SammyConfig {
  const config: SammyConfig = { ...DEFAULT_SAMMY_CONFIG };
  for (const [key, value] of Object.entries(overrides)) {
    if (value === undefined) continue;
    if (!isSammyConfigKey(key)) {
      throw new SammyConfigError(`unknown Sammy parameter ${JSON.stringify(key)} (known: ${Object.keys(RANGES).join(', ')})`);
    }
    config[key] = checkSammyField(key, value);
  }
  return config;
}

/** The Sammy fields of a larger config object (e.g. the player's), nothing else. */
export function pickSammyConfig(config: SammyConfig): SammyConfig {
  const out = {} as SammyConfig;
  for (const key of Object.keys(RANGES) as (keyof SammyConfig)[]) out[key] = config[key];
  return out;
}

/** The stability rule's reserve as its up-switch test takes it (stability.ts). */
export interface BufferReserve {
  /** R, in seconds. */
  reserveS: number;
  /** g, seconds of buffer per second of lookahead. */
  reserveFillRate: number;
}

/** R is `bufferReserveFraction` of the buffer target. */
export function bufferReserve(config: Pick<SammyConfig, 'bufferReserveFraction' | 'maxBufferS' | 'reserveFillRate'>): BufferReserve {
  return { reserveS: config.bufferReserveFraction * config.maxBufferS, reserveFillRate: config.reserveFillRate };
}
