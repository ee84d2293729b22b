/**
 * One playback of one arm, whichever web player plays it (dash.js, Shaka, hls.js): what
 * the players' adapters share once a source is playing. The adapters are thin: they
 * translate their player's hooks into the calls below, so the three players send the
 * same rtp for the same state and record the same SessionQoE.
 *
 * It is responsible for:
 *   1. The core's session for arms whose bitrate is Sammy's (with the segment sizes),
 *      and its decisions: `decide()` before a video chunk is chosen.
 *   2. The QoE collector on the video element, with the phase events (first frame,
 *      seek, stall) wired into the core.
 *   3. `onRequest()`: the arm's rtp on a segment request (`CMCD-Status`, after the
 *      player's own CMCD step) with the `tb` it was computed from, the list of requests
 *      as sent, and what the response step needs for a video chunk.
 *   4. `onResponse()`: one ChunkRecord per video chunk (bytes, download time from
 *      Resource Timing, the rtp sent, the rate the server applied from Server-Timing)
 *      and the core's throughput sample.
 */
import { DEFAULT_SEGMENT_DURATION_S, type SegmentsSidecar } from '@sammy/encoder/sidecar';
import { ARM_REGISTRY, type Arm, type PlayerName, type RtpChoice } from '../abr/arms/index.js';
import { pickSammyConfig } from '../abr/config.js';
import type { InitialThroughputHistory } from '../abr/history.js';
import { ladderFromSidecar, topRung, type Ladder } from '../abr/ladder.js';
import type { ChunkRecord, Phase } from '../abr/records.js';
import { SammySession, type Decision } from '../abr/session.js';
import { brOf, rtpOf, withDeclaredFloor, withRtp, withTb } from './cmcd-status.js';
import type { SentRequest } from './options.js';
import { armParam, type PlayerConfig } from './player-config.js';
import { QoeCollector } from './qoe-collector.js';
import { resourceTiming, type ChunkTiming } from './resource-timing.js';
import { appliedRateKbps } from './server-timing.js';

/**
 * Above this a chunk's measured rate is no link's (a cached answer timed by a player
 * that cannot tell): 10 Gbit/s, faster than loopback chunks measure here (under 0.1 Gbit/s).
 */
export const MAX_LINK_KBPS = 10_000_000;

/** Why a chunk did not cross the network, or null when it did (or nothing says otherwise). */
export function notFromNetworkReason(timing: ChunkTiming | null, sizeBytes: number, downloadS: number): ChunkRecord['notFromNetwork'] | null {
  if (timing?.fromCache === true) return 'browser-cache';
  if (!(downloadS > 0) || (sizeBytes * 8) / 1000 / downloadS > MAX_LINK_KBPS) return 'implausible-timing';
  return null;
}

export interface PlaybackOptions {
  video: HTMLVideoElement;
  /** The manifest (an MPD, or an HLS multivariant playlist), when the player said which. */
  manifestUrl: string | null;
  arm: Arm;
  config: PlayerConfig;
  /** The segment sizes (segments.json); the `sammy` arm's core needs them, every arm gets its SSIM from them. */
  sidecar: SegmentsSidecar | null;
  history: InitialThroughputHistory;
  /** When play was requested (`performance.now()` clock); null: now. */
  playRequestedMs: number | null;
  log: (message: string, err?: unknown) => void;
  onChunk: (record: ChunkRecord) => void;
}

export type SegmentType = 'MediaSegment' | 'InitializationSegment';

/** A segment request as an adapter describes it. */
export interface SegmentRequest {
  url: string;
  mediaType: 'video' | 'audio' | string;
  type: SegmentType;
  /** The rung the player requests, if it says (the URL's `chunk-<rung>-<n>` is read first). */
  rung?: number | null;
  /** The rendition's nominal bitrate as the player knows it, for arms without the segment sizes. */
  bitrateKbps?: number | null;
}

/** What the request step hands to the response step for a video chunk. */
export interface ChunkRequest {
  index: number;
  rung: number;
  bitrateKbps: number | null;
  phase: Phase;
  rtpKbps: number | null;
  bufferBeforeS: number;
  requestS: number;
  startMs: number;
  paceFloorKbps: number | null;
  reason: string | undefined;
  url: string;
}

/** A finished response as an adapter describes it. */
export interface SegmentResponse {
  status: number;
  sizeBytes: number;
  /** The player's own timing of the download (ms), used when Resource Timing has no entry. */
  playerDownloadMs?: number | null;
  serverTiming: string | null;
}

const CHUNK_PATH = /chunk-(\d+)-(\d+)\.m4s(?:$|\?)/;
const now = (): number => performance.now();

export function pathOf(url: string): string {
  try {
    return new URL(url, 'http://x/').pathname;
  } catch {
    return url;
  }
}

/** `chunk-<rung>-<number>.m4s` (the encoder's names) -> rung and 0-based index. */
export function chunkOf(url: string): { rung: number; index: number } | null {
  const m = CHUNK_PATH.exec(pathOf(url));
  return m ? { rung: Number(m[1]), index: Number(m[2]) - 1 } : null;
}

export function byteLength(data: unknown): number {
  if (data instanceof ArrayBuffer) return data.byteLength;
  if (ArrayBuffer.isView(data)) return data.byteLength;
  return 0;
}

/** Seconds of media buffered ahead of `t` in `ranges` (the range holding `t`, within a small gap). */
export function bufferedAheadS(ranges: readonly { start: number; end: number }[], t: number): number {
  const r = ranges.find((x) => x.start <= t + 0.1 && x.end > t);
  return r ? r.end - t : 0;
}

export class PlaybackCore {
  readonly ladder: Ladder | null;
  /** The core's session (arms whose bitrate is Sammy's, with the segment sizes). */
  readonly session: SammySession | null;
  readonly segmentDurationS: number;
  readonly collector: QoeCollector;
  private readonly sammyBitrate: boolean;
  /** The highest rung the player allows now (a bitrate cap lowers it). */
  private maxRung: number;
  private readonly sent: SentRequest[] = [];
  /** The core's decision per video segment index, for the chunk record's reason. */
  private readonly decisions = new Map<number, Decision>();
  private lastVideoIndex: number | null = null;
  /** Bytes of a video request the stalled-download rule gave up, per segment index, until the refetch's record. */
  private readonly abandonedBytes = new Map<number, number>();
  /** When each video media request in flight was sent (its URL; removed at its response or when it is given up). */
  private readonly inFlightMs = new Map<string, number>();

  /**
   * @param videoBufferS the player's video buffer ahead of the playhead (what the pace is computed from)
   * @param playerTopKbps the highest video bitrate the player offers, for arms without the segment sizes
   */
  constructor(
    private readonly o: PlaybackOptions,
    readonly player: PlayerName,
    private readonly videoBufferS: () => number,
    private readonly playerTopKbps: () => number,
  ) {
    this.ladder = o.sidecar ? ladderFromSidecar(o.sidecar) : null;
    this.sammyBitrate = ARM_REGISTRY[o.arm].bitrate === 'sammy';
    this.session = this.sammyBitrate && this.ladder ? new SammySession({ ladder: this.ladder, config: pickSammyConfig(o.config), history: o.history }) : null;
    this.segmentDurationS = o.sidecar?.segmentDurationS ?? DEFAULT_SEGMENT_DURATION_S;
    this.maxRung = this.ladder ? topRung(this.ladder) : 0;
    this.collector = this.makeCollector();
    this.collector.playRequested(o.playRequestedMs ?? undefined);
  }

  /** The full parameter set recorded with a session (also before one starts). */
  static qoeConfig(player: PlayerName, arm: Arm, manifestUrl: string | null, config: PlayerConfig): Record<string, unknown> {
    return { player, arm, manifest: manifestUrl, ...config };
  }

  private makeCollector(): QoeCollector {
    const { o, session } = this;
    const info = { arm: o.arm, config: PlaybackCore.qoeConfig(this.player, o.arm, o.manifestUrl, o.config), segmentDurationS: this.segmentDurationS, ssim: o.sidecar?.representations.map((r) => r.ssim) ?? null };
    return new QoeCollector(o.video, now, info, {
      frame: () => {
        const recorded = session?.firstFrame() ?? null;
        if (recorded !== null) o.log(`initial-phase throughput ${Math.round(recorded)} kbps recorded in the history`);
      },
      seek: () => {
        session?.seek();
        // A seek restarts the segment count from the playhead.
        this.lastVideoIndex = null;
      },
      rebuffer: () => session?.rebuffer(),
    });
  }

  requests(): readonly SentRequest[] {
    return this.sent;
  }

  bufferS(): number {
    const b = this.videoBufferS();
    return Number.isFinite(b) && b > 0 ? b : 0;
  }

  /** The index of the next video segment: after the last one requested, else at the playhead. */
  nextVideoIndex(): number {
    return this.lastVideoIndex !== null ? this.lastVideoIndex + 1 : Math.floor(this.o.video.currentTime / this.segmentDurationS + 1e-6);
  }

  private topKbps(): number {
    return this.ladder ? this.ladder.bitratesKbps[this.maxRung]! : this.playerTopKbps();
  }

  /** The core's decision for the first chunk (buffer empty), which players fetch before asking any rule; null without the core. */
  firstDecision(): Decision | null {
    const d = this.session?.decide({ bufferS: 0, segmentIndex: 0 }) ?? null;
    if (d) this.decisions.set(0, d);
    return d;
  }

  /**
   * The core's rung for the next video segment, with `allowedMaxRung` the highest the
   * player allows, at `bufferS` (default: the buffer now); null without the core.
   */
  decide(allowedMaxRung: number, bufferS: number = this.bufferS()): { rung: number; reason: string } | null {
    if (!this.session) return null;
    this.maxRung = allowedMaxRung;
    const segmentIndex = this.nextVideoIndex();
    const d = this.session.decide({ bufferS, segmentIndex, maxRung: allowedMaxRung });
    this.decisions.set(segmentIndex, d);
    return { rung: d.rung, reason: d.reason };
  }

  /**
   * A video chunk in flight (the core's stalled-download rule, abr/stall.ts), with the
   * bytes it has received: the rung to give it up for, or null to let it run (also
   * without the core, for a URL that is not a chunk or was not sent through onRequest,
   * or once the rule has acted on the segment). The time since the request is this
   * step's own clock, from onRequest.
   */
  checkDownload(url: string, loadedBytes: number): { rung: number; reason: string } | null {
    const chunk = chunkOf(url);
    const sentMs = this.inFlightMs.get(url);
    if (!this.session || !chunk || sentMs === undefined) return null;
    const elapsedS = (now() - sentMs) / 1000;
    const verdict = this.session.checkDownload({ segmentIndex: chunk.index, rung: chunk.rung, loadedBytes, elapsedS, bufferS: this.bufferS() });
    if (verdict === null) return null;
    this.inFlightMs.delete(url);
    this.abandonedBytes.set(chunk.index, loadedBytes);
    // The refetch's record says why it is at this rung: the rule's verdict, not the decision it overrode.
    const decision = this.decisions.get(chunk.index);
    if (decision) this.decisions.set(chunk.index, { ...decision, rung: verdict.rung, reason: verdict.reason });
    this.o.log(verdict.reason);
    return { rung: verdict.rung, reason: verdict.reason };
  }

  /** The arm's rtp for a segment request (the request untouched while Sammy's bitrate runs without its core). */
  private rtpChoice(bufferS: number, segmentIndex: number): RtpChoice {
    if (this.sammyBitrate && !this.session) return 'keep';
    return ARM_REGISTRY[this.o.arm].playerRtp({
      session: this.session,
      bufferS,
      segmentIndex,
      maxRung: this.maxRung,
      topKbps: () => this.topKbps(),
      param: (name) => armParam(this.o.config, name),
    });
  }

  /**
   * The top bitrate of the request's media type (video: the highest rung allowed now;
   * audio: the audio's), sent as `tb` with an rtp we set: the top the rtp was computed
   * from, which a server's spiral guard without `sammy-floor` floors the pace at a
   * multiple of. Never below the `br` the player wrote on the same request (CTA-5004: the
   * object's bitrate is one of those `tb` tops): hls.js writes the playlist's BANDWIDTH,
   * a peak above the nominal bitrates the ladder holds, and on audio the variant's.
   */
  private tbKbps(mediaType: string, playerBrKbps: number | null): number | null {
    const kbps = mediaType === 'video' ? this.topKbps() : mediaType === 'audio' ? (this.o.sidecar?.audio?.bitrateKbps ?? null) : null;
    const top = Math.max(kbps ?? 0, playerBrKbps ?? 0);
    return top > 0 ? Math.round(top) : null;
  }

  /**
   * A segment request leaves the player: returns its headers with the arm's rtp in
   * `CMCD-Status` (untouched for `keep`), and, for a video media segment, what the
   * response step needs.
   */
  onRequest(req: SegmentRequest, headers: Record<string, string> | undefined): { headers: Record<string, string> | undefined; chunk: ChunkRequest | null } {
    const chunk = chunkOf(req.url);
    const segmentIndex = chunk ? chunk.index : this.nextVideoIndex();
    const bufferBeforeS = this.bufferS();
    const phase = this.collector.phase;
    const choice = this.rtpChoice(bufferBeforeS, segmentIndex);
    let out = headers;
    if (choice !== 'keep') {
      out = withDeclaredFloor(withRtp(out, choice.rtpKbps), choice.declaredFloorKbps);
      const tb = choice.rtpKbps === null ? null : this.tbKbps(req.mediaType, brOf(out));
      if (tb !== null) out = withTb(out, tb);
    }
    const rtpKbps = rtpOf(out);
    const requestS = this.collector.sinceStartS() ?? 0;
    this.sent.push({ path: pathOf(req.url), mediaType: req.mediaType, type: req.type, phase, rtpKbps, t: requestS });
    if (req.mediaType !== 'video' || req.type !== 'MediaSegment') return { headers: out, chunk: null };
    this.lastVideoIndex = segmentIndex;
    const startMs = now();
    if (this.session) this.inFlightMs.set(req.url, startMs);
    const rung = chunk ? chunk.rung : Number(req.rung);
    return {
      headers: out,
      chunk: {
        index: segmentIndex,
        rung,
        bitrateKbps: this.ladder?.bitratesKbps[rung] ?? req.bitrateKbps ?? null,
        phase,
        rtpKbps,
        bufferBeforeS,
        requestS,
        startMs,
        paceFloorKbps: choice === 'keep' ? null : choice.floorKbps,
        reason: this.decisions.get(segmentIndex)?.reason,
        url: req.url,
      },
    };
  }

  /** A video chunk's response: its record and the core's throughput sample (null for a failed or empty response). */
  onResponse(req: ChunkRequest, resp: SegmentResponse): ChunkRecord | null {
    this.inFlightMs.delete(req.url);
    const { sizeBytes } = resp;
    if (sizeBytes <= 0 || resp.status < 200 || resp.status >= 300) return null;
    const playerMs = resp.playerDownloadMs;
    const timing = resourceTiming(req.url);
    const downloadS = timing?.downloadS ?? (typeof playerMs === 'number' && playerMs > 0 ? playerMs : now() - req.startMs) / 1000;
    const notFromNetwork = notFromNetworkReason(timing, sizeBytes, downloadS);
    const record: ChunkRecord = {
      index: req.index,
      rung: req.rung,
      bitrateKbps: req.bitrateKbps ?? 0,
      sizeBytes,
      downloadS,
      throughputKbps: (sizeBytes * 8) / 1000 / downloadS,
      phase: req.phase,
      rtpKbps: req.rtpKbps,
      // A cached answer replays the Server-Timing of the fetch that filled the cache.
      appliedRateKbps: notFromNetwork ? null : appliedRateKbps(resp.serverTiming),
      bufferBeforeS: req.bufferBeforeS,
      // Eq. 2.2: the buffer when the chunk arrived, plus the chunk (not yet appended).
      bufferAfterS: this.bufferS() + this.segmentDurationS,
      requestS: req.requestS,
      paceFloorKbps: req.paceFloorKbps,
      ...(req.reason === undefined ? {} : { reason: req.reason }),
      ...(this.abandonedBytes.has(req.index) ? { abandonedBytes: this.abandonedBytes.get(req.index)! } : {}),
      ...(notFromNetwork ? { notFromNetwork } : {}),
      ...(timing?.protocol ? { protocol: timing.protocol } : {}),
    };
    this.abandonedBytes.delete(req.index);
    // The estimate and the history are of the link: a chunk that never crossed it says nothing of it.
    if (!notFromNetwork) this.session?.addSample({ sizeBytes, downloadS, phase: req.phase, rtpKbps: req.rtpKbps, firstByteS: timing?.firstByteS ?? null });
    this.collector.addChunk(record);
    this.o.onChunk(record);
    return record;
  }
}

/** Runs `step`; a failure logs and returns `fallback`, so nothing throws into a player. */
export function guarded<T>(log: (message: string, err?: unknown) => void, what: string, fallback: T, step: () => T): T {
  try {
    return step();
  } catch (err) {
    log(what, err);
    return fallback;
  }
}
