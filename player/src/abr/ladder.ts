/**
 * The ladder as the core sees it: nominal bitrates and the real size of every segment
 * of every rung (from the encoder's `segments.json`: capped VBR makes single segments
 * up to ~1.5x the nominal bitrate, so the lookahead must not guess sizes).
 */
/**
 * What the core reads from the encoder's `segments.json` (its `SegmentsSidecar`, in
 * `@sammy/encoder/sidecar`, has this shape and more). Declared here by shape, so the
 * core, and the type declarations of the player plugins built on it, depend on no
 * other package.
 */
export interface LadderSource {
  segmentDurationS: number;
  /** Video representations, lowest bitrate first. */
  representations: readonly { bitrateKbps: number; segmentSizesBytes: readonly number[] }[];
}

export interface Ladder {
  segmentDurationS: number;
  /** Nominal (MPD) bitrate of each rung, lowest first. */
  bitratesKbps: readonly number[];
  /** `segmentSizesBytes[rung][index]`, index 0-based (segment file number - 1). */
  segmentSizesBytes: readonly (readonly number[])[];
}

export function ladderFromSidecar(sidecar: LadderSource): Ladder {
  return {
    segmentDurationS: sidecar.segmentDurationS,
    bitratesKbps: sidecar.representations.map((r) => r.bitrateKbps),
    segmentSizesBytes: sidecar.representations.map((r) => r.segmentSizesBytes),
  };
}

export function segmentCount(ladder: Ladder): number {
  return ladder.segmentSizesBytes[0]?.length ?? 0;
}

export function topRung(ladder: Ladder): number {
  return ladder.bitratesKbps.length - 1;
}

/** The highest rung the player may choose: the ladder's top, or lower under a cap. */
export function clampRung(ladder: Ladder, rung: number | undefined): number {
  const top = topRung(ladder);
  if (rung === undefined || !Number.isFinite(rung)) return top;
  return Math.max(0, Math.min(top, Math.floor(rung)));
}

export function bytesToKbit(bytes: number): number {
  return (bytes * 8) / 1000;
}

/** What the next T segments of one rung add up to. */
export interface Lookahead {
  /** D_T: total media duration of the segments looked at. */
  durationS: number;
  /** S_T: their total size. */
  sizeKbit: number;
  segments: number;
}

/**
 * The T segments from `fromIndex` on (fewer near the end of the video; at or past the
 * end, the last segment alone, so D_T is never 0).
 */
export function lookahead(ladder: Ladder, rung: number, fromIndex: number, segments: number): Lookahead {
  const sizes = ladder.segmentSizesBytes[rung];
  if (!sizes || sizes.length === 0) throw new RangeError(`ladder has no rung ${rung}`);
  const first = Math.max(0, Math.min(Math.floor(fromIndex), sizes.length - 1));
  const last = Math.min(sizes.length, first + Math.max(1, segments));
  let sizeBytes = 0;
  for (let i = first; i < last; i++) sizeBytes += sizes[i]!;
  const n = last - first;
  return { durationS: n * ladder.segmentDurationS, sizeKbit: bytesToKbit(sizeBytes), segments: n };
}
