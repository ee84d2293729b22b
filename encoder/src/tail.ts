/**
 * The audio's tail segment, folded into the segment before it, so the audio has as
 * many media segments as the video: the count the MPD's SegmentTemplate addresses.
 *
 * Why there is a tail: ffmpeg's dash muxer starts a stream's next segment once a
 * packet's time since that stream's first packet reaches the next multiple of the
 * segment duration. AAC's first packet is a priming frame (1024 samples, 21 ms at
 * 48 kHz) placed before time zero, so the audio reaches each boundary one frame early
 * and its last packet (the end of the source's last 21 ms) lands alone in a segment N+1:
 * 10-21 ms, a few hundred bytes. The MPD never addresses it, so DASH players never play
 * those samples; the HLS playlist listed it, one audio segment more than the video (and
 * before hls.ts took RFC 8216's peak over runs of segments, its tiny duration made it
 * the audio's peak). Moving its fragments to the end of segment N keeps every sample
 * and aligns the counts.
 */
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { EncoderError } from './errors.js';
import { appendFragments, segmentDurationS, trackTiming } from './fmp4.js';
import { segmentFiles, type MpdRepresentation } from './mpd.js';

/**
 * The longest tail folded, as a share of the segment duration. The priming spill is a
 * frame or two; audio that runs on for half a segment or more past the video is the
 * source's own mismatch, and folding it would make one oversized segment.
 */
const MAX_TAIL_SHARE = 0.5;

export interface FoldedTail {
  id: string;
  /** Segment files folded into the last addressed one. */
  foldedSegments: number;
  durationS: number;
}

/**
 * For each audio representation in `dir` with more media segments than
 * `videoSegmentCount`, appends the extra segments' fragments to segment
 * `videoSegmentCount` and deletes their files. Throws if the extra audio is not a
 * short tail (the source's audio outlasts its video).
 */
export function foldAudioTails(dir: string, reps: MpdRepresentation[], videoSegmentCount: number, segmentS: number): FoldedTail[] {
  if (!Number.isInteger(videoSegmentCount) || videoSegmentCount < 1) {
    throw new EncoderError('ENC_FFMPEG_FAILED', `cannot align the audio to ${videoSegmentCount} video segments`);
  }
  const folded: FoldedTail[] = [];
  for (const rep of reps.filter((r) => r.contentType === 'audio')) {
    const files = segmentFiles(dir, rep.id);
    const tails = files.media.slice(videoSegmentCount);
    if (tails.length === 0) continue;
    const timing = trackTiming(readFileSync(files.init), files.init);
    const tailBytes = tails.map((path) => readFileSync(path));
    const durationS = tailBytes.reduce((sum, bytes, i) => sum + segmentDurationS(bytes, timing, tails[i]), 0);
    if (durationS >= segmentS * MAX_TAIL_SHARE) {
      throw new EncoderError(
        'ENC_AUDIO_OVERHANG',
        `the audio runs ${durationS.toFixed(2)} s (${tails.length} segments) past the video's ${videoSegmentCount} segments: ` +
          'the source has more audio than video; trim its audio to the video and encode again',
      );
    }
    const lastPath = files.media[videoSegmentCount - 1]!;
    let last: Uint8Array = readFileSync(lastPath);
    tailBytes.forEach((bytes, i) => {
      last = appendFragments(last, bytes, timing, tails[i]);
    });
    writeFileSync(lastPath, last);
    for (const path of tails) rmSync(path);
    folded.push({ id: rep.id, foldedSegments: tails.length, durationS });
  }
  return folded;
}
