/**
 * The ladder a simulated session streams: the encoder's `segments.json` (real
 * per-segment sizes and SSIM), tiled to the session's length when the session is
 * longer than the encoded video, so the simulator and the Sammy core's lookahead see
 * the same (looping) video.
 */
import { readFileSync } from 'node:fs';
import { parseSegmentsSidecar, type SegmentsSidecar, type SidecarRepresentation } from '@sammy/encoder/sidecar';
import { SimError } from './errors.js';

export function loadSidecar(path: string): SegmentsSidecar {
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new SimError('SIM_BAD_LADDER', `cannot read ladder ${JSON.stringify(path)} (${(err as Error).message}); give the segments.json the encoder wrote`);
  }
  try {
    return parseSegmentsSidecar(json);
  } catch (err) {
    throw new SimError('SIM_BAD_LADDER', `${path}: ${(err as Error).message}`);
  }
}

export function segmentCount(sidecar: SegmentsSidecar): number {
  return sidecar.representations[0]!.segmentSizesBytes.length;
}

function tile<T>(values: readonly T[], count: number): T[] {
  return Array.from({ length: count }, (_, i) => values[i % values.length]!);
}

/** Tiled sidecars by source and length: sweeps run thousands of sessions of one length. */
const tiledCache = new WeakMap<SegmentsSidecar, Map<number, SegmentsSidecar>>();

/**
 * The sidecar of a video of exactly `count` segments: the encoded ones, repeated (or
 * cut). Cached per source object and count; treat the result as read-only.
 */
export function tileSidecar(sidecar: SegmentsSidecar, count: number): SegmentsSidecar {
  if (!Number.isInteger(count) || count <= 0) throw new SimError('SIM_BAD_ARGS', `a session needs at least one segment, got ${count}`);
  if (count === segmentCount(sidecar)) return sidecar;
  let byCount = tiledCache.get(sidecar);
  if (!byCount) tiledCache.set(sidecar, (byCount = new Map()));
  const cached = byCount.get(count);
  if (cached) return cached;
  const representations = sidecar.representations.map((rep): SidecarRepresentation => {
    const tiled: SidecarRepresentation = {
      ...rep,
      segmentSizesBytes: tile(rep.segmentSizesBytes, count),
      ssim: tile(rep.ssim, count),
    };
    if (rep.vmaf) tiled.vmaf = tile(rep.vmaf, count);
    return tiled;
  });
  const tiled: SegmentsSidecar = { ...sidecar, representations };
  if (sidecar.audio) tiled.audio = { ...sidecar.audio, segmentSizesBytes: tile(sidecar.audio.segmentSizesBytes, count) };
  byCount.set(count, tiled);
  return tiled;
}
