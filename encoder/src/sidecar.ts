/**
 * `segments.json`: the sidecar the encoder writes next to `manifest.mpd`, with the
 * real per-segment sizes the ABR lookahead needs (capped VBR still makes single
 * segments ~1.5x the declared bitrate, so the MPD alone is not enough).
 *
 * This module is pure (no fs, no DOM) so the player bundle, the simulator and the
 * encoder share one definition and one validator.
 */

/**
 * The encoder's segment duration unless told otherwise (`--segment-seconds`), and what
 * a player assumes when it has no `segments.json` to read it from.
 */
export const DEFAULT_SEGMENT_DURATION_S = 2;

export interface SidecarRepresentation {
  /** The MPD Representation@id. */
  id: string;
  /** MPD Representation@bandwidth / 1000. */
  bitrateKbps: number;
  width: number;
  height: number;
  /** Exact size on disk of media segment 1, 2, ... (the init segment excluded). */
  segmentSizesBytes: number[];
  /** Per-segment SSIM (All, 0..1) against the source, from ffmpeg's ssim filter. */
  ssim: number[];
  /** Mean of `ssim` over the segments. */
  meanSsim: number;
  /** Per-segment VMAF; present only when ffmpeg has libvmaf. */
  vmaf?: number[];
  /** Size of the init segment. */
  initSizeBytes: number;
}

export interface SidecarAudio {
  id: string;
  bitrateKbps: number;
  segmentSizesBytes: number[];
  initSizeBytes: number;
}

export interface SegmentsSidecar {
  segmentDurationS: number;
  /** Video representations, lowest bitrate first. */
  representations: SidecarRepresentation[];
  audio?: SidecarAudio;
  /** Which metric `ssim` holds and how it was computed, for readers of the file. */
  quality?: { metric: 'ssim'; reference: string; vmafAvailable: boolean };
}

export class SidecarError extends Error {
  readonly code = 'SIDECAR_INVALID';

  constructor(message: string) {
    super(`segments.json: ${message}`);
    this.name = 'SidecarError';
  }
}

function positiveNumber(value: unknown, what: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) {
    throw new SidecarError(`${what} must be a positive number, got ${JSON.stringify(value)}`);
  }
  return value;
}

function sizeList(value: unknown, what: string): number[] {
  if (!Array.isArray(value) || value.length === 0) throw new SidecarError(`${what} must be a non-empty array`);
  return value.map((v, i) => {
    if (!Number.isInteger(v) || (v as number) <= 0) {
      throw new SidecarError(`${what}[${i}] must be a positive integer byte count, got ${JSON.stringify(v)}`);
    }
    return v as number;
  });
}

function unitList(value: unknown, what: string, length: number, max: number): number[] {
  if (!Array.isArray(value) || value.length !== length) {
    throw new SidecarError(`${what} must be an array of ${length} numbers (one per segment)`);
  }
  return value.map((v, i) => {
    if (typeof v !== 'number' || !Number.isFinite(v) || v < 0 || v > max) {
      throw new SidecarError(`${what}[${i}] must be a number in [0, ${max}], got ${JSON.stringify(v)}`);
    }
    return v;
  });
}

/**
 * Validates parsed JSON as a sidecar: every representation has the same segment
 * count, bitrates strictly increase. Throws a {@link SidecarError} naming the field.
 */
export function parseSegmentsSidecar(json: unknown): SegmentsSidecar {
  if (typeof json !== 'object' || json === null) throw new SidecarError('must be a JSON object');
  const obj = json as Record<string, unknown>;
  const segmentDurationS = positiveNumber(obj.segmentDurationS, 'segmentDurationS');
  if (!Array.isArray(obj.representations) || obj.representations.length === 0) {
    throw new SidecarError('representations must be a non-empty array');
  }
  const representations = obj.representations.map((raw: unknown, i: number): SidecarRepresentation => {
    if (typeof raw !== 'object' || raw === null) throw new SidecarError(`representations[${i}] must be an object`);
    const r = raw as Record<string, unknown>;
    const where = `representations[${i}]`;
    if (typeof r.id !== 'string' || r.id === '') throw new SidecarError(`${where}.id must be a non-empty string`);
    const segmentSizesBytes = sizeList(r.segmentSizesBytes, `${where}.segmentSizesBytes`);
    const ssim = unitList(r.ssim, `${where}.ssim`, segmentSizesBytes.length, 1);
    const rep: SidecarRepresentation = {
      id: r.id,
      bitrateKbps: positiveNumber(r.bitrateKbps, `${where}.bitrateKbps`),
      width: positiveNumber(r.width, `${where}.width`),
      height: positiveNumber(r.height, `${where}.height`),
      segmentSizesBytes,
      ssim,
      meanSsim: typeof r.meanSsim === 'number' ? r.meanSsim : ssim.reduce((a, b) => a + b, 0) / ssim.length,
      initSizeBytes: typeof r.initSizeBytes === 'number' ? r.initSizeBytes : 0,
    };
    if (r.vmaf !== undefined) rep.vmaf = unitList(r.vmaf, `${where}.vmaf`, segmentSizesBytes.length, 100);
    return rep;
  });
  const count = representations[0]!.segmentSizesBytes.length;
  representations.forEach((rep, i) => {
    if (rep.segmentSizesBytes.length !== count) {
      throw new SidecarError(`representations[${i}] has ${rep.segmentSizesBytes.length} segments, representations[0] has ${count}`);
    }
    if (i > 0 && rep.bitrateKbps <= representations[i - 1]!.bitrateKbps) {
      throw new SidecarError('representations must be sorted by strictly increasing bitrateKbps');
    }
  });
  const sidecar: SegmentsSidecar = { segmentDurationS, representations };
  if (typeof obj.audio === 'object' && obj.audio !== null) {
    const a = obj.audio as Record<string, unknown>;
    sidecar.audio = {
      id: String(a.id),
      bitrateKbps: positiveNumber(a.bitrateKbps, 'audio.bitrateKbps'),
      segmentSizesBytes: sizeList(a.segmentSizesBytes, 'audio.segmentSizesBytes'),
      initSizeBytes: typeof a.initSizeBytes === 'number' ? a.initSizeBytes : 0,
    };
  }
  if (typeof obj.quality === 'object' && obj.quality !== null) sidecar.quality = obj.quality as SegmentsSidecar['quality'];
  return sidecar;
}
