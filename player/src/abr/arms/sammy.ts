/**
 * `sammy`: the Sammy core picks the bitrate (HYB with lookahead) and the pace; no rtp
 * before the first frame, the core's pace after (thesis 2.4).
 */
import { declaredFloorKbps } from '../pace.js';
import type { ArmSpec } from './spec.js';

export const SAMMY_ARM = {
  description: 'the Sammy rule and pace: no rtp before the first frame, the core pace after',
  bitrate: 'sammy',
  ownRtp: null,
  runs: ['browser', 'headless', 'simulator'],
  players: ['dashjs', 'shaka', 'hlsjs'],
  sim: { model: 'sammy-core' },
  params: {},
  playerRtp: ({ session, bufferS, segmentIndex, maxRung }) => {
    if (!session) throw new Error('the sammy arm needs the core session');
    const { rtpKbps, pace } = session.pace({ bufferS, segmentIndex, maxRung });
    return { rtpKbps, floorKbps: pace.floorKbps, declaredFloorKbps: rtpKbps === null ? null : declaredFloorKbps(pace.floorKbps, rtpKbps) };
  },
} as const satisfies ArmSpec;
