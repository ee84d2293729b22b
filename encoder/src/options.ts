/** What `encodeLadder` takes, and its checks: a bad option is refused with its name, its value and the accepted range. */
import { EncoderError } from './errors.js';
import type { LadderSpec } from './ladder.js';

export interface EncodeOptions {
  /** A video file to encode; exactly one of `input` and `syntheticS`. */
  input?: string;
  /** Length in seconds of a synthetic lavfi source (nothing is downloaded). */
  syntheticS?: number;
  outDir: string;
  ladder: LadderSpec;
  segmentS: number;
  /** Overall progress in [0, 1] over both passes (encode, then quality). */
  onProgress?: (fraction: number, stage: 'encode' | 'quality') => void;
  log?: (line: string) => void;
}

const SYNTHETIC_MAX_S = 3600;
const SEGMENT_S_RANGE = { min: 0.5, max: 30 };

export function checkEncodeOptions(opts: EncodeOptions): void {
  if ((opts.input === undefined) === (opts.syntheticS === undefined)) {
    throw new EncoderError('ENC_BAD_ARGS', 'give exactly one of --input FILE or --synthetic SECONDS');
  }
  if (opts.syntheticS !== undefined && !(opts.syntheticS >= opts.segmentS && opts.syntheticS <= SYNTHETIC_MAX_S)) {
    throw new EncoderError('ENC_BAD_ARGS', `--synthetic must be a number of seconds in [${opts.segmentS}, ${SYNTHETIC_MAX_S}], got ${opts.syntheticS}`);
  }
  if (!(opts.segmentS >= SEGMENT_S_RANGE.min && opts.segmentS <= SEGMENT_S_RANGE.max)) {
    throw new EncoderError('ENC_BAD_ARGS', `--segment-seconds must be in [${SEGMENT_S_RANGE.min}, ${SEGMENT_S_RANGE.max}], got ${opts.segmentS}`);
  }
}
