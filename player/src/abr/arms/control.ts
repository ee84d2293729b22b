/** `control`: dash.js 5's default ABR, unpaced (no rtp). The baseline of every comparison. */
import type { ArmSpec } from './spec.js';

export const CONTROL_ARM = {
  description: 'dash.js 5 default ABR, no rtp',
  bitrate: 'dashjs',
  dashjsRtp: false,
  runs: ['browser', 'headless', 'simulator'],
  sim: { model: 'dashjs-default' },
  params: {},
  playerRtp: () => ({ rtpKbps: null, floorKbps: null }),
} as const satisfies ArmSpec;
