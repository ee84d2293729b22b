/**
 * `spiral`: the thesis 2.2.3 example of an ABR that spirals down under pacing. Pick the
 * highest bitrate strictly below c x the minimum throughput of the last few chunks
 * (c = 0.5; dash.js's rule at a low buffer is of this kind) and pace each chunk at
 * 1.5x its bitrate: the measured throughput is then about 1.5x the bitrate, so the
 * next pick is below 0.75x the bitrate, one rung down per window, to the lowest.
 * Simulator only: it exists to show the spiral and that Sammy avoids it.
 */
import type { ArmSpec } from './spec.js';

export interface SpiralRule {
  /** c: the pick is the highest bitrate strictly below c x the minimum recent throughput. */
  throughputFraction: number;
  /** How many recent chunks the minimum is taken over. */
  window: number;
  /** The pace rate as a multiple of the chosen bitrate. */
  paceBitrateMultiplier: number;
}

export const SPIRAL_RULE: Readonly<SpiralRule> = Object.freeze({ throughputFraction: 0.5, paceBitrateMultiplier: 1.5, window: 3 });

/**
 * The rung the rule picks after these chunk throughputs (oldest first; only the last
 * `window` count). "We would start with video bitrate B": the top rung without one.
 */
export function spiralRung(bitratesKbps: readonly number[], recentKbps: readonly number[], rule: Pick<SpiralRule, 'throughputFraction' | 'window'> = SPIRAL_RULE): number {
  if (recentKbps.length === 0) return bitratesKbps.length - 1;
  const limitKbps = rule.throughputFraction * Math.min(...recentKbps.slice(-rule.window));
  let rung = 0;
  for (let i = 0; i < bitratesKbps.length; i++) if (bitratesKbps[i]! < limitKbps) rung = i;
  return rung;
}

export const SPIRAL_ARM = {
  description: 'thesis 2.2.3: highest bitrate < c x min recent throughput, paced at a multiple of the bitrate (simulator only)',
  bitrate: 'thesis-2.2.3',
  ownRtp: null,
  runs: ['simulator'],
  players: [],
  sim: { model: 'spiral' },
  params: {},
  playerRtp: null,
} as const satisfies ArmSpec;
