/**
 * Thin dash.js 5 adapter around the Sammy core (what it relies on in dash.js: docs/dashjs.md).
 * It is responsible for:
 *   1. dash.js settings per arm (settings.ts): buffer target, CMCD in headers, rules.
 *   2. `sammy`: the custom ABR rule, which asks the playback core for a rung at
 *      dash.js's video buffer level (sammy-rule.ts).
 *   3. A request interceptor, after dash.js's own CMCD step, that hands every segment
 *      request to the playback core (src/browser/playback.ts), which sets or strips `rtp` in
 *      `CMCD-Status` as the arm's policy says.
 *   4. A response interceptor that hands each video chunk's bytes, dash.js's timing
 *      and Server-Timing to the playback core for its ChunkRecord.
 * Nothing here throws into dash.js: a failing step logs, and the request or response
 * goes on unchanged (the rule keeps the current rung).
 */
import * as dashjs from 'dashjs';
import type { MediaPlayerClass } from 'dashjs';
import { headerValue } from '../browser/headers.js';
import { byteLength, guarded, PlaybackCore, type ChunkRequest, type Playback, type PlaybackOptions, type SegmentType } from '../browser/playback.js';
import { createSammyRule } from './sammy-rule.js';
import { dashjsSettings } from './settings.js';

/** The parts of dash.js's request objects the adapter reads (CommonMediaRequest + FragmentRequest). */
interface FragmentRequest {
  type?: string;
  mediaType?: string;
  representation?: { id?: string; bitrateInKbit?: number } | null;
}
interface InterceptedRequest {
  url: string;
  headers?: Record<string, string>;
  customData?: { request?: FragmentRequest; sammy?: ChunkRequest; [key: string]: unknown };
}
interface InterceptedResponse {
  request?: InterceptedRequest;
  status?: number;
  headers?: Record<string, string>;
  data?: unknown;
  resourceTiming?: { duration?: number };
}

const SEGMENT_TYPES = new Set<string>(['MediaSegment', 'InitializationSegment'] satisfies SegmentType[]);

export interface DashjsPlayback extends Playback {
  readonly dashjs: MediaPlayerClass;
}

/** dash.js's settings for the arm, and (Sammy's bitrate) the custom rule that asks the core. */
function configurePlayer(core: PlaybackCore, player: MediaPlayerClass): void {
  // The first chunk's rung comes from the core: dash.js fetches it before asking any rule.
  const first = core.firstDecision();
  player.updateSettings(dashjsSettings(core.o.arm, core.o.config, first && core.ladder ? core.ladder.bitratesKbps[first.rung]! : null) as never);
  if (!core.session) return;
  const rule = createSammyRule((allowedMaxRung) => core.decide(allowedMaxRung), core.log);
  player.addABRCustomRule('qualitySwitchRules', 'SammyRule', rule as object);
}

function onRequest(core: PlaybackCore, req: InterceptedRequest): void {
  const frag = req.customData?.request;
  if (!frag || !SEGMENT_TYPES.has(frag.type ?? '')) return;
  const { headers, chunk } = core.onRequest(
    { url: req.url, mediaType: frag.mediaType ?? '', type: frag.type as SegmentType, rung: Number(frag.representation?.id), bitrateKbps: frag.representation?.bitrateInKbit ?? null },
    req.headers,
  );
  req.headers = headers;
  if (chunk) req.customData = { ...req.customData, sammy: chunk };
}

function onResponse(core: PlaybackCore, resp: InterceptedResponse): void {
  const chunk = resp.request?.customData?.sammy;
  if (!chunk) return;
  core.onResponse(chunk, {
    status: resp.status ?? 0,
    sizeBytes: byteLength(resp.data),
    playerDownloadMs: resp.resourceTiming?.duration ?? null,
    serverTiming: headerValue(resp.headers, 'server-timing'),
  });
}

export function startPlayback(o: PlaybackOptions): DashjsPlayback {
  const player = dashjs.MediaPlayer().create();
  const core = new PlaybackCore(o, 'dashjs', () => player.getBufferLength('video'), () => Math.max(0, ...(player.getRepresentationsByType('video') ?? []).map((r) => r.bitrateInKbit)));
  configurePlayer(core, player);
  player.addRequestInterceptor((async (req: InterceptedRequest) => {
    guarded(core.log, 'request interceptor failed; request sent as dash.js made it', undefined, () => onRequest(core, req));
    return req;
  }) as never);
  player.addResponseInterceptor((async (resp: InterceptedResponse) => {
    guarded(core.log, 'response interceptor failed; chunk not recorded', undefined, () => onResponse(core, resp));
    return resp;
  }) as never);
  core.start();
  player.initialize(o.video, o.manifestUrl, true);
  return { ...core.playback(() => player.destroy()), dashjs: player };
}
