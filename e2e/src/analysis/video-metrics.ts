/**
 * Per-session video metrics, from the player's QoE record and the server's
 * per-response TCP telemetry, and the time series the report plots.
 */
import type { ResponseTelemetry } from '@sammy/server/telemetry';
import { ARM_REGISTRY, type SessionQoE } from '@sammy/player/abr';
import { queueDelayMsOf, type QueueSample } from './queue-samples.js';
import { mean, round } from './stats.js';

/**
 * One media response, compact: [end (s since origin), path, bytes, durationMs, rttMs,
 * retransmitted segments, bytesRetrans, bytesSent, rtpKbps, appliedRateKbps].
 */
export type ResponseRow = [number, string, number, number, number | null, number | null, number | null, number | null, number | null, number | null];

export function compactTelemetry(lines: ResponseTelemetry[], originMs: number): ResponseRow[] {
  return lines.map((r) => [
    round((r.time - originMs) / 1000, 3),
    r.path,
    r.bytes,
    r.durationMs,
    r.rttUs === null ? null : round(r.rttUs / 1000, 3),
    r.retransmits,
    r.bytesRetrans,
    r.bytesSent,
    r.rtpKbps,
    r.appliedRateKbps,
  ]);
}

export interface VideoMetrics {
  chunkThroughputKbps: number | null;
  videoRttMs: number | null;
  retransPct: number | null;
  playDelayS: number | null;
  rebufferCount: number | null;
  rebufferS: number | null;
  avgBitrateKbps: number | null;
  avgQuality: number | null;
  /** Mean bottleneck queueing delay over the session: backlog / rate, or on a trace link the oldest queued packet's wait. */
  queueDelayMs: number | null;
  /** Mean requested pace rate of the playing phase (null when nothing was paced). */
  meanRtpKbps: number | null;
  /** Media element errors (dash.js rebuilds the MediaSource after a decode error); their stall counts as a rebuffer. */
  mediaErrors?: number | null;
  /** Video chunks fetched again after Sammy's stalled-download rule gave their request up; null for arms without the Sammy core. */
  abandonedChunks?: number | null;
  /** Video chunks that crossed HTTP/2, as a fraction of those whose protocol the browser reported (Resource Timing `nextHopProtocol`); null when none did (the headless player, results from before). */
  h2ChunkFraction?: number | null;
  /** Paced video chunks the server applied a higher rate to than their rtp (its spiral guard raised them, per Server-Timing); null when none was paced. */
  guardRaisedChunks?: number | null;
  /** Trace links with an outage (>= 1 s without capacity) in the session: 1 if playback went on after it, else 0. */
  resumedAfterOutage?: number;
  /** The same: from the outage's end until the playhead moved again (0 if it never stopped; to the 0.5 s sampling). */
  outageResumeS?: number | null;
  /** The machine's mean CPU busy % over the session (all cores, everyone's work; cpu-samples.ts). */
  cpuBusyPct?: number | null;
  /** The same without work at nice > 0 (what competes with the lab); at or above CPU_BOUND_PCT the session is flagged. */
  cpuBusyUnnicedPct?: number | null;
}

/** Mean throughput of playing-phase chunks: the player's own figure, else from its chunk records. */
export function playingChunkThroughputKbps(qoe: SessionQoE): number | null {
  if (typeof qoe.chunkThroughputKbps === 'number') return qoe.chunkThroughputKbps;
  return mean(qoe.chunks.filter((c) => c.phase === 'playing').map((c) => c.throughputKbps));
}

function h2Fraction(qoe: SessionQoE | null): number | null {
  const known = (qoe?.chunks ?? []).filter((c) => c.protocol !== undefined);
  return known.length === 0 ? null : known.filter((c) => c.protocol === 'h2').length / known.length;
}

export function videoMetrics(qoe: SessionQoE | null, rows: ResponseRow[], queue: QueueSample[], rateMbps: number): VideoMetrics {
  const withRtt = rows.filter((r) => r[2] > 0 && r[4] !== null).map((r) => r[4]!);
  const sent = rows.reduce((a, r) => a + (r[7] ?? 0), 0);
  const retrans = rows.reduce((a, r) => a + (r[6] ?? 0), 0);
  const rtps = (qoe?.chunks ?? []).filter((c) => c.phase === 'playing' && c.rtpKbps !== null).map((c) => c.rtpKbps!);
  const delay = mean(queue.map((q) => queueDelayMsOf(q, rateMbps)));
  const sammyCore = qoe !== null && ARM_REGISTRY[qoe.arm]?.bitrate === 'sammy';
  return {
    chunkThroughputKbps: qoe ? playingChunkThroughputKbps(qoe) : null,
    videoRttMs: mean(withRtt),
    retransPct: sent > 0 ? (100 * retrans) / sent : null,
    playDelayS: qoe?.playDelayS ?? null,
    rebufferCount: qoe?.rebufferCount ?? null,
    rebufferS: qoe?.rebufferS ?? null,
    avgBitrateKbps: qoe?.avgBitrateKbps ?? null,
    avgQuality: qoe?.avgQuality ?? null,
    queueDelayMs: delay,
    meanRtpKbps: mean(rtps),
    mediaErrors: qoe?.mediaErrors ?? null,
    abandonedChunks: sammyCore ? qoe.chunks.filter((c) => (c.abandonedBytes ?? 0) > 0).length : null,
    h2ChunkFraction: h2Fraction(qoe),
    guardRaisedChunks: rtps.length > 0 ? qoe!.chunks.filter((c) => c.rtpKbps !== null && c.appliedRateKbps !== null && c.appliedRateKbps > c.rtpKbps).length : null,
  };
}

/** Video throughput over time (Mbit/s per bin), spreading each response over its duration. */
export function throughputSeries(rows: ResponseRow[], binS = 0.5): Array<[number, number]> {
  const bins = new Map<number, number>();
  for (const [endS, , bytes, durationMs] of rows) {
    const startS = endS - durationMs / 1000;
    const spanS = Math.max(durationMs / 1000, 1e-6);
    for (let b = Math.floor(startS / binS); b * binS < endS; b++) {
      const overlap = Math.min(endS, (b + 1) * binS) - Math.max(startS, b * binS);
      if (overlap > 0) bins.set(b, (bins.get(b) ?? 0) + (bytes * overlap) / spanS);
    }
  }
  if (bins.size === 0) return [];
  const last = Math.max(...bins.keys());
  const out: Array<[number, number]> = [];
  for (let b = 0; b <= last; b++) out.push([round(b * binS, 3), round(((bins.get(b) ?? 0) * 8) / binS / 1e6, 3)]);
  return out;
}

/** Link throughput (Mbit/s) between queue samples, from the qdisc's sent bytes. */
export function linkThroughputSeries(queue: QueueSample[]): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  for (let i = 1; i < queue.length; i++) {
    const dt = (queue[i]![0] - queue[i - 1]![0]) / 1000;
    if (dt > 0) out.push([round(queue[i]![0] / 1000, 3), round(((queue[i]![3] - queue[i - 1]![3]) * 8) / dt / 1e6, 3)]);
  }
  return out;
}
