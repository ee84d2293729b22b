/**
 * `npm run encode`: a source into a DASH ladder (fMP4, SegmentTemplate, aligned
 * keyframes) plus `segments.json`, and CMAF HLS playlists over the same files. The
 * steps live in their own modules: the options' checks (options.ts), the plan and the
 * ffmpeg command (plan.ts), reading the MPD back (mpd.ts), the audio's tail segment
 * (tail.ts), the quality pass (quality.ts), the HLS playlists (hls.ts) and the output
 * folder (output.ts).
 */
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { EncoderError } from './errors.js';
import { writeHlsPlaylists } from './hls.js';
import { ffmpegHasLibvmaf, requireFfmpeg, runFfmpeg } from './ffmpeg.js';
import { readMpdRepresentations, segmentFiles, type MpdRepresentation } from './mpd.js';
import { checkEncodeOptions, type EncodeOptions } from './options.js';
import { donePartialOutput, prepareOutput, publish, startPartialOutput } from './output.js';
import { buildEncodeArgs, planRungs, planSource } from './plan.js';
import { measureQuality, type QualityScores } from './quality.js';
import type { SegmentsSidecar, SidecarAudio, SidecarRepresentation } from './sidecar.js';
import { foldAudioTails } from './tail.js';

export { abandonPartialOutputs } from './output.js';
export type { EncodeOptions } from './options.js';

export interface EncodeResult {
  outDir: string;
  sidecar: SegmentsSidecar;
  mediaDurationS: number;
  elapsedS: number;
}

/** Share of the progress bar given to the encode pass; the quality pass gets the rest. */
const ENCODE_PROGRESS_SHARE = 0.75;

const sizeOf = (path: string): number => statSync(path).size;

type RepWithFiles = MpdRepresentation & { files: { init: string; media: string[] } };

/** The video representations the MPD lists, lowest bitrate first, with their segment files; checked against the plan. */
function videoRepresentations(mpdReps: MpdRepresentation[], expectedRungs: number, dir: string): RepWithFiles[] {
  const videoReps = mpdReps.filter((r) => r.contentType === 'video').sort((a, b) => a.bandwidth - b.bandwidth);
  if (videoReps.length !== expectedRungs) {
    throw new EncoderError('ENC_FFMPEG_FAILED', `the MPD lists ${videoReps.length} video representations, expected ${expectedRungs}`);
  }
  const withFiles = videoReps.map((rep) => ({ ...rep, files: segmentFiles(dir, rep.id) }));
  const counts = new Set(withFiles.map((r) => r.files.media.length));
  if (counts.size !== 1 || counts.has(0)) {
    throw new EncoderError('ENC_FFMPEG_FAILED', `rungs have unequal or zero segment counts: ${[...counts].join(', ')}`);
  }
  return withFiles;
}

/** `segments.json` from the files on disk and the quality scores. */
function buildSidecar(segmentS: number, withFiles: RepWithFiles[], scores: QualityScores[], audioRep: MpdRepresentation | undefined, dir: string, withVmaf: boolean): SegmentsSidecar {
  const top = withFiles[withFiles.length - 1]!;
  const representations: SidecarRepresentation[] = withFiles.map((rep, i) => {
    const ssim = scores[i]!.ssim;
    const entry: SidecarRepresentation = {
      id: rep.id,
      bitrateKbps: rep.bandwidth / 1000,
      width: rep.width,
      height: rep.height,
      segmentSizesBytes: rep.files.media.map(sizeOf),
      ssim,
      meanSsim: Math.round((ssim.reduce((a, b) => a + b, 0) / ssim.length) * 1e6) / 1e6,
      initSizeBytes: sizeOf(rep.files.init),
    };
    if (scores[i]!.vmaf) entry.vmaf = scores[i]!.vmaf;
    return entry;
  });
  const sidecar: SegmentsSidecar = {
    segmentDurationS: segmentS,
    representations,
    quality: { metric: 'ssim', reference: `source scaled to ${top.width}x${top.height}; each rung upscaled to it`, vmafAvailable: withVmaf },
  };
  if (audioRep) {
    const files = segmentFiles(dir, audioRep.id);
    const audio: SidecarAudio = {
      id: audioRep.id,
      bitrateKbps: audioRep.bandwidth / 1000,
      segmentSizesBytes: files.media.map(sizeOf),
      initSizeBytes: sizeOf(files.init),
    };
    sidecar.audio = audio;
  }
  return sidecar;
}

/**
 * Encodes a source into a DASH ladder plus `segments.json`. Writes into a temporary
 * sibling folder and renames it at the end.
 */
export async function encodeLadder(opts: EncodeOptions): Promise<EncodeResult> {
  const started = Date.now();
  const log = opts.log ?? (() => {});
  const onProgress = opts.onProgress ?? (() => {});
  checkEncodeOptions(opts);
  requireFfmpeg();
  const source = planSource(opts);
  const rungs = planRungs(opts.ladder, source, log);
  const { finalDir, tmpDir } = prepareOutput(opts.outDir);
  startPartialOutput(tmpDir);
  try {
    log(`encoding ${source.durationS.toFixed(1)} s into ${rungs.length} rungs (${rungs.map((r) => `${r.height}p@${r.bitrateKbps}k`).join(', ')})`);
    await runFfmpeg(buildEncodeArgs(source, rungs, opts.segmentS, opts.ladder, tmpDir), source.durationS, (f) =>
      onProgress(f * ENCODE_PROGRESS_SHARE, 'encode'),
    );
    const mpdReps = readMpdRepresentations(readFileSync(join(tmpDir, 'manifest.mpd'), 'utf8'));
    const withFiles = videoRepresentations(mpdReps, rungs.length, tmpDir);
    // Before anything lists the audio segments: the sidecar and the playlists then
    // list the same count for audio and video, the count the MPD addresses.
    for (const t of foldAudioTails(tmpDir, mpdReps, withFiles[0]!.files.media.length, opts.segmentS)) {
      log(`audio ${t.id}: appended its last ${(t.durationS * 1000).toFixed(1)} ms (${t.foldedSegments} segment file${t.foldedSegments === 1 ? '' : 's'} past the video's) to segment ${withFiles[0]!.files.media.length}`);
    }
    const withVmaf = ffmpegHasLibvmaf();
    if (!withVmaf) log('ffmpeg has no libvmaf: recording SSIM only');
    const top = withFiles[withFiles.length - 1]!;
    const scores = await measureQuality(source, withFiles, top, tmpDir, withVmaf, (f) =>
      onProgress(ENCODE_PROGRESS_SHARE + f * (1 - ENCODE_PROGRESS_SHARE), 'quality'),
    );
    const sidecar = buildSidecar(opts.segmentS, withFiles, scores, mpdReps.find((r) => r.contentType === 'audio'), tmpDir, withVmaf);
    writeFileSync(join(tmpDir, 'segments.json'), `${JSON.stringify(sidecar, null, 1)}\n`);
    // The same fMP4 files as HLS: one encode serves DASH and HLS players.
    writeHlsPlaylists(tmpDir);
    publish(tmpDir, finalDir);
    return { outDir: finalDir, sidecar, mediaDurationS: source.durationS, elapsedS: (Date.now() - started) / 1000 };
  } finally {
    donePartialOutput(tmpDir);
  }
}
