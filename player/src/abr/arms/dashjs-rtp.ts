/**
 * `dashjs-rtp`: dash.js 5's default ABR with dash.js's own CMCD rtp
 * (`rtpSafetyFactor x bitrate x duration / buffer`): an interop check of the server
 * against a stock player. Browser only: the simulator has no model of dash.js's rtp.
 */
import type { ArmSpec } from './spec.js';

export const DASHJS_RTP_ARM = {
  description: "dash.js 5 default ABR with dash.js's own CMCD rtp",
  bitrate: 'dashjs',
  dashjsRtp: true,
  runs: ['browser', 'headless'],
  sim: null,
  // dash.js's own default rtpSafetyFactor.
  params: { dashjsRtpSafetyFactor: { default: 5, min: 0.01, max: 1000 } },
  playerRtp: () => 'keep',
} as const satisfies ArmSpec;
