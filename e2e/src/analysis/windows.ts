/**
 * A session's two states, for scenarios that run long enough to reach them
 * (`session.steadyFromBufferFraction`): the startup fill, from playback start until the
 * buffer first holds that fraction of the buffer target, and the steady state, from
 * then to the session's end. In the fill Sammy paces high (up to 11x the top bitrate)
 * and control downloads back to back; in the steady state every arm fetches about one
 * segment per segment played, Sammy at its full-buffer pace (2.9x). The same metrics
 * are measured in each window, for the video and for its neighbour.
 */
import { aggregateKbps, type ChunkRecord } from '@sammy/player/abr';
import { neighbourKind, type NeighbourKind, type NeighbourMetrics, type NeighbourRaw } from '../scenario/neighbour-kinds.js';
import { queueDelayMsOf, type QueueSample } from './queue-samples.js';
import type { SessionResult } from './records.js';
import { mean, round } from './stats.js';
import type { ResponseRow } from './video-metrics.js';

/** What a window is measured from: a session's record (result.ts `TrialRecord`) has these. */
export interface WindowSource {
  neighbour: NeighbourKind;
  playbackStartS: number | null;
  window: { startS: number; endS: number } | null;
  session: Pick<SessionResult, 'buffer' | 'qoe'> | null;
  telemetry: ResponseRow[];
  neighbourRaw: NeighbourRaw | null;
  queue: QueueSample[];
}

export const PHASE_WINDOWS = ['fill', 'steady'] as const;
export type PhaseWindowName = (typeof PHASE_WINDOWS)[number];

export interface WindowVideoMetrics {
  /** Playing-phase chunks requested in the window: their total bits over their total download time. */
  chunkThroughputKbps: number | null;
  /** The same as a multiple of the ladder's top bitrate. */
  chunkThroughputMultiple: number | null;
  /** Mean requested pace rate (CMCD rtp) of those chunks; null when none was paced. */
  meanRtpKbps: number | null;
  /** The same as a multiple of the top bitrate: Sammy's pace rule says 11x at an empty buffer, 2.9x at a full one. */
  paceMultiple: number | null;
  /** Mean nominal bitrate of the chunks requested in the window. */
  chunkBitrateKbps: number | null;
  /** Server TCP_INFO RTT of the responses that ended in the window. */
  videoRttMs: number | null;
  retransPct: number | null;
  queueDelayMs: number | null;
}

export type WindowMetrics = WindowVideoMetrics & NeighbourMetrics;

export interface PhaseWindow {
  /** Seconds after playback start. */
  fromS: number;
  toS: number;
  metrics: WindowMetrics;
}

/** Per session: both windows; `steady` is null when the buffer never reached the level. */
export type PhaseWindows = Record<PhaseWindowName, PhaseWindow | null>;

export interface WindowContext {
  /** The buffer target (s) and the fraction of it that starts the steady state. */
  maxBufferS: number;
  fraction: number;
  playS: number;
  topBitrateKbps: number;
  rateMbps: number;
}

/** When (s since the session's origin) the buffer first held `levelS`, from the page's samples; null if never. */
export function bufferReachedAtS(buffer: ReadonlyArray<readonly [number, number, number]>, levelS: number): number | null {
  return buffer.find(([, b]) => b >= levelS)?.[0] ?? null;
}

/** The fill and steady windows of one session and their metrics; null when the session never started playing. */
export function phaseWindows(r: WindowSource, c: WindowContext): PhaseWindows | null {
  if (r.playbackStartS === null || !r.session) return null;
  const start = r.playbackStartS;
  const end = start + c.playS;
  const reached = bufferReachedAtS(r.session.buffer, c.fraction * c.maxBufferS);
  const split = reached === null ? end : Math.min(end, Math.max(start, reached));
  const window = (fromS: number, toS: number): PhaseWindow | null =>
    toS > fromS ? { fromS: round(fromS - start, 3), toS: round(toS - start, 3), metrics: windowMetrics(r, fromS, toS, c) } : null;
  return { fill: window(start, split), steady: reached === null ? null : window(split, end) };
}

/** The metrics of a session between `fromS` and `toS` (s since its origin). */
export function windowMetrics(r: WindowSource, fromS: number, toS: number, c: WindowContext): WindowMetrics {
  const inside = (t: number) => t >= fromS && t < toS;
  const qoe = r.session?.qoe ?? null;
  const playRequestS = (r.playbackStartS ?? 0) - (qoe?.playDelayS ?? 0);
  const chunks: ChunkRecord[] = (qoe?.chunks ?? []).filter((ch) => ch.phase === 'playing' && ch.requestS !== undefined && inside(playRequestS + ch.requestS));
  const throughput = aggregateKbps(chunks);
  const rtp = mean(chunks.flatMap((ch) => (ch.rtpKbps === null ? [] : [ch.rtpKbps])));
  const rows = r.telemetry.filter((row) => inside(row[0]) && row[2] > 0);
  const sent = rows.reduce((a, row) => a + (row[7] ?? 0), 0);
  const retrans = rows.reduce((a, row) => a + (row[6] ?? 0), 0);
  const multiple = (kbps: number | null) => (kbps === null || c.topBitrateKbps <= 0 ? null : kbps / c.topBitrateKbps);
  const video: WindowVideoMetrics = {
    chunkThroughputKbps: throughput,
    chunkThroughputMultiple: multiple(throughput),
    meanRtpKbps: rtp,
    paceMultiple: multiple(rtp),
    chunkBitrateKbps: mean(chunks.map((ch) => ch.bitrateKbps)),
    videoRttMs: mean(rows.flatMap((row) => (row[4] === null ? [] : [row[4]]))),
    retransPct: sent > 0 ? (100 * retrans) / sent : null,
    queueDelayMs: mean(r.queue.filter((q) => inside(q[0] / 1000)).map((q) => queueDelayMsOf(q, c.rateMbps))),
  };
  if (!r.window || r.playbackStartS === null) return video;
  const neighbourStartS = r.playbackStartS + r.window.startS;
  const neighbour = neighbourKind(r.neighbour).measure({
    raw: r.neighbourRaw,
    windowMs: (r.window.endS - r.window.startS) * 1000,
    part: { fromMs: (fromS - neighbourStartS) * 1000, toMs: (toS - neighbourStartS) * 1000 },
    session: null,
  });
  return { ...video, ...neighbour };
}
