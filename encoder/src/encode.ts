import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { XMLParser } from 'fast-xml-parser';
import { EncoderError } from './errors.js';
import { ffmpegHasLibvmaf, probeSource, requireFfmpeg, runFfmpeg, type ProbedSource } from './ffmpeg.js';
import type { LadderSpec } from './ladder.js';
import type { SegmentsSidecar, SidecarAudio, SidecarRepresentation } from './sidecar.js';
import { syntheticAudioGraph, syntheticVideoGraph } from './synthetic.js';

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

export interface EncodeResult {
  outDir: string;
  sidecar: SegmentsSidecar;
  mediaDurationS: number;
  elapsedS: number;
}

/** Share of the progress bar given to the encode pass; the quality pass gets the rest. */
const ENCODE_PROGRESS_SHARE = 0.75;
const SYNTHETIC_MAX_S = 3600;
export const INIT_SEGMENT_TEMPLATE = 'init-$RepresentationID$.m4s';
export const MEDIA_SEGMENT_TEMPLATE = 'chunk-$RepresentationID$-$Number%05d$.m4s';

interface PlannedRung {
  width: number;
  height: number;
  bitrateKbps: number;
}

interface SourcePlan {
  durationS: number;
  width: number;
  height: number;
  frameRate: number;
  hasAudio: boolean;
  /** ffmpeg input arguments (empty for a synthetic source built in the filter graph). */
  inputArgs: string[];
  /** Filter-graph text producing `[src]` (video, yuv420p, constant frame rate). */
  videoGraph: string;
  /** Filter-graph text producing `[srca]`, or null without audio. */
  audioGraph: string | null;
}

function evenRound(value: number): number {
  return Math.max(2, Math.round(value / 2) * 2);
}

function planSource(opts: EncodeOptions): SourcePlan {
  const { ladder } = opts;
  const top = ladder.rungs[ladder.rungs.length - 1]!;
  if (opts.syntheticS !== undefined) {
    const durationS = opts.syntheticS;
    const height = top.height;
    const width = top.width ?? evenRound((height * 16) / 9);
    return {
      durationS,
      width,
      height,
      frameRate: ladder.frameRate,
      hasAudio: true,
      inputArgs: [],
      videoGraph: `${syntheticVideoGraph(durationS, width, height, ladder.frameRate)},format=yuv420p[src]`,
      audioGraph: `${syntheticAudioGraph(durationS)}[srca]`,
    };
  }
  const input = resolve(opts.input!);
  if (!existsSync(input)) throw new EncoderError('ENC_NO_INPUT', `input file not found: ${opts.input}`);
  if (!statSync(input).isFile()) throw new EncoderError('ENC_NO_INPUT', `input is not a regular file: ${opts.input}`);
  const probed: ProbedSource = probeSource(input);
  // Keep a sane constant frame rate: the source's own, capped by the ladder's.
  const frameRate = Math.min(Math.round(probed.frameRate * 1000) / 1000, ladder.frameRate);
  return {
    durationS: probed.durationS,
    width: probed.width,
    height: probed.height,
    frameRate,
    hasAudio: probed.hasAudio,
    inputArgs: ['-i', input],
    videoGraph: `[0:v:0]fps=${frameRate},format=yuv420p[src]`,
    audioGraph: probed.hasAudio ? '[0:a:0]aresample=48000[srca]' : null,
  };
}

function planRungs(ladder: LadderSpec, source: SourcePlan, log: (line: string) => void): PlannedRung[] {
  const aspect = source.width / source.height;
  const fitting = ladder.rungs.filter((r) => r.height <= source.height);
  if (fitting.length < ladder.rungs.length) {
    const dropped = ladder.rungs.length - fitting.length;
    log(`source is ${source.height}p: skipping ${dropped} rung(s) taller than the source`);
  }
  const chosen = fitting.length > 0 ? fitting : [ladder.rungs[0]!];
  return chosen.map((r) => ({ height: r.height, width: r.width ?? evenRound(r.height * aspect), bitrateKbps: r.bitrateKbps }));
}

/** Creates the temporary output folder beside `outDir`, so the final rename is atomic. */
function prepareOutput(outDir: string): { finalDir: string; tmpDir: string } {
  const finalDir = resolve(outDir);
  if (existsSync(finalDir)) {
    const st = statSync(finalDir);
    if (!st.isDirectory()) throw new EncoderError('ENC_OUT_UNWRITABLE', `output ${outDir} exists and is not a folder`);
    const entries = readdirSync(finalDir);
    const isLadder = entries.includes('manifest.mpd') || entries.includes('segments.json');
    if (entries.length > 0 && !isLadder) {
      throw new EncoderError('ENC_OUT_NOT_LADDER', `output folder ${outDir} is not empty and holds no ladder; choose another --out`);
    }
  }
  const parent = dirname(finalDir);
  try {
    mkdirSync(parent, { recursive: true });
    const tmpDir = mkdtempSync(join(parent, `.${basename(finalDir)}.partial-`));
    return { finalDir, tmpDir };
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    throw new EncoderError('ENC_OUT_UNWRITABLE', `cannot write to output folder ${outDir}: ${e.code ?? ''} ${e.message}`.trim());
  }
}

function buildEncodeArgs(source: SourcePlan, rungs: PlannedRung[], segmentS: number, ladder: LadderSpec, dir: string): string[] {
  const n = rungs.length;
  const gopFrames = Math.max(1, Math.round(source.frameRate * segmentS));
  const graph = [
    source.videoGraph,
    `[src]split=${n}${rungs.map((_, i) => `[s${i}]`).join('')}`,
    ...rungs.map((r, i) => `[s${i}]scale=${r.width}:${r.height}:flags=bicubic[v${i}]`),
  ];
  if (source.audioGraph) graph.push(source.audioGraph);
  const args = [...source.inputArgs, '-filter_complex', graph.join(';')];
  rungs.forEach((r, i) => {
    // Capped VBR: maxrate 1.1x, VBV buffer 2x the target (why: docs/media.md).
    args.push('-map', `[v${i}]`, `-b:v:${i}`, `${r.bitrateKbps}k`, `-maxrate:v:${i}`, `${Math.round(r.bitrateKbps * 1.1)}k`);
    args.push(`-bufsize:v:${i}`, `${r.bitrateKbps * 2}k`);
  });
  args.push(
    '-c:v', 'libx264', '-preset', 'veryfast', '-profile:v', 'high', '-pix_fmt', 'yuv420p',
    // Keyframes exactly on segment boundaries, closed GOPs, no scene-cut IDRs: every
    // rung's segment k covers the same media time, so the player can switch anywhere.
    '-g', String(gopFrames), '-keyint_min', String(gopFrames), '-sc_threshold', '0',
    '-x264-params', `keyint=${gopFrames}:min-keyint=${gopFrames}:scenecut=0:open-gop=0`,
    '-force_key_frames', `expr:gte(t,n_forced*${segmentS})`,
  );
  if (source.audioGraph) {
    args.push('-map', '[srca]', '-c:a', 'aac', '-b:a', `${ladder.audioBitrateKbps}k`, '-ac', '2');
  }
  args.push(
    '-t', String(source.durationS),
    '-f', 'dash', '-seg_duration', String(segmentS), '-use_template', '1', '-use_timeline', '0',
    '-adaptation_sets', source.audioGraph ? 'id=0,streams=v id=1,streams=a' : 'id=0,streams=v',
    '-init_seg_name', INIT_SEGMENT_TEMPLATE, '-media_seg_name', MEDIA_SEGMENT_TEMPLATE,
    join(dir, 'manifest.mpd'),
  );
  return args;
}

interface MpdRepresentation {
  id: string;
  contentType: 'video' | 'audio';
  bandwidth: number;
  width: number;
  height: number;
}

/** Reads Representation@id, @bandwidth and size from the MPD ffmpeg wrote. */
export function readMpdRepresentations(mpdText: string): MpdRepresentation[] {
  const parser = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '', isArray: (name) => ['Period', 'AdaptationSet', 'Representation'].includes(name) });
  const doc = parser.parse(mpdText) as {
    MPD?: { Period?: Array<{ AdaptationSet?: Array<Record<string, unknown> & { Representation?: Array<Record<string, string>> }> }> };
  };
  const reps: MpdRepresentation[] = [];
  for (const period of doc.MPD?.Period ?? []) {
    for (const set of period.AdaptationSet ?? []) {
      for (const rep of set.Representation ?? []) {
        const mime = String(rep.mimeType ?? set.mimeType ?? '');
        const contentType = String(set.contentType ?? mime.split('/')[0]) === 'audio' ? 'audio' : 'video';
        reps.push({
          id: String(rep.id),
          contentType,
          bandwidth: Number(rep.bandwidth),
          width: Number(rep.width ?? 0),
          height: Number(rep.height ?? 0),
        });
      }
    }
  }
  return reps;
}

function segmentFiles(dir: string, id: string): { init: string; media: string[] } {
  const pattern = new RegExp(`^chunk-${id.replace(/[^\w-]/g, '')}-(\\d+)\\.m4s$`);
  const media = readdirSync(dir)
    .map((name) => ({ name, m: pattern.exec(name) }))
    .filter((e): e is { name: string; m: RegExpExecArray } => e.m !== null)
    .sort((a, b) => Number(a.m[1]) - Number(b.m[1]))
    .map((e) => join(dir, e.name));
  return { init: join(dir, `init-${id}.m4s`), media };
}

const sizeOf = (path: string): number => statSync(path).size;

/** `concat:` protocol input replaying one representation as a single fMP4 stream. */
function concatInput(files: { init: string; media: string[] }): string {
  return `concat:${[files.init, ...files.media].join('|')}`;
}

/** Parses ffmpeg ssim stats lines (`n:1 Y:.. All:0.93 (..)`) into per-frame values. */
export function parseSsimStats(text: string): number[] {
  const values: number[] = [];
  for (const line of text.split('\n')) {
    const m = /All:([0-9.]+)/.exec(line);
    if (m) values.push(Number(m[1]));
  }
  return values;
}

/** Averages per-frame scores into `segmentCount` segments of `framesPerSegment` frames. */
export function perSegmentMeans(frames: number[], framesPerSegment: number, segmentCount: number): number[] {
  const sums = new Array<number>(segmentCount).fill(0);
  const counts = new Array<number>(segmentCount).fill(0);
  frames.forEach((v, n) => {
    const k = Math.min(segmentCount - 1, Math.floor(n / framesPerSegment));
    sums[k]! += v;
    counts[k]! += 1;
  });
  return sums.map((s, k) => (counts[k]! > 0 ? Math.round((s / counts[k]!) * 1e6) / 1e6 : 0));
}

/**
 * Scores every rung against the source in one ffmpeg run: the source is decoded
 * once, scaled to the top rung's size, and each rung is upscaled to it.
 */
async function measureQuality(
  source: SourcePlan,
  reps: Array<{ id: string; files: { init: string; media: string[] } }>,
  top: { width: number; height: number },
  dir: string,
  withVmaf: boolean,
  onProgress: (fraction: number) => void,
): Promise<Array<{ ssim: number[]; vmaf?: number[] }>> {
  const n = reps.length;
  const refInputs = source.inputArgs;
  const firstRung = refInputs.length > 0 ? 1 : 0;
  const graph: string[] = [
    source.videoGraph,
    `[src]scale=${top.width}:${top.height}:flags=bicubic,settb=AVTB,setpts=PTS-STARTPTS,split=${withVmaf ? 2 * n : n}${Array.from({ length: withVmaf ? 2 * n : n }, (_, i) => `[r${i}]`).join('')}`,
  ];
  const maps: string[] = [];
  reps.forEach((rep, i) => {
    const input = firstRung + i;
    graph.push(
      `[${input}:v]scale=${top.width}:${top.height}:flags=bicubic,format=yuv420p,settb=AVTB,setpts=PTS-STARTPTS${withVmaf ? `,split=2[d${i}][e${i}]` : `[d${i}]`}`,
    );
    graph.push(`[d${i}][r${i}]ssim=stats_file=${join(dir, `ssim-${rep.id}.log`)}[o${i}]`);
    maps.push('-map', `[o${i}]`);
    if (withVmaf) {
      graph.push(`[e${i}][r${n + i}]libvmaf=log_fmt=json:log_path=${join(dir, `vmaf-${rep.id}.json`)}[q${i}]`);
      maps.push('-map', `[q${i}]`);
    }
  });
  const args = [...refInputs];
  for (const rep of reps) args.push('-i', concatInput(rep.files));
  args.push('-filter_complex', graph.join(';'), ...maps, '-t', String(source.durationS), '-f', 'null', '-');
  await runFfmpeg(args, source.durationS, onProgress);
  return reps.map((rep) => {
    const segCount = rep.files.media.length;
    const framesPerSegment = Math.max(1, Math.round(source.frameRate * (source.durationS / segCount)));
    const ssimFrames = parseSsimStats(readFileSync(join(dir, `ssim-${rep.id}.log`), 'utf8'));
    rmSync(join(dir, `ssim-${rep.id}.log`));
    const scores: { ssim: number[]; vmaf?: number[] } = { ssim: perSegmentMeans(ssimFrames, framesPerSegment, segCount) };
    if (withVmaf) {
      const vmafPath = join(dir, `vmaf-${rep.id}.json`);
      const log = JSON.parse(readFileSync(vmafPath, 'utf8')) as { frames?: Array<{ metrics?: { vmaf?: number } }> };
      rmSync(vmafPath);
      const frames = (log.frames ?? []).map((f) => f.metrics?.vmaf ?? 0);
      scores.vmaf = perSegmentMeans(frames, framesPerSegment, segCount);
    }
    return scores;
  });
}

/** Moves the finished ladder into place, replacing an earlier ladder only after success. */
function publish(tmpDir: string, finalDir: string): void {
  if (existsSync(finalDir)) {
    const old = `${tmpDir}.old`;
    renameSync(finalDir, old);
    renameSync(tmpDir, finalDir);
    rmSync(old, { recursive: true, force: true });
  } else {
    renameSync(tmpDir, finalDir);
  }
}

/** Folders being written right now, removed by {@link abandonPartialOutputs} on a signal. */
const partialDirs = new Set<string>();

export function abandonPartialOutputs(): void {
  for (const dir of partialDirs) rmSync(dir, { recursive: true, force: true });
  partialDirs.clear();
}

/**
 * Encodes a source into a DASH ladder (fMP4, SegmentTemplate, aligned keyframes)
 * plus `segments.json`. Writes into a temporary sibling folder and renames it at
 * the end, so a failed run never leaves something that looks like a ladder.
 */
export async function encodeLadder(opts: EncodeOptions): Promise<EncodeResult> {
  const started = Date.now();
  const log = opts.log ?? (() => {});
  const onProgress = opts.onProgress ?? (() => {});
  if ((opts.input === undefined) === (opts.syntheticS === undefined)) {
    throw new EncoderError('ENC_BAD_ARGS', 'give exactly one of --input FILE or --synthetic SECONDS');
  }
  if (opts.syntheticS !== undefined && !(opts.syntheticS >= opts.segmentS && opts.syntheticS <= SYNTHETIC_MAX_S)) {
    throw new EncoderError('ENC_BAD_ARGS', `--synthetic must be a number of seconds in [${opts.segmentS}, ${SYNTHETIC_MAX_S}], got ${opts.syntheticS}`);
  }
  if (!(opts.segmentS >= 0.5 && opts.segmentS <= 30)) {
    throw new EncoderError('ENC_BAD_ARGS', `--segment-seconds must be in [0.5, 30], got ${opts.segmentS}`);
  }
  requireFfmpeg();
  const source = planSource(opts);
  const rungs = planRungs(opts.ladder, source, log);
  const { finalDir, tmpDir } = prepareOutput(opts.outDir);
  partialDirs.add(tmpDir);
  try {
    log(`encoding ${source.durationS.toFixed(1)} s into ${rungs.length} rungs (${rungs.map((r) => `${r.height}p@${r.bitrateKbps}k`).join(', ')})`);
    await runFfmpeg(buildEncodeArgs(source, rungs, opts.segmentS, opts.ladder, tmpDir), source.durationS, (f) =>
      onProgress(f * ENCODE_PROGRESS_SHARE, 'encode'),
    );
    const mpdReps = readMpdRepresentations(readFileSync(join(tmpDir, 'manifest.mpd'), 'utf8'));
    const videoReps = mpdReps.filter((r) => r.contentType === 'video').sort((a, b) => a.bandwidth - b.bandwidth);
    const audioRep = mpdReps.find((r) => r.contentType === 'audio');
    if (videoReps.length !== rungs.length) {
      throw new EncoderError('ENC_FFMPEG_FAILED', `the MPD lists ${videoReps.length} video representations, expected ${rungs.length}`);
    }
    const withFiles = videoReps.map((rep) => ({ ...rep, files: segmentFiles(tmpDir, rep.id) }));
    const counts = new Set(withFiles.map((r) => r.files.media.length));
    if (counts.size !== 1 || counts.has(0)) {
      throw new EncoderError('ENC_FFMPEG_FAILED', `rungs have unequal or zero segment counts: ${[...counts].join(', ')}`);
    }
    const withVmaf = ffmpegHasLibvmaf();
    if (!withVmaf) log('ffmpeg has no libvmaf: recording SSIM only');
    const top = withFiles[withFiles.length - 1]!;
    const scores = await measureQuality(source, withFiles, top, tmpDir, withVmaf, (f) =>
      onProgress(ENCODE_PROGRESS_SHARE + f * (1 - ENCODE_PROGRESS_SHARE), 'quality'),
    );
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
      segmentDurationS: opts.segmentS,
      representations,
      quality: { metric: 'ssim', reference: `source scaled to ${top.width}x${top.height}; each rung upscaled to it`, vmafAvailable: withVmaf },
    };
    if (audioRep) {
      const files = segmentFiles(tmpDir, audioRep.id);
      const audio: SidecarAudio = {
        id: audioRep.id,
        bitrateKbps: audioRep.bandwidth / 1000,
        segmentSizesBytes: files.media.map(sizeOf),
        initSizeBytes: sizeOf(files.init),
      };
      sidecar.audio = audio;
    }
    writeFileSync(join(tmpDir, 'segments.json'), `${JSON.stringify(sidecar, null, 1)}\n`);
    publish(tmpDir, finalDir);
    return { outDir: finalDir, sidecar, mediaDurationS: source.durationS, elapsedS: (Date.now() - started) / 1000 };
  } finally {
    rmSync(tmpDir, { recursive: true, force: true });
    partialDirs.delete(tmpDir);
  }
}
