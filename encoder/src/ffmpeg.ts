import { spawn, spawnSync } from 'node:child_process';
import { EncoderError } from './errors.js';

export const FFMPEG_INSTALL_HINT = 'install it with: sudo apt-get install -y ffmpeg';

/** Throws a one-line error saying how to install ffmpeg when it or ffprobe is missing. */
export function requireFfmpeg(): void {
  for (const tool of ['ffmpeg', 'ffprobe']) {
    const probe = spawnSync(tool, ['-version'], { stdio: 'ignore' });
    if (probe.error || probe.status !== 0) {
      throw new EncoderError('ENC_NO_FFMPEG', `${tool} was not found on PATH; ${FFMPEG_INSTALL_HINT}`);
    }
  }
}

/** True when this ffmpeg was built with libvmaf (Debian's is not). */
export function ffmpegHasLibvmaf(): boolean {
  const out = spawnSync('ffmpeg', ['-hide_banner', '-filters'], { encoding: 'utf8' });
  return /\blibvmaf\b/.test(out.stdout ?? '');
}

export interface ProbedSource {
  durationS: number;
  width: number;
  height: number;
  frameRate: number;
  hasAudio: boolean;
}

interface FfprobeStream {
  codec_type?: string;
  width?: number;
  height?: number;
  avg_frame_rate?: string;
  r_frame_rate?: string;
  duration?: string;
  disposition?: { attached_pic?: number };
}

function parseRate(rate: string | undefined): number {
  if (!rate) return NaN;
  const [num, den] = rate.split('/').map(Number);
  return den ? num! / den : Number(num);
}

/** Reads what the encoder needs from an input file; rejects files with no video. */
export function probeSource(path: string): ProbedSource {
  const out = spawnSync('ffprobe', ['-v', 'error', '-print_format', 'json', '-show_format', '-show_streams', path], {
    encoding: 'utf8',
  });
  if (out.status !== 0) {
    const reason = (out.stderr ?? '').trim().split('\n').pop() ?? 'ffprobe failed';
    throw new EncoderError('ENC_NOT_VIDEO', `${path} is not a video file ffmpeg can read (${reason})`);
  }
  const info = JSON.parse(out.stdout) as { streams?: FfprobeStream[]; format?: { duration?: string } };
  const streams = info.streams ?? [];
  const video = streams.find((s) => s.codec_type === 'video' && !s.disposition?.attached_pic);
  const durationS = Number(info.format?.duration ?? video?.duration);
  if (!video || !video.width || !video.height) {
    throw new EncoderError('ENC_NOT_VIDEO', `${path} is not a video file (ffprobe found no video stream)`);
  }
  if (!Number.isFinite(durationS) || durationS <= 0) {
    throw new EncoderError('ENC_NOT_VIDEO', `${path} has no usable duration (ffprobe reported ${JSON.stringify(info.format?.duration)})`);
  }
  let frameRate = parseRate(video.avg_frame_rate);
  if (!Number.isFinite(frameRate) || frameRate <= 0) frameRate = parseRate(video.r_frame_rate);
  return {
    durationS,
    width: video.width,
    height: video.height,
    frameRate: Number.isFinite(frameRate) && frameRate > 0 ? frameRate : 25,
    hasAudio: streams.some((s) => s.codec_type === 'audio'),
  };
}

/**
 * Runs ffmpeg with `-progress pipe:1`, reporting the fraction of `durationS`
 * processed. Rejects with the last lines of ffmpeg's stderr on failure.
 */
export function runFfmpeg(args: string[], durationS: number, onProgress: (fraction: number) => void): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn('ffmpeg', ['-nostdin', '-hide_banner', '-loglevel', 'error', '-nostats', '-progress', 'pipe:1', ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    let pending = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => {
      pending += chunk;
      const lines = pending.split('\n');
      pending = lines.pop() ?? '';
      for (const line of lines) {
        const m = /^out_time_us=(\d+)/.exec(line);
        if (m) onProgress(Math.min(1, Number(m[1]) / 1e6 / durationS));
      }
    });
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk: string) => {
      stderr = (stderr + chunk).slice(-4000);
    });
    child.on('error', (err) => reject(new EncoderError('ENC_FFMPEG_FAILED', `could not start ffmpeg: ${err.message}`)));
    child.on('close', (code, signal) => {
      if (code === 0) {
        onProgress(1);
        resolve();
        return;
      }
      const last = stderr.trim().split('\n').slice(-3).join(' | ') || `exit ${code ?? signal}`;
      reject(new EncoderError('ENC_FFMPEG_FAILED', `ffmpeg failed: ${last}`));
    });
  });
}
