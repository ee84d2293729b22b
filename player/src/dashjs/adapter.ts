/**
 * Thin dash.js 5 adapter around the Sammy core (what it relies on in dash.js: docs/dashjs.md).
 * It is responsible for:
 *   1. dash.js settings per arm (settings.ts): buffer target, CMCD in headers, rules.
 *   2. `sammy`: the custom ABR rule, fed with dash.js's video buffer level and the
 *      session's chunk throughputs (sammy-rule.ts).
 *   3. A request interceptor, after dash.js's own CMCD step, that sets (or strips) `rtp`
 *      in `CMCD-Status` on every segment request, as the arm's policy says
 *      (`src/abr/arms/`: e.g. `sammy` the core's pace in the playing phase and none in
 *      the initial phase, `control` none, `dashjs-rtp` keeps dash.js's own).
 *   4. A response interceptor that turns each video chunk into a ChunkRecord (bytes,
 *      download time, the rtp sent, the rate the server applied from Server-Timing)
 *      and a throughput sample for the core.
 *   5. Phase events from the QoE collector into the core (first frame, seek, stall).
 * Nothing here throws into dash.js: a failing step logs, and the request or response
 * goes on unchanged (the rule keeps the current rung).
 */
import * as dashjs from 'dashjs';
import type { MediaPlayerClass } from 'dashjs';
import { DEFAULT_SEGMENT_DURATION_S, type SegmentsSidecar } from '@sammy/encoder/sidecar';
import { ARM_REGISTRY, type Arm, type RtpChoice } from '../abr/arms/index.js';
import { pickSammyConfig } from '../abr/config.js';
import type { InitialThroughputHistory } from '../abr/history.js';
import { ladderFromSidecar, topRung, type Ladder } from '../abr/ladder.js';
import type { ChunkRecord, Phase, SessionQoE } from '../abr/records.js';
import { SammySession, type Decision } from '../abr/session.js';
import { rtpOf, withRtp } from '../browser/cmcd-status.js';
import { headerValue } from '../browser/headers.js';
import { armParam, type PlayerConfig } from '../browser/player-config.js';
import { QoeCollector } from '../browser/qoe-collector.js';
import { createSammyRule } from './sammy-rule.js';
import { appliedRateKbps } from '../browser/server-timing.js';
import { dashjsSettings } from './settings.js';

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

const SEGMENT_TYPES = new Set(['MediaSegment', 'InitializationSegment']);
const CHUNK_PATH = /chunk-(\d+)-(\d+)\.m4s(?:$|\?)/;

export interface PlaybackOptions {
  video: HTMLVideoElement;
  mpdUrl: string;
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

export interface Playback {
  readonly arm: Arm;
  readonly player: MediaPlayerClass;
  /** The core's session (`sammy` only). */
  readonly session: SammySession | null;
  readonly collector: QoeCollector;
  qoe(): SessionQoE;
  requests(): readonly SentRequest[];
  destroy(): void;
}

function byteLength(data: unknown): number {
  if (data instanceof ArrayBuffer) return data.byteLength;
  if (ArrayBuffer.isView(data)) return data.byteLength;
  return 0;
}

/**
 * The chunk's network time from the Resource Timing API: request sent to last byte.
 * dash.js's own timing runs from before `xhr.send()` to the `loadend` event, which a busy
 * main thread delays (on loopback at startup it tripled a chunk's time); null when the
 * entry is not there.
 */
function resourceTimingS(url: string): number | null {
  if (typeof performance === 'undefined' || typeof performance.getEntriesByName !== 'function') return null;
  const entries = performance.getEntriesByName(new URL(url, location.href).href, 'resource') as PerformanceResourceTiming[];
  const e = entries.at(-1);
  if (!e || e.responseEnd <= 0) return null;
  const start = e.requestStart > 0 ? e.requestStart : e.startTime;
  const ms = e.responseEnd - start;
  return ms > 0 ? ms / 1000 : null;
}

function pathOf(url: string): string {
  try {
    return new URL(url, 'http://x/').pathname;
  } catch {
    return url;
  }
}

/** What the steps of one playback share. */
interface PlaybackState {
  readonly o: PlaybackOptions;
  readonly now: () => number;
  readonly log: (message: string, err?: unknown) => void;
  readonly ladder: Ladder | null;
  readonly session: SammySession | null;
  readonly segmentDurationS: number;
  readonly player: MediaPlayerClass;
  readonly collector: QoeCollector;
  readonly sent: SentRequest[];
  /** The core's decision per video segment index, for the chunk record's reason. */
  readonly decisions: Map<number, Decision>;
  lastVideoIndex: number | null;
  /** The highest rung dash.js allows now (a bitrate cap lowers it). */
  maxRung: number;
}

/** The core's session, for arms whose bitrate the Sammy core picks; they need segments.json. */
function coreSession(o: PlaybackOptions, ladder: Ladder | null): SammySession | null {
  if (ARM_REGISTRY[o.arm].bitrate !== 'sammy') return null;
  if (!ladder) throw new Error(`the ${o.arm} arm needs segments.json next to the manifest`);
  return new SammySession({ ladder, config: pickSammyConfig(o.config), history: o.history });
}

function videoBufferS(st: PlaybackState): number {
  const b = st.player.getBufferLength('video');
  return Number.isFinite(b) && b > 0 ? b : 0;
}

function nextVideoIndex(st: PlaybackState): number {
  return st.lastVideoIndex !== null ? st.lastVideoIndex + 1 : Math.floor(st.o.video.currentTime / st.segmentDurationS + 1e-6);
}

function topKbps(st: PlaybackState): number {
  if (st.ladder) return st.ladder.bitratesKbps[st.maxRung]!;
  const reps = st.player.getRepresentationsByType('video') ?? [];
  return Math.max(0, ...reps.map((r) => r.bitrateInKbit));
}

/** The QoE collector, with the phase events (first frame, seek, stall) wired into the core. */
function collectorFor(o: PlaybackOptions, now: () => number, log: PlaybackState['log'], session: SammySession | null, segmentDurationS: number, onSeek: () => void): QoeCollector {
  const config = { arm: o.arm, mpd: o.mpdUrl, ...o.config } as Record<string, unknown>;
  return new QoeCollector(
    o.video,
    now,
    { arm: o.arm, config, segmentDurationS, ssim: o.sidecar?.representations.map((r) => r.ssim) ?? null },
    {
      frame: () => {
        const recorded = session?.firstFrame() ?? null;
        if (recorded !== null) log(`initial-phase throughput ${Math.round(recorded)} kbps recorded in the history`);
      },
      seek: () => {
        session?.seek();
        onSeek();
      },
      rebuffer: () => session?.rebuffer(),
    },
  );
}

/** dash.js's settings for the arm, and (Sammy's bitrate) the custom rule that asks the core. */
function configurePlayer(st: PlaybackState): void {
  const { session, ladder, player, o } = st;
  // The first chunk's rung comes from the core: dash.js fetches it before asking any rule.
  const first = session?.decide({ bufferS: 0, segmentIndex: 0 }) ?? null;
  if (first) st.decisions.set(0, first);
  player.updateSettings(dashjsSettings(o.arm, o.config, first && ladder ? ladder.bitratesKbps[first.rung]! : null) as never);
  if (!session) return;
  const rule = createSammyRule((allowedMaxRung) => {
    st.maxRung = allowedMaxRung;
    const segmentIndex = nextVideoIndex(st);
    const d = session.decide({ bufferS: videoBufferS(st), segmentIndex, maxRung: allowedMaxRung });
    st.decisions.set(segmentIndex, d);
    return { rung: d.rung, reason: d.reason };
  }, st.log);
  player.addABRCustomRule('qualitySwitchRules', 'SammyRule', rule as object);
}

/** Sets the arm's rtp on a segment request and notes what the response step needs. */
function onRequest(st: PlaybackState, req: InterceptedRequest): void {
  const frag = req.customData?.request;
  if (!frag || !SEGMENT_TYPES.has(frag.type ?? '')) return;
  const path = pathOf(req.url);
  const chunk = CHUNK_PATH.exec(path);
  const segmentIndex = chunk ? Number(chunk[2]) - 1 : nextVideoIndex(st);
  const bufferS = videoBufferS(st);
  const phase = st.collector.phase;
  const choice: RtpChoice = ARM_REGISTRY[st.o.arm].playerRtp({
    session: st.session,
    bufferS,
    segmentIndex,
    maxRung: st.maxRung,
    topKbps: () => topKbps(st),
    rtpRoundingKbps: st.o.config.rtpRoundingKbps,
    param: (name) => armParam(st.o.config, name),
  });
  if (choice !== 'keep') req.headers = withRtp(req.headers, choice.rtpKbps);
  const rtpKbps = rtpOf(req.headers);
  const requestS = st.collector.sinceStartS() ?? 0;
  st.sent.push({ path, mediaType: frag.mediaType ?? '', type: frag.type ?? '', phase, rtpKbps, t: requestS });
  if (frag.mediaType !== 'video' || frag.type !== 'MediaSegment') return;
  st.lastVideoIndex = segmentIndex;
  const meta: RequestMeta = {
    index: segmentIndex,
    rung: chunk ? Number(chunk[1]) : Number(frag.representation?.id),
    phase,
    rtpKbps,
    bufferBeforeS: bufferS,
    requestS,
    startMs: st.now(),
    paceFloorKbps: choice === 'keep' ? null : choice.floorKbps,
    reason: st.decisions.get(segmentIndex)?.reason,
  };
  req.customData = { ...req.customData, sammy: meta };
}

/** One record per downloaded video chunk, and its throughput sample for the core. */
function onResponse(st: PlaybackState, resp: InterceptedResponse): void {
  const meta = resp.request?.customData?.sammy;
  const sizeBytes = byteLength(resp.data);
  if (!meta || sizeBytes <= 0 || (resp.status ?? 0) < 200 || (resp.status ?? 0) >= 300) return;
  const dashjsMs = resp.resourceTiming?.duration;
  const downloadS = resourceTimingS(resp.request!.url) ?? (typeof dashjsMs === 'number' && dashjsMs > 0 ? dashjsMs : st.now() - meta.startMs) / 1000;
  const record: ChunkRecord = {
    index: meta.index,
    rung: meta.rung,
    bitrateKbps: st.ladder?.bitratesKbps[meta.rung] ?? resp.request?.customData?.request?.representation?.bitrateInKbit ?? 0,
    sizeBytes,
    downloadS,
    throughputKbps: (sizeBytes * 8) / 1000 / downloadS,
    phase: meta.phase,
    rtpKbps: meta.rtpKbps,
    appliedRateKbps: appliedRateKbps(headerValue(resp.headers, 'server-timing')),
    bufferBeforeS: meta.bufferBeforeS,
    // Eq. 2.2: the buffer when the chunk arrived, plus the chunk (not yet appended).
    bufferAfterS: videoBufferS(st) + st.segmentDurationS,
    requestS: meta.requestS,
    paceFloorKbps: meta.paceFloorKbps,
    ...(meta.reason === undefined ? {} : { reason: meta.reason }),
  };
  st.session?.addSample({ sizeBytes, downloadS, phase: meta.phase });
  st.collector.addChunk(record);
  st.o.onChunk?.(record);
}

export function startPlayback(o: PlaybackOptions): Playback {
  const now = o.now ?? (() => performance.now());
  const log = o.log ?? ((m: string, err?: unknown) => console.warn(`[sammy] ${m}`, err ?? ''));
  const ladder: Ladder | null = o.sidecar ? ladderFromSidecar(o.sidecar) : null;
  const session = coreSession(o, ladder);
  const segmentDurationS = o.sidecar?.segmentDurationS ?? DEFAULT_SEGMENT_DURATION_S;
  // A seek restarts the segment count from the playhead (the callback runs only after `state` is set).
  const collector = collectorFor(o, now, log, session, segmentDurationS, () => void (state.lastVideoIndex = null));
  const player = dashjs.MediaPlayer().create();
  const state: PlaybackState = { o, now, log, ladder, session, segmentDurationS, player, collector, sent: [], decisions: new Map(), lastVideoIndex: null, maxRung: ladder ? topRung(ladder) : 0 };

  configurePlayer(state);
  // Nothing here throws into dash.js: a failing step logs, and the request or response goes on unchanged.
  player.addRequestInterceptor((async (req: InterceptedRequest) => {
    try {
      onRequest(state, req);
    } catch (err) {
      log('request interceptor failed; request sent as dash.js made it', err);
    }
    return req;
  }) as never);
  player.addResponseInterceptor((async (resp: InterceptedResponse) => {
    try {
      onResponse(state, resp);
    } catch (err) {
      log('response interceptor failed; chunk not recorded', err);
    }
    return resp;
  }) as never);

  // Go. Resource Timing keeps 250 entries by default; a long session makes more.
  if (typeof performance !== 'undefined' && typeof performance.setResourceTimingBufferSize === 'function') performance.setResourceTimingBufferSize(100_000);
  collector.playRequested(o.playRequestedMs);
  player.initialize(o.video, o.mpdUrl, true);

  return {
    arm: o.arm,
    player,
    session,
    collector,
    qoe: () => collector.qoe(),
    requests: () => state.sent,
    destroy: () => player.destroy(),
  };
}
