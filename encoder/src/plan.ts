/**
 * The encode plan: the source (a probed file or a synthetic lavfi graph), the rungs
 * that fit it, and the one ffmpeg command that encodes every rung into DASH.
 */
import { existsSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { EncoderError } from './errors.js';
import { probeSource, type ProbedSource } from './ffmpeg.js';
import type { LadderSpec } from './ladder.js';
import type { EncodeOptions } from './options.js';
import { syntheticAudioGraph, syntheticVideoGraph } from './synthetic.js';

export const INIT_SEGMENT_TEMPLATE = 'init-$RepresentationID$.m4s';
export const MEDIA_SEGMENT_TEMPLATE = 'chunk-$RepresentationID$-$Number%05d$.m4s';

export interface PlannedRung {
  width: number;
  height: number;
  bitrateKbps: number;
}

export interface SourcePlan {
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

export function planSource(opts: EncodeOptions): SourcePlan {
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

export function planRungs(ladder: LadderSpec, source: SourcePlan, log: (line: string) => void): PlannedRung[] {
  const aspect = source.width / source.height;
  const fitting = ladder.rungs.filter((r) => r.height <= source.height);
  if (fitting.length < ladder.rungs.length) {
    const dropped = ladder.rungs.length - fitting.length;
    log(`source is ${source.height}p: skipping ${dropped} rung(s) taller than the source`);
  }
  const chosen = fitting.length > 0 ? fitting : [ladder.rungs[0]!];
  return chosen.map((r) => ({ height: r.height, width: r.width ?? evenRound(r.height * aspect), bitrateKbps: r.bitrateKbps }));
}

export function buildEncodeArgs(source: SourcePlan, rungs: PlannedRung[], segmentS: number, ladder: LadderSpec, dir: string): string[] {
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
