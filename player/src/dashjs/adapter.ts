/**
 * Thin dash.js 5 adapter around the Sammy core (what it relies on in dash.js: docs/dashjs.md).
 * It is responsible for:
 *   1. dash.js settings per arm (settings.ts): buffer target, CMCD in headers, rules.
 *   2. `sammy`: the custom ABR rule, fed with dash.js's video buffer level and the
 *      session's chunk throughputs (sammy-rule.ts).
 *   3. A request interceptor, after dash.js's own CMCD step, that sets (or strips) `rtp`
 *      in `CMCD-Status` on every segment request: `sammy` the core's pace in the
 *      playing phase and none in the initial phase, `fixed4x` 4x the top bitrate,
 *      `control` none; `dashjs-rtp` keeps dash.js's own.
 *   4. A response interceptor that turns each video chunk into a ChunkRecord (bytes,
 *      download time, the rtp sent, the rate the server applied from Server-Timing)
 *      and a throughput sample for the core.
 *   5. Phase events from the QoE collector into the core (first frame, seek, stall).
 * Nothing here throws into dash.js: a failing step logs, and the request or response
 * goes on unchanged (the rule keeps the current rung).
 */
import * as dashjs from 'dashjs';
import type { MediaPlayerClass } from 'dashjs';
import type { SegmentsSidecar } from '@sammy/encoder/sidecar';
import { pickSammyConfig } from '../abr/config.js';
import type { InitialThroughputHistory } from '../abr/history.js';
import { ladderFromSidecar, topRung, type Ladder } from '../abr/ladder.js';
import { roundRtpKbps } from '../abr/pace.js';
import type { Arm, ChunkRecord, Phase, SessionQoE } from '../abr/records.js';
import { SammySession, type Decision } from '../abr/session.js';
import { rtpOf, withRtp } from './cmcd-status.js';
import { headerValue } from './headers.js';
import type { PlayerConfig } from './player-config.js';
import { QoeCollector } from './qoe-collector.js';
import { createSammyRule } from './sammy-rule.js';
import { appliedRateKbps } from './server-timing.js';
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

export function startPlayback(o: PlaybackOptions): Playback {
  const now = o.now ?? (() => performance.now());
  const log = o.log ?? ((m: string, err?: unknown) => console.warn(`[sammy] ${m}`, err ?? ''));
  const ladder: Ladder | null = o.sidecar ? ladderFromSidecar(o.sidecar) : null;
  if (o.arm === 'sammy' && !ladder) throw new Error('the sammy arm needs segments.json next to the manifest');
  const session = o.arm === 'sammy' ? new SammySession({ ladder: ladder!, config: pickSammyConfig(o.config), history: o.history }) : null;
  const segmentDurationS = o.sidecar?.segmentDurationS ?? 2;
  const config = { arm: o.arm, mpd: o.mpdUrl, ...o.config } as Record<string, unknown>;

  const player = dashjs.MediaPlayer().create();
  const sent: SentRequest[] = [];
  const decisions = new Map<number, Decision>();
  let lastVideoIndex: number | null = null;
  let maxRung = ladder ? topRung(ladder) : 0;

  const collector = new QoeCollector(
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
        lastVideoIndex = null;
      },
      rebuffer: () => session?.rebuffer(),
    },
  );

  const videoBufferS = (): number => {
    const b = player.getBufferLength('video');
    return Number.isFinite(b) && b > 0 ? b : 0;
  };
  const nextVideoIndex = (): number => (lastVideoIndex !== null ? lastVideoIndex + 1 : Math.floor(o.video.currentTime / segmentDurationS + 1e-6));
  const topKbps = (): number => {
    if (ladder) return ladder.bitratesKbps[maxRung]!;
    const reps = player.getRepresentationsByType('video') ?? [];
    return Math.max(0, ...reps.map((r) => r.bitrateInKbit));
  };

  // 1. Settings. The first chunk's rung comes from the core: dash.js fetches it before asking any rule.
  const first = session?.decide({ bufferS: 0, segmentIndex: 0 }) ?? null;
  if (first) decisions.set(0, first);
  player.updateSettings(dashjsSettings(o.arm, o.config, first && ladder ? ladder.bitratesKbps[first.rung]! : null) as never);

  // 2. The rule.
  if (session) {
    const rule = createSammyRule((allowedMaxRung) => {
      maxRung = allowedMaxRung;
      const segmentIndex = nextVideoIndex();
      const d = session.decide({ bufferS: videoBufferS(), segmentIndex, maxRung });
      decisions.set(segmentIndex, d);
      return { rung: d.rung, reason: d.reason };
    }, log);
    player.addABRCustomRule('qualitySwitchRules', 'SammyRule', rule as object);
  }

  // 3. rtp on every segment request.
  const rtpFor = (segmentIndex: number, bufferS: number): { rtp: number | null; floor: number | null } | 'keep' => {
    switch (o.arm) {
      case 'sammy': {
        const { rtpKbps, pace } = session!.pace({ bufferS, segmentIndex, maxRung });
        return { rtp: rtpKbps, floor: pace.floorKbps };
      }
      case 'fixed4x':
        return { rtp: roundRtpKbps(o.config.fixedRtpMultiplier * topKbps(), o.config.rtpRoundingKbps), floor: null };
      case 'control':
        return { rtp: null, floor: null };
      case 'dashjs-rtp':
        return 'keep';
    }
  };

  player.addRequestInterceptor((async (req: InterceptedRequest) => {
    try {
      const frag = req.customData?.request;
      if (!frag || !SEGMENT_TYPES.has(frag.type ?? '')) return req;
      const path = pathOf(req.url);
      const chunk = CHUNK_PATH.exec(path);
      const segmentIndex = chunk ? Number(chunk[2]) - 1 : nextVideoIndex();
      const bufferS = videoBufferS();
      const phase = collector.phase;
      const choice = rtpFor(segmentIndex, bufferS);
      if (choice !== 'keep') req.headers = withRtp(req.headers, choice.rtp);
      const rtpKbps = rtpOf(req.headers);
      const requestS = collector.sinceStartS() ?? 0;
      sent.push({ path, mediaType: frag.mediaType ?? '', type: frag.type ?? '', phase, rtpKbps, t: requestS });
      if (frag.mediaType === 'video' && frag.type === 'MediaSegment') {
        const rung = chunk ? Number(chunk[1]) : Number(frag.representation?.id);
        lastVideoIndex = segmentIndex;
        const meta: RequestMeta = {
          index: segmentIndex,
          rung,
          phase,
          rtpKbps,
          bufferBeforeS: bufferS,
          requestS,
          startMs: now(),
          paceFloorKbps: choice === 'keep' ? null : choice.floor,
          reason: decisions.get(segmentIndex)?.reason,
        };
        req.customData = { ...req.customData, sammy: meta };
      }
    } catch (err) {
      log('request interceptor failed; request sent as dash.js made it', err);
    }
    return req;
  }) as never);

  // 4. One record per downloaded video chunk.
  player.addResponseInterceptor((async (resp: InterceptedResponse) => {
    try {
      const meta = resp.request?.customData?.sammy;
      const sizeBytes = byteLength(resp.data);
      if (meta && sizeBytes > 0 && (resp.status ?? 0) >= 200 && (resp.status ?? 0) < 300) {
        const dashjsMs = resp.resourceTiming?.duration;
        const downloadS = resourceTimingS(resp.request!.url) ?? (typeof dashjsMs === 'number' && dashjsMs > 0 ? dashjsMs : now() - meta.startMs) / 1000;
        const record: ChunkRecord = {
          index: meta.index,
          rung: meta.rung,
          bitrateKbps: ladder?.bitratesKbps[meta.rung] ?? resp.request?.customData?.request?.representation?.bitrateInKbit ?? 0,
          sizeBytes,
          downloadS,
          throughputKbps: (sizeBytes * 8) / 1000 / downloadS,
          phase: meta.phase,
          rtpKbps: meta.rtpKbps,
          appliedRateKbps: appliedRateKbps(headerValue(resp.headers, 'server-timing')),
          bufferBeforeS: meta.bufferBeforeS,
          // Eq. 2.2: the buffer when the chunk arrived, plus the chunk (not yet appended).
          bufferAfterS: videoBufferS() + segmentDurationS,
          requestS: meta.requestS,
          paceFloorKbps: meta.paceFloorKbps,
          ...(meta.reason === undefined ? {} : { reason: meta.reason }),
        };
        session?.addSample({ sizeBytes, downloadS, phase: meta.phase });
        collector.addChunk(record);
        o.onChunk?.(record);
      }
    } catch (err) {
      log('response interceptor failed; chunk not recorded', err);
    }
    return resp;
  }) as never);

  // 5. Go. Resource Timing keeps 250 entries by default; a long session makes more.
  if (typeof performance !== 'undefined' && typeof performance.setResourceTimingBufferSize === 'function') performance.setResourceTimingBufferSize(100_000);
  collector.playRequested(o.playRequestedMs);
  player.initialize(o.video, o.mpdUrl, true);

  return {
    arm: o.arm,
    player,
    session,
    collector,
    qoe: () => collector.qoe(),
    requests: () => sent,
    destroy: () => player.destroy(),
  };
}
