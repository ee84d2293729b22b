/**
 * The `spiral` arm in the simulator: the thesis 2.2.3 example rule (its registry entry
 * and the rule itself, `spiralRung`, are in `@sammy/player/abr`, src/abr/arms/spiral.ts,
 * which the player's own spiral test uses too), with the player's buffer target.
 */
import type { SegmentsSidecar } from '@sammy/encoder/sidecar';
import { DEFAULT_SAMMY_CONFIG, roundRtpKbps, SPIRAL_RULE, spiralRung } from '../core.js';
import type { ArmPolicy, ChunkDone, Decision, DecisionContext } from './types.js';

export interface SpiralSettings {
  /** c: the pick is the highest bitrate strictly below c * min recent throughput. */
  throughputFraction: number;
  /** The pace rate as a multiple of the chosen bitrate. */
  paceBitrateMultiplier: number;
  /** How many recent chunks the minimum is taken over. */
  window: number;
  /** The player's buffer target. */
  maxBufferS: number;
}

export const SPIRAL_DEFAULTS: Readonly<SpiralSettings> = Object.freeze({
  ...SPIRAL_RULE,
  maxBufferS: DEFAULT_SAMMY_CONFIG.maxBufferS,
});

export class SpiralArm implements ArmPolicy {
  readonly arm = 'spiral' as const;
  readonly config: Record<string, unknown>;
  private readonly s: SpiralSettings;
  private readonly bitratesKbps: number[];
  private readonly recentKbps: number[] = [];

  constructor(sidecar: SegmentsSidecar, settings: Partial<SpiralSettings> = {}) {
    this.s = { ...SPIRAL_DEFAULTS, ...settings };
    this.bitratesKbps = sidecar.representations.map((r) => r.bitrateKbps);
    this.config = { rule: 'thesis 2.2.3: highest bitrate < c * min recent throughput, paced at a multiple of the bitrate', ...this.s };
  }

  bufferTargetS(): number {
    return this.s.maxBufferS;
  }

  decide(_ctx: DecisionContext): Decision {
    const rung = spiralRung(this.bitratesKbps, this.recentKbps, this.s);
    const rtpKbps = roundRtpKbps(this.s.paceBitrateMultiplier * this.bitratesKbps[rung]!);
    return { rung, rtpKbps };
  }

  onChunk(chunk: ChunkDone): void {
    this.recentKbps.push((chunk.sizeBytes * 8) / 1000 / (chunk.endS - chunk.requestS));
    if (this.recentKbps.length > this.s.window) this.recentKbps.shift();
  }
}
