/**
 * The thesis section 2.2.3 example of an ABR that spirals down under pacing: pick the
 * highest bitrate below c times the minimum throughput of the last few chunks
 * (c = 0.5; dash.js's rule at a low buffer is of this kind), and pace each chunk at
 * 1.5x its bitrate. The measured throughput is then about 1.5x the bitrate, so the
 * next pick is below 0.75x the bitrate: one rung down per window, to the lowest.
 * Simulator only: it exists to show the spiral and that Sammy avoids it.
 */
import type { SegmentsSidecar } from '@sammy/encoder/sidecar';
import { DEFAULT_SAMMY_CONFIG, roundRtpKbps } from '../core.js';
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
  throughputFraction: 0.5,
  paceBitrateMultiplier: 1.5,
  window: 3,
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
    // "We would start with video bitrate B": the top rung, until there is a measurement.
    let rung = this.bitratesKbps.length - 1;
    if (this.recentKbps.length > 0) {
      const limitKbps = this.s.throughputFraction * Math.min(...this.recentKbps);
      rung = 0;
      for (let i = 0; i < this.bitratesKbps.length; i++) if (this.bitratesKbps[i]! < limitKbps) rung = i;
    }
    const rtpKbps = roundRtpKbps(this.s.paceBitrateMultiplier * this.bitratesKbps[rung]!, DEFAULT_SAMMY_CONFIG.rtpRoundingKbps);
    return { rung, rtpKbps };
  }

  onChunk(chunk: ChunkDone): void {
    this.recentKbps.push((chunk.sizeBytes * 8) / 1000 / (chunk.endS - chunk.requestS));
    if (this.recentKbps.length > this.s.window) this.recentKbps.shift();
  }
}
