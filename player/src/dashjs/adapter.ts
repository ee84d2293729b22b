/**
 * Thin dash.js 5 adapter around the Sammy core: `attachSammy(player, options)` (what
 * it relies on in dash.js: docs/dashjs.md). It is responsible for:
 *   1. dash.js settings (settings.ts): CMCD in headers and the buffer target from the
 *      attach on; for the `sammy` arm, once the core runs, the built-in rules off and
 *      the first rung.
 *   2. `sammy`: the custom ABR rule, fed with dash.js's video buffer level and the
 *      session's chunk throughputs (sammy-rule.ts).
 *   3. A request interceptor. The player's first request (the manifest) waits until the
 *      segment sizes are loaded, so the core picks the first rung before dash.js does;
 *      then, on every segment request, it sets (or strips) `rtp` in `CMCD-Status` as
 *      the arm's policy says (`src/abr/arms/`), with the `tb` it was computed from.
 *   4. A response interceptor that turns each video chunk into a ChunkRecord (bytes,
 *      download time, the rtp sent, the rate the server applied from Server-Timing)
 *      and a throughput sample for the core.
 *   5. Phase events from the QoE collector into the core (first frame, seek, stall).
 *   6. `detach()`: every step above undone, the player's own settings back.
 * Nothing here throws into dash.js: a failing step logs, and the request or response
 * goes on unchanged (the rule keeps the current rung).
 */
import type { MediaPlayerClass } from 'dashjs';
import { DEFAULT_SEGMENT_DURATION_S, type SegmentsSidecar } from '@sammy/encoder/sidecar';
import { ARM_REGISTRY, type Arm, type RtpChoice } from '../abr/arms/index.js';
import { pickSammyConfig } from '../abr/config.js';
import { ladderFromSidecar, topRung, type Ladder } from '../abr/ladder.js';
import { summarizeSession } from '../abr/qoe.js';
import type { ChunkRecord, Phase, SessionQoE } from '../abr/records.js';
import { SammySession, type Decision } from '../abr/session.js';
import { rtpOf, withRtp, withTb } from '../browser/cmcd-status.js';
import { headerValue } from '../browser/headers.js';
import { resolveAttachOptions, type AttachOptions } from '../browser/attach-options.js';
import type { SammyHandle, SammyOptions, SentRequest } from '../browser/options.js';
import { armParam, type PlayerConfig } from '../browser/player-config.js';
import { QoeCollector } from '../browser/qoe-collector.js';
import { keepResourceTimings, resourceTimingS } from '../browser/resource-timing.js';
import { loadSegments } from '../browser/segments.js';
import { appliedRateKbps } from '../browser/server-timing.js';
import { createSammyRule } from './sammy-rule.js';
import { dashjsSettings, mergePatches, restorePatch, sammyAbrSettings, type SettingsPatch } from './settings.js';

/** The parts of dash.js's request objects the adapter reads (CommonMediaRequest + FragmentRequest). */
interface FragmentRequest {
  type?: string;
  mediaType?: string;
  index?: number;
  representation?: { id?: string; bitrateInKbit?: number } | null;
}
interface InterceptedRequest {
  url: string;
  headers?: Record<string, string>;
  customData?: { request?: FragmentRequest; sammy?: RequestMeta; [key: string]: unknown };
}
interface InterceptedResponse {
  request?: InterceptedRequest;
  status?: number;
  headers?: Record<string, string>;
  data?: unknown;
  resourceTiming?: { duration?: number };
}
type Interceptor<T> = (x: T) => Promise<T>;

/** What the request interceptor hands to the response interceptor for a video chunk. */
interface RequestMeta {
  index: number;
  rung: number;
  phase: Phase;
  rtpKbps: number | null;
  bufferBeforeS: number;
  requestS: number;
  startMs: number;
  paceFloorKbps: number | null;
  reason: string | undefined;
}

/** What exists once the player has made its first request. */
interface Live {
  ladder: Ladder | null;
  sidecar: SegmentsSidecar | null;
  /** The core's session (arms whose bitrate is Sammy's, with the segment sizes). */
  session: SammySession | null;
  collector: QoeCollector;
  segmentDurationS: number;
}

const SEGMENT_TYPES = new Set(['MediaSegment', 'InitializationSegment']);
const CHUNK_PATH = /chunk-(\d+)-(\d+)\.m4s(?:$|\?)/;
const now = (): number => performance.now();

function byteLength(data: unknown): number {
  if (data instanceof ArrayBuffer) return data.byteLength;
  if (ArrayBuffer.isView(data)) return data.byteLength;
  return 0;
}

function pathOf(url: string): string {
  try {
    return new URL(url, 'http://x/').pathname;
  } catch {
    return url;
  }
}

function pageUrl(): string {
  return typeof location === 'undefined' ? 'http://localhost/' : location.href;
}

/**
 * Attaches Sammy to a dash.js 5 player. Call it before `player.initialize()` (or
 * `attachSource()`): the rule, the interceptors and the settings must be in place
 * when dash.js sets up the stream. One attachment serves one source; after
 * `player.reset()` or a new source, attach again. Throws a `SammyConfigError` for a
 * bad option, before touching the player.
 */
export function attachSammy(player: MediaPlayerClass, options?: SammyOptions): SammyHandle {
  return new DashjsAttachment(player, resolveAttachOptions(options));
}

class DashjsAttachment implements SammyHandle {
  readonly ready: Promise<void>;
  readonly #player: MediaPlayerClass;
  readonly #o: AttachOptions;
  readonly #sammyBitrate: boolean;
  readonly #rule: { name: string; factory: unknown } | null;
  readonly #restore: SettingsPatch;
  readonly #sent: SentRequest[] = [];
  /** The core's decision per video segment index, for the chunk record's reason. */
  readonly #decisions = new Map<number, Decision>();
  #settle!: { resolve: () => void; reject: (err: Error) => void };
  #settled = false;
  #segments: Promise<SegmentsSidecar | null> | null = null;
  #starting: Promise<void> | null = null;
  #live: Live | null = null;
  #lastVideoIndex: number | null = null;
  /** The highest rung dash.js allows now (a bitrate cap lowers it). */
  #maxRung = 0;
  #playRequestedMs: number | null = null;
  #frozen: SessionQoE | null = null;

  constructor(player: MediaPlayerClass, o: AttachOptions) {
    this.#player = player;
    this.#o = o;
    this.ready = new Promise<void>((resolve, reject) => {
      const settled = <T>(f: (x: T) => void) => (x: T) => {
        this.#settled = true;
        f(x);
      };
      this.#settle = { resolve: settled(resolve), reject: settled(reject) };
    });
    // The app need not listen: the reason is logged either way.
    this.ready.catch(() => {});
    this.#sammyBitrate = ARM_REGISTRY[o.arm].bitrate === 'sammy';
    const settings = dashjsSettings(o.arm, o.config);
    this.#restore = restorePatch(this.#sammyBitrate ? mergePatches(settings, sammyAbrSettings(0)) : settings, player.getSettings());
    player.updateSettings(settings as never);
    this.#rule = this.#sammyBitrate ? createSammyRule((maxRung) => this.#chooseRung(maxRung), o.log) : null;
    if (this.#rule) player.addABRCustomRule('qualitySwitchRules', this.#rule.name, this.#rule.factory as never);
    player.addRequestInterceptor(this.#onRequest as never);
    player.addResponseInterceptor(this.#onResponse as never);
    keepResourceTimings();
    // A source named by the options loads now, in parallel with dash.js starting up.
    if (o.segments !== undefined) this.#segments = this.#loadSegments(null);
  }

  qoe(): SessionQoE {
    return this.#frozen ?? this.#live?.collector.qoe() ?? this.#emptyQoe();
  }

  config(): PlayerConfig & { arm: Arm } {
    return { arm: this.#o.arm, ...this.#o.config };
  }

  phase(): Phase {
    return this.#live?.collector.phase ?? 'initial';
  }

  requests(): readonly SentRequest[] {
    return this.#sent;
  }

  playRequested(atMs: number = now()): void {
    if (this.#live || this.#starting) this.#o.log('playRequested() after the manifest request is ignored: the play delay counts from that request');
    else this.#playRequestedMs = atMs;
  }

  history(): number[] | null {
    return this.#o.history.sessionsKbps();
  }

  resetHistory(): void {
    this.#o.history.reset();
  }

  detach(): void {
    if (this.#frozen) return;
    this.#frozen = this.qoe();
    if (!this.#settled) this.#settle.reject(new Error('Sammy was detached before the segment sizes were loaded'));
    const player = this.#player;
    player.removeRequestInterceptor(this.#onRequest as never);
    player.removeResponseInterceptor(this.#onResponse as never);
    if (this.#rule) player.removeABRCustomRule(this.#rule.name);
    player.updateSettings(this.#restore as never);
    this.#live?.collector.dispose();
  }

  get #detached(): boolean {
    return this.#frozen !== null;
  }

  #emptyQoe(): SessionQoE {
    return summarizeSession({ arm: this.#o.arm, config: this.#qoeConfig(null), chunks: [], segmentDurationS: DEFAULT_SEGMENT_DURATION_S, ssim: null, playDelayS: null, rebufferCount: 0, rebufferS: 0, playedRanges: [] });
  }

  /** The full parameter set recorded with the session. */
  #qoeConfig(manifestUrl: string | null): Record<string, unknown> {
    return { arm: this.#o.arm, mpd: manifestUrl, ...this.#o.config };
  }

  /** The segment sizes, or null without them (`ready` says which). */
  #loadSegments(manifestUrl: string | null): Promise<SegmentsSidecar | null> {
    return loadSegments(this.#o.segments, manifestUrl, pageUrl()).then(
      (sidecar) => {
        this.#settle.resolve();
        return sidecar;
      },
      (err: Error) => {
        if (this.#sammyBitrate) {
          this.#o.log(`Sammy is off (the player plays with its own ABR and no rtp): ${err.message}`);
          this.#settle.reject(err);
        } else {
          // The other arms play without it; only SSIM is missing from their records.
          this.#o.log(`${err.message}; SSIM unavailable`);
          this.#settle.resolve();
        }
        return null;
      },
    );
  }

  readonly #onRequest: Interceptor<InterceptedRequest> = async (req) => {
    if (this.#detached) return req;
    try {
      if (this.#live === null) await (this.#starting ??= this.#start(req).catch((err: unknown) => this.#giveUp(err)));
      if (this.#live !== null && !this.#detached) this.#onSegmentRequest(req);
    } catch (err) {
      this.#o.log('request interceptor failed; request sent as dash.js made it', err);
    }
    return req;
  };

  readonly #onResponse: Interceptor<InterceptedResponse> = async (resp) => {
    if (this.#detached) return resp;
    try {
      this.#onChunkResponse(resp);
    } catch (err) {
      this.#o.log('response interceptor failed; chunk not recorded', err);
    }
    return resp;
  };

  /**
   * The player's first request (normally the manifest): the segment sizes, the QoE
   * collector on the player's video element, and for Sammy's bitrate the core and the
   * first rung, all before dash.js goes on.
   */
  async #start(req: InterceptedRequest): Promise<void> {
    const manifestUrl = req.customData?.request?.type === 'MPD' ? new URL(req.url, pageUrl()).href : null;
    const sidecar = await (this.#segments ??= this.#loadSegments(manifestUrl));
    if (this.#detached) return;
    const ladder = sidecar ? ladderFromSidecar(sidecar) : null;
    const session = this.#sammyBitrate && ladder ? new SammySession({ ladder, config: pickSammyConfig(this.#o.config), history: this.#o.history }) : null;
    const segmentDurationS = sidecar?.segmentDurationS ?? DEFAULT_SEGMENT_DURATION_S;
    const collector = this.#collector(manifestUrl, sidecar, session, segmentDurationS);
    this.#live = { ladder, sidecar, session, collector, segmentDurationS };
    this.#maxRung = ladder ? topRung(ladder) : 0;
    collector.playRequested(this.#playRequestedMs ?? undefined);
    if (session) {
      // The first chunk's rung comes from the core: dash.js fetches it before asking any rule.
      const first = session.decide({ bufferS: 0, segmentIndex: 0 });
      this.#decisions.set(0, first);
      this.#player.updateSettings(sammyAbrSettings(ladder!.bitratesKbps[first.rung]!) as never);
    } else if (this.#rule) {
      this.#player.removeABRCustomRule(this.#rule.name);
    }
  }

  /** Sammy could not start (no video element, say): the player goes on as if it had never been attached. */
  #giveUp(err: unknown): void {
    this.#o.log('Sammy could not start; the player goes on without it', err);
    if (!this.#settled) this.#settle.reject(err instanceof Error ? err : new Error(String(err)));
    this.detach();
  }

  /** The QoE collector, with the phase events (first frame, seek, stall) wired into the core. */
  #collector(manifestUrl: string | null, sidecar: SegmentsSidecar | null, session: SammySession | null, segmentDurationS: number): QoeCollector {
    const log = this.#o.log;
    const info = { arm: this.#o.arm, config: this.#qoeConfig(manifestUrl), segmentDurationS, ssim: sidecar?.representations.map((r) => r.ssim) ?? null };
    return new QoeCollector(this.#player.getVideoElement(), now, info, {
      frame: () => {
        const recorded = session?.firstFrame() ?? null;
        if (recorded !== null) log(`initial-phase throughput ${Math.round(recorded)} kbps recorded in the history`);
      },
      seek: () => {
        session?.seek();
        // A seek restarts the segment count from the playhead.
        this.#lastVideoIndex = null;
      },
      rebuffer: () => session?.rebuffer(),
    });
  }

  /** The rule's question: the core's rung for the next video segment (null: no opinion). */
  #chooseRung(allowedMaxRung: number): { rung: number; reason: string } | null {
    const session = this.#live?.session;
    if (!session || this.#detached) return null;
    this.#maxRung = allowedMaxRung;
    const segmentIndex = this.#nextVideoIndex();
    const d = session.decide({ bufferS: this.#videoBufferS(), segmentIndex, maxRung: allowedMaxRung });
    this.#decisions.set(segmentIndex, d);
    return { rung: d.rung, reason: d.reason };
  }

  #videoBufferS(): number {
    const b = this.#player.getBufferLength('video');
    return Number.isFinite(b) && b > 0 ? b : 0;
  }

  #nextVideoIndex(): number {
    if (this.#lastVideoIndex !== null) return this.#lastVideoIndex + 1;
    return Math.floor(this.#player.getVideoElement().currentTime / this.#live!.segmentDurationS + 1e-6);
  }

  #topKbps(): number {
    const ladder = this.#live?.ladder;
    if (ladder) return ladder.bitratesKbps[this.#maxRung]!;
    const reps = this.#player.getRepresentationsByType('video') ?? [];
    return Math.max(0, ...reps.map((r) => r.bitrateInKbit));
  }

  /** The arm's rtp for a segment request (the request untouched while Sammy's bitrate runs without its core). */
  #rtpChoice(bufferS: number, segmentIndex: number): RtpChoice {
    const live = this.#live!;
    if (this.#sammyBitrate && !live.session) return 'keep';
    return ARM_REGISTRY[this.#o.arm].playerRtp({
      session: live.session,
      bufferS,
      segmentIndex,
      maxRung: this.#maxRung,
      topKbps: () => this.#topKbps(),
      rtpRoundingKbps: this.#o.config.rtpRoundingKbps,
      param: (name) => armParam(this.#o.config, name),
    });
  }

  /** Sets the arm's rtp (and the tb it is relative to) on a segment request and notes what the response step needs. */
  #onSegmentRequest(req: InterceptedRequest): void {
    const frag = req.customData?.request;
    if (!frag || !SEGMENT_TYPES.has(frag.type ?? '')) return;
    const live = this.#live!;
    const path = pathOf(req.url);
    const chunk = CHUNK_PATH.exec(path);
    const segmentIndex = chunk ? Number(chunk[2]) - 1 : this.#nextVideoIndex();
    const bufferS = this.#videoBufferS();
    const phase = live.collector.phase;
    const choice = this.#rtpChoice(bufferS, segmentIndex);
    if (choice !== 'keep') req.headers = withRtp(req.headers, choice.rtpKbps);
    const topKbps = Math.round(this.#topKbps());
    // The server's spiral guard floors the pace at a multiple of tb: send the top this rtp was computed from.
    if (choice !== 'keep' && choice.rtpKbps !== null && frag.mediaType === 'video' && topKbps > 0) req.headers = withTb(req.headers, topKbps);
    const rtpKbps = rtpOf(req.headers);
    const requestS = live.collector.sinceStartS() ?? 0;
    this.#sent.push({ path, mediaType: frag.mediaType ?? '', type: frag.type ?? '', phase, rtpKbps, t: requestS });
    if (frag.mediaType !== 'video' || frag.type !== 'MediaSegment') return;
    this.#lastVideoIndex = segmentIndex;
    const meta: RequestMeta = {
      index: segmentIndex,
      rung: chunk ? Number(chunk[1]) : Number(frag.representation?.id),
      phase,
      rtpKbps,
      bufferBeforeS: bufferS,
      requestS,
      startMs: now(),
      paceFloorKbps: choice === 'keep' ? null : choice.floorKbps,
      reason: this.#decisions.get(segmentIndex)?.reason,
    };
    req.customData = { ...req.customData, sammy: meta };
  }

  /** One record per downloaded video chunk, and its throughput sample for the core. */
  #onChunkResponse(resp: InterceptedResponse): void {
    const meta = resp.request?.customData?.sammy;
    const live = this.#live;
    const sizeBytes = byteLength(resp.data);
    if (!meta || !live || sizeBytes <= 0 || (resp.status ?? 0) < 200 || (resp.status ?? 0) >= 300) return;
    const dashjsMs = resp.resourceTiming?.duration;
    const downloadS = resourceTimingS(resp.request!.url) ?? (typeof dashjsMs === 'number' && dashjsMs > 0 ? dashjsMs : now() - meta.startMs) / 1000;
    const record: ChunkRecord = {
      index: meta.index,
      rung: meta.rung,
      bitrateKbps: live.ladder?.bitratesKbps[meta.rung] ?? resp.request?.customData?.request?.representation?.bitrateInKbit ?? 0,
      sizeBytes,
      downloadS,
      throughputKbps: (sizeBytes * 8) / 1000 / downloadS,
      phase: meta.phase,
      rtpKbps: meta.rtpKbps,
      appliedRateKbps: appliedRateKbps(headerValue(resp.headers, 'server-timing')),
      bufferBeforeS: meta.bufferBeforeS,
      // Eq. 2.2: the buffer when the chunk arrived, plus the chunk (not yet appended).
      bufferAfterS: this.#videoBufferS() + live.segmentDurationS,
      requestS: meta.requestS,
      paceFloorKbps: meta.paceFloorKbps,
      ...(meta.reason === undefined ? {} : { reason: meta.reason }),
    };
    live.session?.addSample({ sizeBytes, downloadS, phase: meta.phase });
    live.collector.addChunk(record);
    this.#o.onChunk(record);
  }
}
