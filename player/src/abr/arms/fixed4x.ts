/**
 * `fixed4x`: the player's own default ABR, every segment request paced at a fixed multiple
 * of the top bitrate (thesis 2.5.4's baseline: 4x).
 */
import { roundRtpKbps } from '../pace.js';
import type { ArmSpec } from './spec.js';

/** Thesis 2.5.4: the baseline paces every chunk at 4x the top bitrate. */
export const FIXED_RTP_TOP_MULTIPLIER = 4;

/** rtp = `multiplier` x the top bitrate, rounded up to the CTA-5004 step. */
export function fixedRtpKbps(topKbps: number, multiplier: number): number {
  return roundRtpKbps(multiplier * topKbps);
}

export const FIXED4X_ARM = {
  description: `the player's own default ABR, rtp = ${FIXED_RTP_TOP_MULTIPLIER}x the top bitrate on every segment request (thesis 2.5.4)`,
  bitrate: 'player',
  ownRtp: null,
  runs: ['browser', 'headless', 'simulator'],
  players: ['dashjs', 'shaka', 'hlsjs'],
  sim: { model: 'dashjs-default', paceTopMultiplier: FIXED_RTP_TOP_MULTIPLIER },
  params: { fixedRtpMultiplier: { default: FIXED_RTP_TOP_MULTIPLIER, min: 0.01, max: 1000 } },
  playerRtp: ({ topKbps, param }) => ({
    rtpKbps: fixedRtpKbps(topKbps(), param('fixedRtpMultiplier')),
    floorKbps: null,
    declaredFloorKbps: null,
  }),
} as const satisfies ArmSpec;
