/**
 * What every player adapter shares: one playback of one arm, whichever web player
 * plays it (dash.js, Shaka, hls.js). The adapters are thin: they translate their
 * player's hooks into the calls below, and this object holds the rest, so the three
 * players send the same rtp for the same state and record the same SessionQoE.
 *
 * It is responsible for:
 *   1. The core's session for arms whose bitrate is Sammy's (they need segments.json),
 *      and its decisions: `decide()` before a video chunk is chosen.
 *   2. The QoE collector on the video element, with the phase events (first frame,
 *      seek, stall) wired into the core.
 *   3. `onRequest()`: the arm's rtp on a segment request (`CMCD-Status`, after the
 *      player's own CMCD step), the list of requests as sent, and what the response
 *      step needs for a video chunk.
 *   4. `onResponse()`: one ChunkRecord per video chunk (bytes, download time from
 *      Resource Timing, the rtp sent, the rate the server applied from Server-Timing)
 *      and the core's throughput sample.
 */
import { DEFAULT_SEGMENT_DURATION_S, type SegmentsSidecar } from '@sammy/encoder/sidecar';
import { ARM_REGISTRY, type Arm, type PlayerName, type RtpChoice } from '../abr/arms/index.js';
import { pickSammyConfig } from '../abr/config.js';
import type { InitialThroughputHistory } from '../abr/history.js';
import { ladderFromSidecar, topRung, type Ladder } from '../abr/ladder.js';
import type { ChunkRecord, Phase, SessionQoE } from '../abr/records.js';
import { SammySession, type Decision } from '../abr/session.js';
import { rtpOf, withRtp } from './cmcd-status.js';
import { armParam, type PlayerConfig } from './player-config.js';
import { QoeCollector } from './qoe-collector.js';
import { appliedRateKbps } from './server-timing.js';

export interface PlaybackOptions {
  video: HTMLVideoElement;
  /** The manifest: an MPD for dash.js and Shaka, a multivariant playlist for hls.js. */
  manifestUrl: string;
  arm: Arm;
  config: PlayerConfig;
  /** segments.json; required by `sammy`, and gives every arm its SSIM. */
  sidecar: SegmentsSidecar | null;
  history: InitialThroughputHistory;
  /** Clock in ms (default `performance.now`). */
  now?: () => number;
  /** When play was requested, on `now`'s clock (default: the call); the page passes the click, before it fetched segments.json. */
  playRequestedMs?: number;
  log?: (message: string, err?: unknown) => void;
  onChunk?: (record: ChunkRecord) => void;
}

/** One segment request as sent (video and audio, media and init), for the page and tests. */
export interface SentRequest {
  path: string;
  mediaType: string;
  type: string;
  phase: Phase;
  rtpKbps: number | null;
  /** Seconds since the play request. */
  t: number;
}

/** What the page drives, whichever player plays. */
export interface Playback {
  readonly arm: Arm;
  readonly player: PlayerName;
  /** The core's session (`sammy` only). */
  readonly session: SammySession | null;
  readonly collector: QoeCollector;
  qoe(): SessionQoE;
  requests(): readonly SentRequest[];
  /** The video buffered ahead of the playhead, as the player sees it. */
  bufferS(): number;
  destroy(): void;
}

export type SegmentType = 'MediaSegment' | 'InitializationSegment';

/** A segment request as an adapter describes it. */
export interface SegmentRequest {
  url: string;
  mediaType: 'video' | 'audio' | string;
  type: SegmentType;
  /** The rung the player requests, if it says (the URL's `chunk-<rung>-<n>` is read first). */
  rung?: number | null;
  /** The rendition's nominal bitrate as the player knows it, for arms without segments.json. */
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

/**
 * The chunk's network time from the Resource Timing API: request sent to last byte.
 * Players time from before `send()` to their load event, which a busy main thread
 * delays (on loopback at startup it tripled a chunk's time); null when the entry is
 * not there.
 */
export function resourceTimingS(url: string): number | null {
  if (typeof performance === 'undefined' || typeof performance.getEntriesByName !== 'function') return null;
  const entries = performance.getEntriesByName(new URL(url, location.href).href, 'resource') as PerformanceResourceTiming[];
  const e = entries.at(-1);
  if (!e || e.responseEnd <= 0) return null;
  const start = e.requestStart > 0 ? e.requestStart : e.startTime;
  const ms = e.responseEnd - start;
  return ms > 0 ? ms / 1000 : null;
}

/** Seconds of media buffered ahead of `t` in `ranges` (the range holding `t`, within a small gap). */
export function bufferedAheadS(ranges: { start: number; end: number }[], t: number): number {
  const r = ranges.find((x) => x.start <= t + 0.1 && x.end > t);
  return r ? r.end - t : 0;
}

export class PlaybackCore {
  readonly o: PlaybackOptions;
  readonly now: () => number;
  readonly log: (message: string, err?: unknown) => void;
  readonly ladder: Ladder | null;
  readonly session: SammySession | null;
  readonly segmentDurationS: number;
  readonly collector: QoeCollector;
  /** The highest rung the player allows now (a bitrate cap lowers it). */
  maxRung: number;
  private readonly sent: SentRequest[] = [];
  /** The core's decision per video segment index, for the chunk record's reason. */
  private readonly decisions = new Map<number, Decision>();
  private lastVideoIndex: number | null = null;

  /**
   * @param videoBufferS the player's video buffer ahead of the playhead (what the pace is computed from)
   * @param playerTopKbps the highest bitrate the player offers, for arms without segments.json
   */
  constructor(
    o: PlaybackOptions,
    readonly player: PlayerName,
    private readonly videoBufferS: () => number,
    private readonly playerTopKbps: () => number,
  ) {
    this.o = o;
    this.now = o.now ?? (() => performance.now());
    this.log = o.log ?? ((m: string, err?: unknown) => console.warn(`[sammy] ${m}`, err ?? ''));
    this.ladder = o.sidecar ? ladderFromSidecar(o.sidecar) : null;
    this.session = this.coreSession();
    this.segmentDurationS = o.sidecar?.segmentDurationS ?? DEFAULT_SEGMENT_DURATION_S;
    this.maxRung = this.ladder ? topRung(this.ladder) : 0;
    this.collector = this.makeCollector();
  }

  /** The core's session, for arms whose bitrate the Sammy core picks; they need segments.json. */
  private coreSession(): SammySession | null {
    if (ARM_REGISTRY[this.o.arm].bitrate !== 'sammy') return null;
    if (!this.ladder) throw new Error(`the ${this.o.arm} arm needs segments.json next to the manifest`);
    return new SammySession({ ladder: this.ladder, config: pickSammyConfig(this.o.config), history: this.o.history });
  }

  private makeCollector(): QoeCollector {
    const { o, session } = this;
    const config = { player: this.player, arm: o.arm, manifest: o.manifestUrl, ...o.config } as Record<string, unknown>;
    const ssim = o.sidecar?.representations.map((r) => r.ssim) ?? null;
    return new QoeCollector(o.video, this.now, { arm: o.arm, config, segmentDurationS: this.segmentDurationS, ssim }, {
      frame: () => {
        const recorded = session?.firstFrame() ?? null;
        if (recorded !== null) this.log(`initial-phase throughput ${Math.round(recorded)} kbps recorded in the history`);
      },
      seek: () => {
        session?.seek();
        // A seek restarts the segment count from the playhead.
        this.lastVideoIndex = null;
      },
      rebuffer: () => session?.rebuffer(),
    });
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

  /** The core's decision for the first chunk (buffer empty), which players fetch before asking any rule. */
  firstDecision(): Decision | null {
    const d = this.session?.decide({ bufferS: 0, segmentIndex: 0 }) ?? null;
    if (d) this.decisions.set(0, d);
    return d;
  }

  /** The core's rung for the next video segment, at the current buffer, with `allowedMaxRung` the highest the player allows. */
  decide(allowedMaxRung: number, bufferS: number = this.bufferS()): { rung: number; reason: string; segmentIndex: number } {
    if (!this.session) throw new Error(`the ${this.o.arm} arm has no core session`);
    this.maxRung = allowedMaxRung;
    const segmentIndex = this.nextVideoIndex();
    const d = this.session.decide({ bufferS, segmentIndex, maxRung: allowedMaxRung });
    this.decisions.set(segmentIndex, d);
    return { rung: d.rung, reason: d.reason, segmentIndex };
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
    const choice: RtpChoice = ARM_REGISTRY[this.o.arm].playerRtp({
      session: this.session,
      bufferS: bufferBeforeS,
      segmentIndex,
      maxRung: this.maxRung,
      topKbps: () => this.topKbps(),
      rtpRoundingKbps: this.o.config.rtpRoundingKbps,
      param: (name) => armParam(this.o.config, name),
    });
    const out = choice === 'keep' ? headers : withRtp(headers, choice.rtpKbps);
    const rtpKbps = rtpOf(out);
    const requestS = this.collector.sinceStartS() ?? 0;
    this.sent.push({ path: pathOf(req.url), mediaType: req.mediaType, type: req.type, phase, rtpKbps, t: requestS });
    if (req.mediaType !== 'video' || req.type !== 'MediaSegment') return { headers: out, chunk: null };
    this.lastVideoIndex = segmentIndex;
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
        startMs: this.now(),
        paceFloorKbps: choice === 'keep' ? null : choice.floorKbps,
        reason: this.decisions.get(segmentIndex)?.reason,
        url: req.url,
      },
    };
  }

  /** A video chunk's response: its record and the core's throughput sample (null for a failed or empty response). */
  onResponse(req: ChunkRequest, resp: SegmentResponse): ChunkRecord | null {
    const { sizeBytes } = resp;
    if (sizeBytes <= 0 || resp.status < 200 || resp.status >= 300) return null;
    const playerMs = resp.playerDownloadMs;
    const downloadS = resourceTimingS(req.url) ?? (typeof playerMs === 'number' && playerMs > 0 ? playerMs : this.now() - req.startMs) / 1000;
    const record: ChunkRecord = {
      index: req.index,
      rung: req.rung,
      bitrateKbps: req.bitrateKbps ?? 0,
      sizeBytes,
      downloadS,
      throughputKbps: (sizeBytes * 8) / 1000 / downloadS,
      phase: req.phase,
      rtpKbps: req.rtpKbps,
      appliedRateKbps: appliedRateKbps(resp.serverTiming),
      bufferBeforeS: req.bufferBeforeS,
      // Eq. 2.2: the buffer when the chunk arrived, plus the chunk (not yet appended).
      bufferAfterS: this.bufferS() + this.segmentDurationS,
      requestS: req.requestS,
      paceFloorKbps: req.paceFloorKbps,
      ...(req.reason === undefined ? {} : { reason: req.reason }),
    };
    this.session?.addSample({ sizeBytes, downloadS, phase: req.phase });
    this.collector.addChunk(record);
    this.o.onChunk?.(record);
    return record;
  }

  /** The play request: the play delay counts from here. Resource Timing keeps 250 entries by default; a long session makes more. */
  start(): void {
    if (typeof performance !== 'undefined' && typeof performance.setResourceTimingBufferSize === 'function') performance.setResourceTimingBufferSize(100_000);
    this.collector.playRequested(this.o.playRequestedMs);
  }

  /** The page's handle, with the adapter's own teardown. */
  playback(destroy: () => void): Playback {
    return {
      arm: this.o.arm,
      player: this.player,
      session: this.session,
      collector: this.collector,
      qoe: () => this.collector.qoe(),
      requests: () => this.sent,
      bufferS: () => this.bufferS(),
      destroy,
    };
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
