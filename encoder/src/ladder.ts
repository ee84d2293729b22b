import { readFileSync } from 'node:fs';
import { EncoderError } from './errors.js';

/** One rung of a bitrate ladder, as the user specifies it. */
export interface RungSpec {
  /** Output height in pixels (even). */
  height: number;
  /** Output width in pixels (even); derived from the source's aspect ratio when absent. */
  width?: number;
  /** Target (and MPD @bandwidth) video bitrate in kbps; capped VBR around it. */
  bitrateKbps: number;
}

export interface LadderSpec {
  name: string;
  rungs: RungSpec[];
  /** AAC bitrate in kbps for the audio track (when the source has audio). */
  audioBitrateKbps: number;
  /** Frame rate of the synthetic source, and the cap for real sources. */
  frameRate: number;
}

/**
 * `lab` mirrors the thesis lab (section 2.6): five rungs, top rung 1.05 Mbps.
 * Widths follow the source's aspect ratio (exact 16:9 sizes for the synthetic
 * source), so every rung has the same display aspect ratio, which the dash muxer
 * requires within one adaptation set.
 */
export const LAB_LADDER: LadderSpec = {
  name: 'lab',
  rungs: [
    { height: 216, bitrateKbps: 150 },
    { height: 288, bitrateKbps: 300 },
    { height: 360, bitrateKbps: 500 },
    { height: 432, bitrateKbps: 750 },
    { height: 540, bitrateKbps: 1050 },
  ],
  audioBitrateKbps: 64,
  frameRate: 25,
};

/** `hd`: six rungs up to 1080p at 5 Mbps, a typical streaming-service shape. */
export const HD_LADDER: LadderSpec = {
  name: 'hd',
  rungs: [
    { height: 270, bitrateKbps: 300 },
    { height: 360, bitrateKbps: 600 },
    { height: 540, bitrateKbps: 1200 },
    { height: 720, bitrateKbps: 2000 },
    { height: 900, bitrateKbps: 3200 },
    { height: 1080, bitrateKbps: 5000 },
  ],
  audioBitrateKbps: 128,
  frameRate: 30,
};

export const LADDER_PRESETS: Record<string, LadderSpec> = { lab: LAB_LADDER, hd: HD_LADDER };

/** `lab`, `hd`, or the path of a JSON file shaped like {@link LadderSpec}. */
export function resolveLadder(nameOrPath: string): LadderSpec {
  const preset = LADDER_PRESETS[nameOrPath];
  if (preset) return preset;
  if (!nameOrPath.endsWith('.json')) {
    throw new EncoderError(
      'ENC_BAD_LADDER',
      `--ladder ${JSON.stringify(nameOrPath)} is not a preset or a .json file; use one of ${Object.keys(LADDER_PRESETS).join(', ')} or LADDER.json`,
    );
  }
  let text: string;
  try {
    text = readFileSync(nameOrPath, 'utf8');
  } catch (err) {
    throw new EncoderError('ENC_BAD_LADDER', `cannot read ladder file ${nameOrPath}: ${(err as Error).message}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new EncoderError('ENC_BAD_LADDER', `ladder file ${nameOrPath} is not valid JSON: ${(err as Error).message}`);
  }
  return validateLadder(json, nameOrPath);
}

function isPositiveNumber(value: unknown, max: number): value is number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 && value <= max;
}

function isEvenDimension(value: unknown): value is number {
  return Number.isInteger(value) && (value as number) >= 16 && (value as number) <= 8192 && (value as number) % 2 === 0;
}

/** Checks a user-supplied ladder; every failure names the field and what is accepted. */
export function validateLadder(json: unknown, source: string): LadderSpec {
  const fail = (what: string): never => {
    throw new EncoderError('ENC_BAD_LADDER', `ladder ${source}: ${what}`);
  };
  if (typeof json !== 'object' || json === null) return fail('must be a JSON object with a "rungs" array');
  const obj = json as Record<string, unknown>;
  if (!Array.isArray(obj.rungs) || obj.rungs.length === 0) return fail('"rungs" must be a non-empty array');
  const rungs: RungSpec[] = obj.rungs.map((raw: unknown, i: number) => {
    if (typeof raw !== 'object' || raw === null) return fail(`rungs[${i}] must be an object`);
    const r = raw as Record<string, unknown>;
    if (!isEvenDimension(r.height)) return fail(`rungs[${i}].height must be an even integer 16..8192, got ${JSON.stringify(r.height)}`);
    if (r.width !== undefined && !isEvenDimension(r.width)) {
      return fail(`rungs[${i}].width must be an even integer 16..8192, got ${JSON.stringify(r.width)}`);
    }
    if (!isPositiveNumber(r.bitrateKbps, 100_000)) {
      return fail(`rungs[${i}].bitrateKbps must be a number in (0, 100000], got ${JSON.stringify(r.bitrateKbps)}`);
    }
    return { height: r.height, bitrateKbps: r.bitrateKbps, ...(r.width === undefined ? {} : { width: r.width as number }) };
  });
  for (let i = 1; i < rungs.length; i++) {
    if (rungs[i]!.bitrateKbps <= rungs[i - 1]!.bitrateKbps) fail('rungs must be sorted by strictly increasing bitrateKbps');
  }
  const audioBitrateKbps = obj.audioBitrateKbps ?? 64;
  if (!isPositiveNumber(audioBitrateKbps, 512)) fail(`audioBitrateKbps must be a number in (0, 512], got ${JSON.stringify(audioBitrateKbps)}`);
  const frameRate = obj.frameRate ?? 25;
  if (!isPositiveNumber(frameRate, 120)) fail(`frameRate must be a number in (0, 120], got ${JSON.stringify(frameRate)}`);
  const name = typeof obj.name === 'string' ? obj.name : source;
  return { name, rungs, audioBitrateKbps: audioBitrateKbps as number, frameRate: frameRate as number };
}
