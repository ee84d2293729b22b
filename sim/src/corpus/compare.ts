/**
 * Sammy against control (and fixed4x) over a corpus: one session per arm and trace,
 * the QoE and smoothness figures side by side, and issue 11's per-trace bar for Sammy:
 * at most 3 more switches than control, at most 1 s more rebuffering, mean SSIM at most
 * 0.003 below control's.
 */
import type { SegmentsSidecar } from '@sammy/encoder/sidecar';
import { armFactory, type ArmOptions } from '../arms/index.js';
import { simulateSession, type SimSessionQoE } from '../session.js';
import type { Trace } from '../trace.js';
import { mean } from '../stats.js';

export const CORPUS_ARMS = ['sammy', 'control', 'fixed4x'] as const;
export type CorpusArm = (typeof CORPUS_ARMS)[number];

/** The per-trace bar Sammy must clear against control. */
export const BAR = Object.freeze({ extraSwitches: 3, extraRebufferS: 1, ssimDrop: 0.003 });

export interface ArmFigures {
  switchesPer10Min: number;
  rebufferS: number;
  avgBitrateKbps: number;
  avgQuality: number | null;
  playDelayS: number | null;
  /** Playing-phase chunk throughput (total bits / total download time). */
  chunkThroughputKbps: number | null;
  /** Lowest rtp sent in the playing phase; null when none was sent. */
  minPlayingRtpKbps: number | null;
  /** Seconds the video's downloads filled the link (session.ts `linkFilledS`). */
  linkFilledS: number;
  /** A neighbour's mean delay beside the video, in full queues (session.ts `neighbourDelayQueues`). */
  neighbourDelayQueues: number;
}

export interface TraceComparison {
  trace: string;
  arms: Record<CorpusArm, ArmFigures>;
  /** Which parts of the bar Sammy misses on this trace (empty: it clears it). */
  misses: string[];
}

export interface CorpusResult {
  traces: TraceComparison[];
  /** Mean of every figure over the traces, per arm. */
  mean: Record<CorpusArm, ArmFigures>;
  /** Traces on which Sammy misses the bar. */
  failing: string[];
  /** Every parameter the arms ran with (from the first trace's sessions). */
  config: Record<CorpusArm, Record<string, unknown>>;
}

export function figures(q: SimSessionQoE): ArmFigures {
  return {
    switchesPer10Min: (q.switchCount * 600) / q.sim.mediaS,
    rebufferS: q.rebufferS,
    avgBitrateKbps: q.avgBitrateKbps,
    avgQuality: q.avgQuality,
    playDelayS: q.playDelayS,
    chunkThroughputKbps: q.chunkThroughputKbps,
    minPlayingRtpKbps: q.sim.playingRtpKbps?.min ?? null,
    linkFilledS: q.sim.linkFilledS,
    neighbourDelayQueues: q.sim.neighbourDelayQueues,
  };
}

type BarFigures = Pick<ArmFigures, 'switchesPer10Min' | 'rebufferS' | 'avgQuality'>;

/** What Sammy misses of the bar against control on one trace. */
export function barMisses(sammy: BarFigures, control: BarFigures): string[] {
  const misses: string[] = [];
  if (sammy.switchesPer10Min > control.switchesPer10Min + BAR.extraSwitches) misses.push('switches');
  if (sammy.rebufferS > control.rebufferS + BAR.extraRebufferS) misses.push('rebuffer');
  if (sammy.avgQuality !== null && control.avgQuality !== null && sammy.avgQuality < control.avgQuality - BAR.ssimDrop) misses.push('SSIM');
  return misses;
}

function meanOf(values: (number | null)[]): number | null {
  return mean(values.filter((x): x is number => x !== null));
}

function meanFigures(list: ArmFigures[]): ArmFigures {
  const pick = <K extends keyof ArmFigures>(k: K): number | null => meanOf(list.map((f) => f[k]));
  return {
    switchesPer10Min: pick('switchesPer10Min') ?? 0,
    rebufferS: pick('rebufferS') ?? 0,
    avgBitrateKbps: pick('avgBitrateKbps') ?? 0,
    avgQuality: pick('avgQuality'),
    playDelayS: pick('playDelayS'),
    chunkThroughputKbps: pick('chunkThroughputKbps'),
    minPlayingRtpKbps: pick('minPlayingRtpKbps'),
    linkFilledS: pick('linkFilledS') ?? 0,
    neighbourDelayQueues: pick('neighbourDelayQueues') ?? 0,
  };
}

export interface CompareOptions {
  traces: readonly Trace[];
  sidecar: SegmentsSidecar;
  durationS: number;
  arms?: ArmOptions;
}

export function compareOnCorpus(options: CompareOptions): CorpusResult {
  const config = {} as CorpusResult['config'];
  const traces = options.traces.map((trace): TraceComparison => {
    const arms = {} as Record<CorpusArm, ArmFigures>;
    for (const arm of CORPUS_ARMS) {
      const q = simulateSession({ trace, sidecar: options.sidecar, arm: armFactory(arm, options.arms), durationS: options.durationS });
      arms[arm] = figures(q);
      config[arm] ??= q.config;
    }
    return { trace: trace.name, arms, misses: barMisses(arms.sammy, arms.control) };
  });
  const mean = Object.fromEntries(CORPUS_ARMS.map((arm) => [arm, meanFigures(traces.map((t) => t.arms[arm]))])) as Record<CorpusArm, ArmFigures>;
  return { traces, mean, failing: traces.filter((t) => t.misses.length > 0).map((t) => t.trace), config };
}
