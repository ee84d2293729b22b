/**
 * A session's QoE summary from its chunk records and what was played: the one
 * definition of `SessionQoE`'s aggregate fields, shared by the browser player and the
 * simulator (so both compute bitrate, quality and switches the same way).
 */
import type { Arm, ChunkRecord, SessionQoE } from './records.js';
import { aggregateKbps } from './throughput.js';

export interface SessionSummaryInput {
  arm: Arm;
  config: Record<string, unknown>;
  /** Every downloaded video chunk, in download order. */
  chunks: ChunkRecord[];
  segmentDurationS: number;
  /** `ssim[rung][index]` from segments.json; null when unknown. */
  ssim: readonly (readonly number[])[] | null;
  playDelayS: number | null;
  rebufferCount: number;
  rebufferS: number;
  /** Media time actually played, as [start, end) ranges in seconds (a video element's `played`). */
  playedRanges: readonly (readonly [number, number])[];
  /** Media errors the player recovered from (or not); absent where there is no media element. */
  mediaErrors?: number;
}

export interface PlayedSegment {
  index: number;
  rung: number;
  bitrateKbps: number;
  /** Media seconds of this segment that were played. */
  playedS: number;
  ssim: number | null;
}

/** A chunk that came over the network: the throughput summaries are of the link, and a cached answer measures none. */
const crossedNetwork = (c: ChunkRecord): boolean => c.notFromNetwork === undefined;

/**
 * The segments that were played, in media order, each with the chunk that was in the
 * buffer for it (the last one downloaded for that index).
 */
export function playedSegments(input: Pick<SessionSummaryInput, 'chunks' | 'segmentDurationS' | 'ssim' | 'playedRanges'>): PlayedSegment[] {
  const byIndex = new Map<number, ChunkRecord>();
  for (const c of input.chunks) byIndex.set(c.index, c);
  const d = input.segmentDurationS;
  const ranges = mergeRanges(input.playedRanges);
  const out: PlayedSegment[] = [];
  for (const index of [...byIndex.keys()].sort((a, b) => a - b)) {
    const start = index * d;
    const end = start + d;
    let playedS = 0;
    for (const [a, b] of ranges) playedS += Math.max(0, Math.min(b, end) - Math.max(a, start));
    if (playedS <= 1e-6) continue;
    const chunk = byIndex.get(index)!;
    out.push({ index, rung: chunk.rung, bitrateKbps: chunk.bitrateKbps, playedS, ssim: input.ssim?.[chunk.rung]?.[index] ?? null });
  }
  return out;
}

/** Overlapping ranges as one (a rebuilt media element may play a stretch again). */
function mergeRanges(ranges: readonly (readonly [number, number])[]): [number, number][] {
  const merged: [number, number][] = [];
  for (const [a, b] of [...ranges].sort((x, y) => x[0] - y[0])) {
    const last = merged[merged.length - 1];
    if (last && a <= last[1]) last[1] = Math.max(last[1], b);
    else merged.push([a, b]);
  }
  return merged;
}

export function summarizeSession(input: SessionSummaryInput): SessionQoE {
  const played = playedSegments(input);
  const playedS = played.reduce((s, p) => s + p.playedS, 0);
  const withSsim = played.filter((p) => p.ssim !== null);
  const ssimS = withSsim.reduce((s, p) => s + p.playedS, 0);
  let switchCount = 0;
  for (let i = 1; i < played.length; i++) if (played[i]!.rung !== played[i - 1]!.rung) switchCount++;
  return {
    arm: input.arm,
    playDelayS: input.playDelayS,
    rebufferCount: input.rebufferCount,
    rebufferS: input.rebufferS,
    avgBitrateKbps: playedS > 0 ? played.reduce((s, p) => s + p.bitrateKbps * p.playedS, 0) / playedS : 0,
    avgQuality: ssimS > 0 ? withSsim.reduce((s, p) => s + p.ssim! * p.playedS, 0) / ssimS : null,
    switchCount,
    initialThroughputKbps: aggregateKbps(input.chunks.filter((c) => c.phase === 'initial' && crossedNetwork(c))),
    chunkThroughputKbps: aggregateKbps(input.chunks.filter((c) => c.phase === 'playing' && crossedNetwork(c))),
    chunks: input.chunks,
    config: input.config,
    ...(input.mediaErrors === undefined ? {} : { mediaErrors: input.mediaErrors }),
  };
}
