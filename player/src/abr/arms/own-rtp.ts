/**
 * The stock players' own CMCD rtp, one arm per player: the player's own ABR, and the
 * `rtp` the player itself computes (the adapter leaves the key as the player wrote it).
 * Interop checks of the server against players as shipped, and the case the server's
 * spiral guard exists for:
 * - `dashjs-rtp`: dash.js 5, `rtpSafetyFactor x bitrate x segment duration / buffer`.
 * - `shaka-rtp`: Shaka Player 5, the same formula over the current rendition
 *   (`bandwidth`); once the buffer is full that is about the rendition's own bitrate, so
 *   a server that honours it paces Shaka at its bitrate and Shaka steps down (the
 *   spiral of thesis 2.2.3).
 * - `hlsjs-rtp`: hls.js, `rtpSafetyFactor x` the level's BANDWIDTH rounded to 100 kbps,
 *   whatever the buffer.
 * Browser only: the simulator has no model of these rtp rules.
 */
import type { ArmParam, ArmSpec, PlayerName } from './spec.js';

/** The players' own default rtpSafetyFactor (dash.js, Shaka and hls.js all use 5). */
const PLAYER_RTP_SAFETY_FACTOR = 5;

function ownRtpArm<P extends PlayerName, K extends string>(player: P, description: string, safetyFactorParam: K) {
  return {
    description,
    bitrate: 'player',
    ownRtp: { safetyFactorParam },
    runs: ['browser', 'headless'],
    players: [player],
    sim: null,
    params: { [safetyFactorParam]: { default: PLAYER_RTP_SAFETY_FACTOR, min: 0.01, max: 1000 } } as { readonly [k in K]: ArmParam },
    playerRtp: () => 'keep',
  } as const satisfies ArmSpec;
}

export const DASHJS_RTP_ARM = ownRtpArm('dashjs', "dash.js 5 default ABR with dash.js's own CMCD rtp", 'dashjsRtpSafetyFactor');
export const SHAKA_RTP_ARM = ownRtpArm('shaka', "Shaka Player's own ABR with Shaka's own CMCD rtp", 'shakaRtpSafetyFactor');
export const HLSJS_RTP_ARM = ownRtpArm('hlsjs', "hls.js's own ABR with hls.js's own CMCD rtp", 'hlsjsRtpSafetyFactor');
