/**
 * Builds the arm a session runs, from the CLI's or the sweep's options. Which model an
 * arm uses is its registry entry's `sim` (`@sammy/player/abr`, `src/abr/arms/`).
 */
import type { SegmentsSidecar } from '@sammy/encoder/sidecar';
import { ARM_REGISTRY, dashjsBufferTimesS, DEFAULT_SAMMY_CONFIG, roundRtpKbps, type KeyValueStore, type SammyConfig, type SimModel } from '../core.js';
import { DashJsArm, type DashJsSettings } from './dashjs.js';
import { SammyArm } from './sammy.js';
import { SpiralArm, type SpiralSettings } from './spiral.js';
import type { ArmPolicy, Decision, SimArm } from './types.js';

export { waitBeforeRequestS, type ArmPolicy, type SimArm } from './types.js';

export interface ArmOptions {
  /**
   * The player's buffer target, the same for every arm, set as the browser player
   * does (`dashjsBufferTimesS` in `@sammy/player/abr`): Sammy's maxBufferS, and
   * dash.js's bufferTimeDefault, bufferTimeAtTopQuality and bufferTimeAtTopQualityLongForm.
   * Default: DEFAULT_SAMMY_CONFIG.maxBufferS (30 s, dash.js's own target at the top rung).
   */
  maxBufferS?: number;
  /** Overrides of DEFAULT_SAMMY_CONFIG for the `sammy` arm. */
  sammy?: Partial<SammyConfig>;
  /** Earlier sessions' initial-phase throughputs for the `sammy` arm's history. */
  historyKbps?: readonly number[];
  /** The `sammy` arm's device storage, shared by successive sessions (its history lives there); default a fresh one. */
  historyStore?: KeyValueStore;
  /** Overrides of the dash.js settings for `control` and `fixed4x`. */
  dashjs?: Partial<DashJsSettings>;
  spiral?: Partial<SpiralSettings>;
}

export type ArmFactory = (sidecar: SegmentsSidecar, contentDurationS: number) => ArmPolicy;

/** How the simulator builds each model the registry names (`ArmSpec.sim.model`). */
const MODELS: Record<SimModel['model'], (arm: SimArm, model: SimModel, options: ArmOptions, maxBufferS: number) => ArmFactory> = {
  'sammy-core': (_arm, _model, options, maxBufferS) => (sidecar) =>
    new SammyArm(sidecar, { config: { ...options.sammy, maxBufferS }, historyKbps: options.historyKbps ?? [], ...(options.historyStore ? { historyStore: options.historyStore } : {}) }),
  'dashjs-default': (arm, model, options, maxBufferS) => {
    const times = dashjsBufferTimesS(maxBufferS);
    const settings: Partial<DashJsSettings> = {
      bufferTimeDefaultS: times.bufferTimeDefault,
      bufferTimeAtTopQualityS: times.bufferTimeAtTopQuality,
      bufferTimeAtTopQualityLongFormS: times.bufferTimeAtTopQualityLongForm,
      ...options.dashjs,
    };
    const pace = model.paceTopMultiplier === undefined ? {} : { paceTopMultiplier: model.paceTopMultiplier };
    return (sidecar, contentDurationS) => new DashJsArm({ sidecar, contentDurationS, settings, arm, ...pace });
  },
  spiral: (_arm, _model, options, maxBufferS) => (sidecar) => new SpiralArm(sidecar, { maxBufferS, ...options.spiral }),
};

export function armFactory(arm: SimArm, options: ArmOptions = {}): ArmFactory {
  const model = ARM_REGISTRY[arm].sim;
  const maxBufferS = options.maxBufferS ?? options.sammy?.maxBufferS ?? DEFAULT_SAMMY_CONFIG.maxBufferS;
  return MODELS[model.model](arm, model, options, maxBufferS);
}

/**
 * The arm with the rtp of every request replaced by `rtpOf` of the arm's decision and
 * the chosen rung's bitrate; `note` goes into the session's config as `rtpOverride`.
 */
function withRtp(factory: ArmFactory, note: string, rtpOf: (decision: Decision, bitrateKbps: number) => number | null): ArmFactory {
  return (sidecar, contentDurationS) => {
    const inner = factory(sidecar, contentDurationS);
    const bitratesKbps = sidecar.representations.map((r) => r.bitrateKbps);
    return {
      arm: inner.arm,
      config: { ...inner.config, rtpOverride: note },
      bufferTargetS: (rung, bufferS) => inner.bufferTargetS(rung, bufferS),
      decide: (ctx) => {
        const d = inner.decide(ctx);
        return { ...d, rtpKbps: rtpOf(d, bitratesKbps[d.rung]!) };
      },
      onChunk: (chunk) => inner.onChunk(chunk),
      onPlaybackStart: (nowS) => inner.onPlaybackStart?.(nowS),
      onStall: (nowS) => inner.onStall?.(nowS),
      onProgress: (progress) => inner.onProgress?.(progress) ?? null,
    };
  };
}

/**
 * The arm with its rtp replaced by a multiple of the chosen rung's bitrate on every
 * request: the pacing of the thesis 2.2.3 example, to show which rules spiral under it.
 */
export function pacedAtBitrateMultiple(factory: ArmFactory, multiple: number): ArmFactory {
  return withRtp(factory, `${multiple}x the chosen bitrate`, (_d, bitrateKbps) => roundRtpKbps(multiple * bitrateKbps));
}

/**
 * The arm behind a server whose spiral guard raises every paced request to `floorKbps`:
 * what the lab's server did to Sammy's requests before they declared a floor of their
 * own (server/src/spiral-guard.ts; 2.5 x the top bitrate). Today's guard keeps the
 * declared floor, which the sammy arm sends at or under its rtp, so it changes nothing.
 */
export function behindGuardFloor(factory: ArmFactory, floorKbps: number): ArmFactory {
  return withRtp(factory, `raised to at least ${floorKbps} kbps by the server's guard`, (d) => (d.rtpKbps === null ? null : Math.max(d.rtpKbps, floorKbps)));
}
