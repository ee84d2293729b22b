/**
 * Thin dash.js 5 adapter around the Sammy core: `attachSammy(player, options)` (what
 * it relies on in dash.js: docs/dashjs.md). What every player plugin shares (the
 * segment sizes, the playback, the QoE, `detach()`) is src/browser/attachment.ts; this
 * file is responsible for:
 *   1. dash.js settings (settings.ts): CMCD in headers and the buffer target from the
 *      attach on; for the `sammy` arm, once the core runs, the built-in rules off and
 *      the first rung.
 *   2. `sammy`: the custom ABR rules (sammy-rule.ts): the bitrate rule asks the
 *      playback for a rung at dash.js's video buffer level; the stalled-download rule
 *      asks it, at each progress event, whether to give the chunk in flight up.
 *   For every arm, overrides of dash.js's XHRLoader and FragmentModel, so that the
 *   requests dash.js gives up are aborted (with CMCD on, its own abort misses: xhr-abort.ts).
 *   3. A request interceptor. The player's first request (the manifest) waits until the
 *      segment sizes are loaded, so the core picks the first rung before dash.js does;
 *      then, on every segment request, after dash.js's own CMCD step, the playback sets
 *      (or strips) `rtp` in `CMCD-Status` as the arm's policy says, with the `tb` it
 *      was computed from.
 *   4. A response interceptor that hands each video chunk's bytes, dash.js's timing and
 *      Server-Timing to the playback for its ChunkRecord and the core's sample.
 *   5. `detach()`: every step above undone, the player's own settings back.
 * Nothing here throws into dash.js: a failing step logs, and the request or response
 * goes on unchanged (the rule keeps the current rung).
 */
import type { MediaPlayerClass } from 'dashjs';
import { resolveAttachOptions, type AttachOptions } from '../browser/attach-options.js';
import { pageUrl, SammyAttachment } from '../browser/attachment.js';
import { headerValue } from '../browser/headers.js';
import type { SammyHandle, SammyOptions } from '../browser/options.js';
import { byteLength, type ChunkRequest, type PlaybackCore, type SegmentType } from '../browser/playback.js';
import { createSammyAbandonRule, createSammyRule } from './sammy-rule.js';
import { dashjsSettings, mergePatches, restorePatch, sammyAbrSettings, type SettingsPatch } from './settings.js';
import { abortingFragmentModel, FRAGMENT_MODEL_NAME, recordingXhrLoader, XHR_LOADER_NAME, XhrsInFlight } from './xhr-abort.js';

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
type Interceptor<T> = (x: T) => Promise<T>;

const SEGMENT_TYPES = new Set<string>(['MediaSegment', 'InitializationSegment'] satisfies SegmentType[]);

/**
 * Attaches Sammy to a dash.js 5 player. Call it before `player.initialize()` (or
 * `attachSource()`): the rule, the interceptors and the settings must be in place
 * when dash.js sets up the stream. One attachment serves one source; after
 * `player.reset()` or a new source, attach again. Throws a `SammyConfigError` for a
 * bad option, before touching the player.
 */
export function attachSammy(player: MediaPlayerClass, options?: SammyOptions): SammyHandle {
  return new DashjsAttachment(player, resolveAttachOptions(options, 'dashjs'));
}

class DashjsAttachment extends SammyAttachment {
  readonly #player: MediaPlayerClass;
  /** The bitrate rule and the stalled-download rule (the `sammy` arm), each with its dash.js rule list. */
  readonly #rules: { type: string; name: string; factory: unknown }[];
  readonly #restore: SettingsPatch;

  constructor(player: MediaPlayerClass, o: AttachOptions) {
    super('dashjs', o);
    this.#player = player;
    const settings = dashjsSettings(o.arm, o.config);
    this.#restore = restorePatch(this.sammyBitrate ? mergePatches(settings, sammyAbrSettings(0)) : settings, player.getSettings());
    player.updateSettings(settings as never);
    this.#rules = this.sammyBitrate
      ? [
          { type: 'qualitySwitchRules', ...createSammyRule((maxRung) => (this.detached ? null : (this.live?.decide(maxRung) ?? null)), o.log) },
          { type: 'abandonFragmentRules', ...createSammyAbandonRule((url, loadedBytes) => this.#checkDownload(url, loadedBytes), o.log) },
        ]
      : [];
    for (const rule of this.#rules) player.addABRCustomRule(rule.type as never, rule.name, rule.factory as never);
    // dash.js's aborts reach the requests it gives up (xhr-abort.ts). FactoryMaker keeps the
    // overrides for the player's life; they only correct dash.js's aborts, so detach leaves them.
    const inFlight = new XhrsInFlight();
    player.extend(XHR_LOADER_NAME, recordingXhrLoader(inFlight) as never, true);
    player.extend(FRAGMENT_MODEL_NAME, abortingFragmentModel(inFlight) as never, true);
    player.addRequestInterceptor(this.#onRequest as never);
    player.addResponseInterceptor(this.#onResponse as never);
  }

  /**
   * The stalled-download rule's answer for a video chunk in flight; when it gives the
   * chunk up, dash.js aborts its request (through the override, xhr-abort.ts) and
   * fetches the segment at the rung answered.
   */
  #checkDownload(url: string, loadedBytes: number): { rung: number; reason: string } | null {
    return this.detached ? null : (this.live?.checkDownload(url, loadedBytes) ?? null);
  }

  protected videoElement(): HTMLVideoElement {
    return this.#player.getVideoElement();
  }

  protected videoBufferS(): number {
    return this.#player.getBufferLength('video');
  }

  protected playerTopKbps(): number {
    return Math.max(0, ...(this.#player.getRepresentationsByType('video') ?? []).map((r) => r.bitrateInKbit));
  }

  protected uninstall(): void {
    const player = this.#player;
    player.removeRequestInterceptor(this.#onRequest as never);
    player.removeResponseInterceptor(this.#onResponse as never);
    for (const rule of this.#rules) player.removeABRCustomRule(rule.name);
    player.updateSettings(this.#restore as never);
  }

  protected override onStart(live: PlaybackCore): void {
    // The first chunk's rung comes from the core: dash.js fetches it before asking any rule.
    const first = live.firstDecision();
    if (first) this.#player.updateSettings(sammyAbrSettings(live.ladder!.bitratesKbps[first.rung]!) as never);
    else for (const rule of this.#rules) this.#player.removeABRCustomRule(rule.name);
  }

  readonly #onRequest: Interceptor<InterceptedRequest> = async (req) => {
    if (this.detached) return req;
    try {
      if (this.live === null) await this.start(req.customData?.request?.type === 'MPD' ? new URL(req.url, pageUrl()).href : null);
      if (this.live !== null && !this.detached) this.#onSegmentRequest(this.live, req);
    } catch (err) {
      this.o.log('request interceptor failed; request sent as dash.js made it', err);
    }
    return req;
  };

  readonly #onResponse: Interceptor<InterceptedResponse> = async (resp) => {
    if (this.detached) return resp;
    try {
      const chunk = resp.request?.customData?.sammy;
      if (chunk && this.live) {
        this.live.onResponse(chunk, {
          status: resp.status ?? 0,
          sizeBytes: byteLength(resp.data),
          playerDownloadMs: resp.resourceTiming?.duration ?? null,
          serverTiming: headerValue(resp.headers, 'server-timing'),
        });
      }
    } catch (err) {
      this.o.log('response interceptor failed; chunk not recorded', err);
    }
    return resp;
  };

  #onSegmentRequest(live: PlaybackCore, req: InterceptedRequest): void {
    const frag = req.customData?.request;
    if (!frag || !SEGMENT_TYPES.has(frag.type ?? '')) return;
    const { headers, chunk } = live.onRequest(
      { url: req.url, mediaType: frag.mediaType ?? '', type: frag.type as SegmentType, rung: Number(frag.representation?.id), bitrateKbps: frag.representation?.bitrateInKbit ?? null },
      req.headers,
    );
    req.headers = headers;
    if (chunk) req.customData = { ...req.customData, sammy: chunk };
  }
}
