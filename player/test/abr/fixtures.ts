/** Constructed ladders and a chunk-by-chunk playback loop for the core's tests. */
import { LAB_LADDER } from '@sammy/encoder/ladder';
import type { Ladder } from '../../src/abr/ladder.js';

/** The lab ladder's bitrates (thesis 2.6: top 1.05 Mbps). */
export const LAB_BITRATES_KBPS = LAB_LADDER.rungs.map((r) => r.bitrateKbps);

/** Every segment exactly at its rung's nominal bitrate. */
export function cbrLadder(bitratesKbps = LAB_BITRATES_KBPS, segments = 60, segmentDurationS = 2): Ladder {
  return {
    segmentDurationS,
    bitratesKbps,
    segmentSizesBytes: bitratesKbps.map((kbps) => Array.from({ length: segments }, () => (kbps * 1000 * segmentDurationS) / 8)),
  };
}

/** Sizes that swing between 0.6x and 1.5x nominal, as capped VBR does (docs/media.md). */
export function vbrLadder(bitratesKbps = LAB_BITRATES_KBPS, segments = 60, segmentDurationS = 2): Ladder {
  const swing = (i: number) => 1.05 + 0.45 * Math.sin(i * 1.7);
  return {
    segmentDurationS,
    bitratesKbps,
    segmentSizesBytes: bitratesKbps.map((kbps) =>
      Array.from({ length: segments }, (_, i) => Math.round(((kbps * 1000 * segmentDurationS) / 8) * swing(i))),
    ),
  };
}

/** Deterministic pseudo-random numbers in [0, 1) (mulberry32). */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export interface LoopChunk {
  index: number;
  rung: number;
  /** The rate the server paced this chunk at; null when unpaced. */
  paceKbps: number | null;
  throughputKbps: number;
  bufferBeforeS: number;
  bufferAfterS: number;
}

/**
 * Plays `segments` chunks through a rule: the chunk downloads at min(link, pace), the
 * buffer follows Eq. 2.2 (B + d - download time, stalling at 0), and the player idles
 * while another chunk would overfill `maxBufferS`. Playback starts after the first chunk.
 */
export function playLoop(opts: {
  ladder: Ladder;
  linkKbps: number;
  maxBufferS: number;
  segments: number;
  choose: (state: { index: number; bufferS: number; playing: boolean }) => { rung: number; paceKbps: number | null };
  downloaded?: (chunk: LoopChunk, sizeBytes: number, downloadS: number, playing: boolean) => void;
}): LoopChunk[] {
  const { ladder } = opts;
  const d = ladder.segmentDurationS;
  const out: LoopChunk[] = [];
  let bufferS = 0;
  let playing = false;
  for (let index = 0; index < opts.segments; index++) {
    if (playing && bufferS + d > opts.maxBufferS) bufferS = opts.maxBufferS - d;
    const { rung, paceKbps } = opts.choose({ index, bufferS, playing });
    const sizeBytes = ladder.segmentSizesBytes[rung]![index]!;
    const throughputKbps = Math.min(opts.linkKbps, paceKbps ?? Infinity);
    const downloadS = (sizeBytes * 8) / 1000 / throughputKbps;
    const before = bufferS;
    bufferS = (playing ? Math.max(0, bufferS - downloadS) : bufferS) + d;
    const chunk = { index, rung, paceKbps, throughputKbps, bufferBeforeS: before, bufferAfterS: bufferS };
    out.push(chunk);
    opts.downloaded?.(chunk, sizeBytes, downloadS, playing);
    playing = true;
  }
  return out;
}
