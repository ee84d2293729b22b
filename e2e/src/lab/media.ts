/**
 * The lab's video: a synthetic ladder encoded once per (ladder, length) into the
 * git-ignored cache and reused. It must outlast the buffer target plus the session,
 * or the player would stop downloading early because the video ends, not because
 * its buffer is full.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { encodeLadder } from '@sammy/encoder/encode';
import { writeHlsPlaylists } from '@sammy/encoder/hls';
import { resolveLadder } from '@sammy/encoder/ladder';
import { DEFAULT_SEGMENT_DURATION_S, parseSegmentsSidecar, type SegmentsSidecar } from '@sammy/encoder/sidecar';
import { CACHE_DIR } from '../paths.js';

export interface LabMedia {
  dir: string;
  sidecar: SegmentsSidecar;
  /** Number of video rungs: representation ids 0..videoRungs-1 are video, the next is audio. */
  videoRungs: number;
}

export function mediaDirFor(ladder: string, durationS: number): string {
  return join(CACHE_DIR, 'media', `${ladder.replace(/[^\w-]/g, '_')}-${Math.ceil(durationS)}s`);
}

/**
 * True for a ladder cached by an encoder that left the audio's last few milliseconds in
 * a segment of their own (one audio segment more than the video, which the MPD never
 * addresses): re-encoded, so the lab plays what the encoder writes now.
 */
function hasAudioTail(sidecar: SegmentsSidecar): boolean {
  return sidecar.audio !== undefined && sidecar.audio.segmentSizesBytes.length !== sidecar.representations[0]!.segmentSizesBytes.length;
}

export async function ensureLabMedia(ladder: string, durationS: number, log: (line: string) => void): Promise<LabMedia> {
  const dir = mediaDirFor(ladder, durationS);
  const sidecarPath = join(dir, 'segments.json');
  const cached = existsSync(sidecarPath) ? parseSegmentsSidecar(JSON.parse(readFileSync(sidecarPath, 'utf8'))) : null;
  if (!cached || hasAudioTail(cached)) {
    log(`encoding a ${Math.ceil(durationS)} s synthetic ${ladder} ladder into ${dir} (${cached ? 'the cached one has an audio tail segment' : 'once; cached'})`);
    let shown = -1;
    await encodeLadder({
      syntheticS: Math.ceil(durationS),
      outDir: dir,
      ladder: resolveLadder(ladder),
      segmentS: DEFAULT_SEGMENT_DURATION_S,
      onProgress: (f) => {
        const pct = Math.floor(f * 10) * 10;
        if (pct !== shown) log(`  encode ${(shown = pct)}%`);
      },
    });
  } else {
    // The playlists are read off the files, so rewriting them is cheap and keeps a
    // cache from before the encoder wrote HLS, or wrote an older BANDWIDTH, current.
    writeHlsPlaylists(dir);
  }
  const sidecar = parseSegmentsSidecar(JSON.parse(readFileSync(sidecarPath, 'utf8')));
  return { dir, sidecar, videoRungs: sidecar.representations.length };
}
