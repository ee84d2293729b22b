/** Per-segment quality of every rung against the source (SSIM, and VMAF when ffmpeg has libvmaf). */
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { runFfmpeg } from './ffmpeg.js';
import type { SourcePlan } from './plan.js';

/** One rung's per-segment scores. */
export interface QualityScores {
  ssim: number[];
  vmaf?: number[];
}

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
export async function measureQuality(
  source: SourcePlan,
  reps: Array<{ id: string; files: { init: string; media: string[] } }>,
  top: { width: number; height: number },
  dir: string,
  withVmaf: boolean,
  onProgress: (fraction: number) => void,
): Promise<QualityScores[]> {
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
    const scores: QualityScores = { ssim: perSegmentMeans(ssimFrames, framesPerSegment, segCount) };
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
