/** Builds the arm a session runs, from the CLI's or the sweep's options. */
import type { SegmentsSidecar } from '@sammy/encoder/sidecar';
import { DEFAULT_SAMMY_CONFIG, roundRtpKbps, type SammyConfig } from '../core.js';
import { DashJsArm, type DashJsSettings } from './dashjs.js';
import { SammyArm } from './sammy.js';
import { SpiralArm, type SpiralSettings } from './spiral.js';
import type { ArmPolicy, SimArm } from './types.js';

export interface ArmOptions {
  /**
   * The player's buffer target, the same for every arm, set as the browser player
   * does (player/src/dashjs/settings.ts): Sammy's maxBufferS, and dash.js's
   * bufferTimeDefault, bufferTimeAtTopQuality and bufferTimeAtTopQualityLongForm.
   * Default: DEFAULT_SAMMY_CONFIG.maxBufferS (30 s, dash.js's own target at the top rung).
   */
  maxBufferS?: number;
  /** Overrides of DEFAULT_SAMMY_CONFIG for the `sammy` arm. */
  sammy?: Partial<SammyConfig>;
  /** Earlier sessions' initial-phase throughputs for the `sammy` arm's history. */
  historyKbps?: readonly number[];
  /** Overrides of the dash.js settings for `control` and `fixed4x`. */
  dashjs?: Partial<DashJsSettings>;
  spiral?: Partial<SpiralSettings>;
}

/** thesis 2.5.4: the baseline paces every chunk at 4x the top bitrate. */
export const FIXED_PACE_TOP_MULTIPLIER = 4;

export type ArmFactory = (sidecar: SegmentsSidecar, contentDurationS: number) => ArmPolicy;

export function armFactory(arm: SimArm, options: ArmOptions = {}): ArmFactory {
  const maxBufferS = options.maxBufferS ?? options.sammy?.maxBufferS ?? DEFAULT_SAMMY_CONFIG.maxBufferS;
  const dashjs: Partial<DashJsSettings> = {
    bufferTimeDefaultS: maxBufferS,
    bufferTimeAtTopQualityS: maxBufferS,
    bufferTimeAtTopQualityLongFormS: maxBufferS,
    ...options.dashjs,
  };
  switch (arm) {
    case 'sammy':
      return (sidecar) => new SammyArm(sidecar, { config: { ...options.sammy, maxBufferS }, historyKbps: options.historyKbps ?? [] });
    case 'control':
      return (sidecar, contentDurationS) => new DashJsArm({ sidecar, contentDurationS, settings: dashjs });
    case 'fixed4x':
      return (sidecar, contentDurationS) => new DashJsArm({ sidecar, contentDurationS, settings: dashjs, paceTopMultiplier: FIXED_PACE_TOP_MULTIPLIER });
    case 'spiral':
      return (sidecar) => new SpiralArm(sidecar, { maxBufferS, ...options.spiral });
  }
}

/**
 * The arm with its rtp replaced by a multiple of the chosen rung's bitrate on every
 * request: the pacing of the thesis 2.2.3 example, to show which rules spiral under it.
 */
export function pacedAtBitrateMultiple(factory: ArmFactory, multiple: number): ArmFactory {
  return (sidecar, contentDurationS) => {
    const inner = factory(sidecar, contentDurationS);
    const bitratesKbps = sidecar.representations.map((r) => r.bitrateKbps);
    return {
      arm: inner.arm,
      config: { ...inner.config, rtpOverride: `${multiple}x the chosen bitrate` },
      bufferTargetS: (rung) => inner.bufferTargetS(rung),
      decide: (ctx) => {
        const d = inner.decide(ctx);
        return { ...d, rtpKbps: roundRtpKbps(multiple * bitratesKbps[d.rung]!, DEFAULT_SAMMY_CONFIG.rtpRoundingKbps) };
      },
      onChunk: (chunk) => inner.onChunk(chunk),
      onPlaybackStart: (nowS) => inner.onPlaybackStart?.(nowS),
      onStall: (nowS) => inner.onStall?.(nowS),
      onProgress: (progress) => inner.onProgress?.(progress) ?? null,
    };
  };
}
