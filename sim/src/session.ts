/**
 * One simulated playback session: a deterministic network (a chunk arrives one
 * latency after its request, then at min(rtp, available bandwidth)), a player that
 * requests one video segment at a time while its buffer is below the arm's target,
 * and a playhead that starts once the first segment is buffered, stops when the buffer
 * runs dry and resumes when the next segment lands. The buffer follows thesis Eq. 2.2,
 * B_{t+1} = B_t + d_t - Delta_t, plus the time the playhead stood still. An arm may
 * abandon a download part-way (dash.js's AbandonRequestsRule) and fetch the segment at
 * another rung; Delta_t then runs from the first request.
 */
import type { SegmentsSidecar } from '@sammy/encoder/sidecar';
import { waitBeforeRequestS, type ArmPolicy, type SimArm } from './arms/types.js';
import { summarizeSession, type ChunkRecord, type Phase, type SessionQoE } from './core.js';
import { SimError } from './errors.js';
import { tileSidecar } from './ladder.js';
import { DEFAULT_NEIGHBOUR_MODEL, neighbourDelayQueues, neighbourLink, type Flow, type NeighbourModel } from './neighbour.js';
import { capacityKbits, latencyAtS, linkFilledS, transferEndS, type Trace } from './trace.js';
import { mean } from './stats.js';

/** A ChunkRecord with what the simulator also knows. */
export interface SimChunkRecord extends ChunkRecord {
  /** Session clock when the request went out. */
  requestS: number;
  /** Idle time just before the request (buffer full, or a BOLA delay). */
  waitS: number;
  /** Time the playhead stood still (before the first frame, or rebuffering) during the wait and the download. */
  stoppedS: number;
  /** SSIM of this segment at this rung, from segments.json. */
  ssim: number;
  /** Bytes of an abandoned download of this segment at another rung (dash.js AbandonRequestsRule); 0 if none. */
  abandonedBytes: number;
  /**
   * Seconds of this segment's downloads (an abandoned one included) that ran at the
   * link's full capacity, not held under it by the pace (trace.ts `linkFilledS`).
   */
  linkFilledS: number;
  /** When this segment's bytes flowed (an abandoned download first), at `rtpKbps`: what neighbour.ts scores. */
  flows: Array<{ fromS: number; toS: number }>;
}

/** Session-wide figures beyond SessionQoE. */
export interface SimSummary {
  trace: string;
  /** Media length of the session (whole segments). */
  mediaS: number;
  segmentCount: number;
  /** Last byte of the last segment. */
  lastArrivalS: number;
  /** Buffer right after the last segment landed (B_end). */
  bufferEndS: number;
  /** Total time with no request in flight. */
  idleS: number;
  /** Total time the playhead stood still before the last arrival (startup and rebuffers). */
  stoppedS: number;
  /** Mean, min and max rtp over playing-phase requests that carried one. */
  playingRtpKbps: { mean: number; min: number; max: number } | null;
  /**
   * Total seconds the video's downloads ran at the link's full capacity: what a
   * neighbour sharing a queued bottleneck would have waited behind (the simulator has
   * no queue; an unpaced download fills the link for all of its time).
   */
  linkFilledS: number;
  /**
   * The mean delay of a neighbour at NEIGHBOUR_MEAN_SHARE of the mean rate over the
   * session's length (to the last frame: the last arrival plus the buffer then, so a
   * player that keeps less buffer at the end is not credited with a longer session),
   * in full queues at the trace's mean rate (with a queue of 4 x BDP at 40 ms, 1 is
   * 160 ms), by the session's `neighbourModel` (neighbour.ts).
   */
  neighbourDelayQueues: number;
}

export interface SimSessionQoE extends Omit<SessionQoE, 'arm' | 'chunks'> {
  arm: SimArm;
  chunks: SimChunkRecord[];
  sim: SimSummary;
}

export interface SessionOptions {
  trace: Trace;
  sidecar: SegmentsSidecar;
  /** Builds the arm for the session's (tiled) ladder. */
  arm: (sidecar: SegmentsSidecar, contentDurationS: number) => ArmPolicy;
  /** Media to play, rounded up to whole segments; the encoded video loops if shorter. Default 600 s. */
  durationS?: number;
  /** Buffer needed for the first frame (and to resume after a rebuffer); default one segment. */
  startupBufferS?: number;
  /** How `sim.neighbourDelayQueues` is scored (neighbour.ts); default DEFAULT_NEIGHBOUR_MODEL. */
  neighbourModel?: NeighbourModel;
}

export const DEFAULT_SESSION_DURATION_S = 600;

/** How often a download in flight reports progress to the arm (dash.js sees fetch progress events). */
const PROGRESS_STEP_S = 0.1;

interface Download {
  rung: number;
  firstByteS: number;
  endS: number;
  sizeBytes: number;
}

export function simulateSession(options: SessionOptions): SimSessionQoE {
  const { trace } = options;
  const segmentS = options.sidecar.segmentDurationS;
  const durationS = options.durationS ?? DEFAULT_SESSION_DURATION_S;
  if (!(durationS > 0)) throw new SimError('SIM_BAD_ARGS', `--duration must be a positive number of seconds, got ${durationS}`);
  const count = Math.max(1, Math.ceil(durationS / segmentS - 1e-9));
  const sidecar = tileSidecar(options.sidecar, count);
  const policy = options.arm(sidecar, count * segmentS);
  const startupBufferS = Math.min(options.startupBufferS ?? segmentS, count * segmentS);
  const reps = sidecar.representations;

  let t = 0;
  let bufferS = 0;
  let started = false;
  let stalled = false;
  let playDelayS: number | null = null;
  let rebufferCount = 0;
  let rebufferS = 0;
  let idleS = 0;
  let stoppedS = 0;
  let stoppedThisChunkS = 0;

  /** Time passes with no arrival: the playhead plays the buffer down, or stands still. */
  const advance = (dt: number): void => {
    if (dt <= 0) return;
    if (started && !stalled && bufferS >= dt) {
      bufferS -= dt;
      t += dt;
      return;
    }
    let stillS = dt;
    if (started && !stalled) {
      // The buffer runs dry part-way: a rebuffer starts.
      t += bufferS;
      stillS = dt - bufferS;
      bufferS = 0;
      stalled = true;
      rebufferCount += 1;
      policy.onStall?.(t);
    }
    if (stalled) rebufferS += stillS;
    stoppedS += stillS;
    stoppedThisChunkS += stillS;
    t += stillS;
  };

  /** The rtp of the request being made (the decision's). */
  let rtpKbps: number | null = null;
  /** A request for segment `index` at `rung` sent at `atS`. */
  const startDownload = (rung: number, index: number, atS: number): Download => {
    const rep = reps[rung];
    if (!rep || !Number.isInteger(rung)) throw new SimError('SIM_BAD_DECISION', `${policy.arm} chose rung ${rung}; the ladder has ${reps.length}`);
    const firstByteS = atS + latencyAtS(trace, atS);
    const sizeBytes = rep.segmentSizesBytes[index]!;
    return { rung, firstByteS, sizeBytes, endS: transferEndS(trace, firstByteS, (sizeBytes * 8) / 1000, rtpKbps) };
  };
  /** The first progress event (every PROGRESS_STEP_S from the first byte) at which the arm abandons, or null. */
  const progressCheck = (onProgress: NonNullable<ArmPolicy['onProgress']>, d: Download, index: number, bufferAtRequestS: number, requestS: number) => {
    for (let atS = d.firstByteS + PROGRESS_STEP_S; atS < d.endS; atS += PROGRESS_STEP_S) {
      const loadedBytes = (capacityKbits(trace, d.firstByteS, atS, rtpKbps) * 1000) / 8;
      // The buffer drains while the playhead runs (it stands still before startup and in a rebuffer).
      const playing = started && !stalled;
      const bufferNowS = playing ? Math.max(0, bufferAtRequestS - (atS - requestS)) : bufferAtRequestS;
      const next = onProgress({ index, rung: d.rung, sizeBytes: d.sizeBytes, loadedBytes, sinceFirstByteS: atS - d.firstByteS, sinceRequestS: atS - requestS, nowS: atS, bufferS: bufferNowS });
      if (next !== null && next !== d.rung) return { atS, rung: next, loadedBytes };
    }
    return null;
  };

  const chunks: SimChunkRecord[] = [];
  let lastRung = -1;
  for (let index = 0; index < count; index++) {
    stoppedThisChunkS = 0;
    let waitS = 0;
    if (started && lastRung >= 0) {
      const fullS = waitBeforeRequestS(policy, lastRung, bufferS, segmentS);
      advance(fullS);
      waitS += fullS;
    }
    const decision = policy.decide({ nowS: t, index, bufferS, started, stalled });
    if (decision.delayS !== undefined && decision.delayS > 0) {
      advance(decision.delayS);
      waitS += decision.delayS;
    }
    idleS += waitS;
    rtpKbps = decision.rtpKbps;
    let rung = decision.rung;
    const phase: Phase = decision.phase ?? (started ? 'playing' : 'initial');
    const bufferBeforeS = bufferS;
    const requestS = t;
    let download = startDownload(rung, index, t);
    let abandonedBytes = 0;
    let filledS = 0;
    const flows: SimChunkRecord['flows'] = [];
    // dash.js's AbandonRequestsRule: the arm may give up a download part-way and fetch the
    // same segment again at another rung (once per segment, as dash.js does).
    const abandon = policy.onProgress ? progressCheck((p) => policy.onProgress!(p), download, index, bufferS, t) : null;
    if (abandon !== null) {
      abandonedBytes = abandon.loadedBytes;
      filledS += linkFilledS(trace, download.firstByteS, abandon.atS, rtpKbps);
      flows.push({ fromS: download.firstByteS, toS: abandon.atS });
      advance(abandon.atS - t);
      t = abandon.atS;
      rung = abandon.rung;
      download = startDownload(rung, index, t);
    }
    const { firstByteS, endS, sizeBytes } = download;
    const rep = reps[rung]!;
    advance(endS - t);
    t = endS;
    const bufferAtEndS = bufferS;
    bufferS += segmentS;
    const last = index === count - 1;
    const downloadS = endS - requestS;
    const record: SimChunkRecord = {
      index,
      rung,
      bitrateKbps: rep.bitrateKbps,
      sizeBytes,
      downloadS,
      throughputKbps: (sizeBytes * 8) / 1000 / downloadS,
      phase,
      rtpKbps: decision.rtpKbps,
      appliedRateKbps: null,
      bufferBeforeS,
      bufferAfterS: bufferS,
      requestS,
      waitS,
      stoppedS: stoppedThisChunkS,
      ssim: rep.ssim[index]!,
      abandonedBytes,
      linkFilledS: filledS + linkFilledS(trace, firstByteS, endS, rtpKbps),
      flows: [...flows, { fromS: firstByteS, toS: endS }],
    };
    chunks.push(record);
    lastRung = rung;
    policy.onChunk({
      index,
      rung,
      sizeBytes,
      durationS: segmentS,
      phase,
      rtpKbps: decision.rtpKbps,
      // The player measures the request it completed: after an abandonment, the second one.
      requestS: abandon?.atS ?? requestS,
      firstByteS,
      endS,
      bufferAtEndS,
      bufferAfterS: bufferS,
    });
    // With no more data to come, the player plays what it has.
    if (!started && (bufferS >= startupBufferS - 1e-9 || last)) {
      started = true;
      playDelayS = t;
      policy.onPlaybackStart?.(t);
    } else if (stalled && (bufferS >= startupBufferS - 1e-9 || last)) {
      stalled = false;
    }
  }

  const neighbourModel = options.neighbourModel ?? DEFAULT_NEIGHBOUR_MODEL;
  const config = {
    arm: policy.arm,
    trace: trace.name,
    traceFormat: trace.format,
    durationS: count * segmentS,
    startupBufferS,
    segmentDurationS: segmentS,
    ladderKbps: reps.map((r) => r.bitrateKbps),
    neighbourModel,
    ...policy.config,
  };
  return summarize(policy, trace, sidecar, chunks, config, {
    playDelayS,
    rebufferCount,
    rebufferS,
    idleS,
    stoppedS,
    segmentS,
    lastArrivalS: t,
    bufferEndS: bufferS,
    neighbourModel,
  });
}

interface Totals {
  playDelayS: number | null;
  rebufferCount: number;
  rebufferS: number;
  idleS: number;
  stoppedS: number;
  segmentS: number;
  lastArrivalS: number;
  bufferEndS: number;
  neighbourModel: NeighbourModel;
}

function summarize(
  policy: ArmPolicy,
  trace: Trace,
  sidecar: SegmentsSidecar,
  chunks: SimChunkRecord[],
  config: Record<string, unknown>,
  totals: Totals,
): SimSessionQoE {
  const mediaS = chunks.length * totals.segmentS;
  // The player's own summary (@sammy/player/abr), so simulated and browser sessions are
  // aggregated by the same code. The session plays to the end: all media is played.
  const qoe = summarizeSession({
    arm: 'control', // passed through only; replaced by the simulator's arm below
    config,
    chunks,
    segmentDurationS: totals.segmentS,
    ssim: sidecar.representations.map((r) => r.ssim),
    playDelayS: totals.playDelayS,
    rebufferCount: totals.rebufferCount,
    rebufferS: totals.rebufferS,
    playedRanges: [[0, mediaS]],
  });
  const endS = totals.lastArrivalS + totals.bufferEndS;
  const rtps = chunks.filter((c) => c.phase === 'playing' && c.rtpKbps !== null).map((c) => c.rtpKbps!);
  return {
    ...qoe,
    arm: policy.arm,
    chunks,
    sim: {
      trace: trace.name,
      mediaS,
      segmentCount: chunks.length,
      lastArrivalS: totals.lastArrivalS,
      bufferEndS: totals.bufferEndS,
      idleS: totals.idleS,
      stoppedS: totals.stoppedS,
      playingRtpKbps: rtps.length === 0 ? null : { mean: mean(rtps)!, min: Math.min(...rtps), max: Math.max(...rtps) },
      linkFilledS: chunks.reduce((s, c) => s + c.linkFilledS, 0),
      neighbourDelayQueues: endS > 0 ? neighbourDelayQueues(neighbourLink(trace), sessionFlows(chunks), 0, endS, totals.neighbourModel) : 0,
    },
  };
}

/** A session's downloads in time order, each at its chunk's rtp: what neighbour.ts scores. */
export function sessionFlows(chunks: readonly SimChunkRecord[]): Flow[] {
  return chunks.flatMap((c) => c.flows.map((f) => ({ ...f, capKbps: c.rtpKbps })));
}
