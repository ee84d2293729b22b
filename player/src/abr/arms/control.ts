/** `control`: the player's own default ABR, unpaced (no rtp). The baseline of every comparison. */
import type { ArmSpec } from './spec.js';

export const CONTROL_ARM = {
  description: "the player's own default ABR, no rtp",
  bitrate: 'player',
  ownRtp: null,
  runs: ['browser', 'headless', 'simulator'],
  players: ['dashjs', 'shaka', 'hlsjs'],
  sim: { model: 'dashjs-default' },
  params: {},
  playerRtp: () => ({ rtpKbps: null, floorKbps: null, declaredFloorKbps: null }),
} as const satisfies ArmSpec;
