/**
 * Thin Shaka Player 5 adapter around the Sammy core: `attachSammy(player, options)`
 * for a `shaka.Player`, the same options and handle as the dash.js plugin. What every
 * player plugin shares is src/browser/attachment.ts; this file is responsible for:
 *   1. Shaka's configuration from the attach on: the buffer target, CMCD in headers
 *      (version 1, `rtp` only when the arm keeps Shaka's own); for the `sammy` arm, once
 *      the core runs, the Sammy AbrManager (abr-manager.ts).
 *   2. A request filter, which Shaka runs after its own CMCD step. The manifest request
 *      waits until the segment sizes are loaded, so the core is there before Shaka picks
 *      a variant; every segment request then goes to the playback, which sets or strips
 *      `rtp` in `CMCD-Status` as the arm's policy says, with the `tb` it was computed from.
 *   3. A response filter that hands each video chunk's bytes, Shaka's timing and
 *      Server-Timing to the playback for its ChunkRecord, then lets the Sammy
 *      AbrManager choose the next chunk's rung.
 *   4. `detach()`: the filters off, Shaka's own configuration back.
 * Nothing here throws into Shaka: a failing step logs, and the request or response
 * goes on unchanged.
 */
import type shaka from 'shaka-player';
import { ARM_REGISTRY } from '../abr/arms/index.js';
import { resolveAttachOptions, type AttachOptions } from '../browser/attach-options.js';
import { pageUrl, SammyAttachment } from '../browser/attachment.js';
import { playerCmcdKeys } from '../browser/cmcd-status.js';
import { headerValue } from '../browser/headers.js';
import type { SammyHandle, SammyOptions } from '../browser/options.js';
import { armParam } from '../browser/player-config.js';
import { bufferedAheadS, byteLength, guarded, type ChunkRequest, type PlaybackCore } from '../browser/playback.js';
import { SammyAbrManager } from './abr-manager.js';

/**
 * The values of Shaka's public request-type enums this adapter reads, typed against
 * Shaka's own declarations (a wrong number does not compile). Read as numbers, not from
 * a Shaka import, so the plugin never carries a Shaka of its own: the app's player is
 * the only one in its bundle.
 */
const RequestType = { MANIFEST: 0, SEGMENT: 1 } as const satisfies {
  MANIFEST: shaka.net.NetworkingEngine.RequestType.MANIFEST;
  SEGMENT: shaka.net.NetworkingEngine.RequestType.SEGMENT;
};
const AdvancedRequestType = { INIT_SEGMENT: 0, MEDIA_SEGMENT: 1 } as const satisfies {
  INIT_SEGMENT: shaka.net.NetworkingEngine.AdvancedRequestType.INIT_SEGMENT;
  MEDIA_SEGMENT: shaka.net.NetworkingEngine.AdvancedRequestType.MEDIA_SEGMENT;
};

/** Shaka's configuration for the arm, from the attach on. */
export function shakaConfig(o: Pick<AttachOptions, 'arm' | 'config'>): Record<string, unknown> {
  const ownRtp = ARM_REGISTRY[o.arm].ownRtp;
  return {
    // Every arm plays to the same buffer target; Shaka fetches while less than this is buffered ahead.
    streaming: { bufferingGoal: o.config.maxBufferS },
    cmcd: {
      enabled: true,
      useHeaders: true,
      version: 1,
      includeKeys: playerCmcdKeys(o.arm),
      ...(ownRtp ? { rtpSafetyFactor: armParam(o.config, ownRtp.safetyFactorParam) } : {}),
    },
  };
}

function segmentKind(context: shaka.extern.RequestContext | undefined): 'MediaSegment' | 'InitializationSegment' | null {
  if (context?.type === AdvancedRequestType.MEDIA_SEGMENT) return 'MediaSegment';
  if (context?.type === AdvancedRequestType.INIT_SEGMENT) return 'InitializationSegment';
  return null;
}

/**
 * Attaches Sammy to a Shaka Player 5 player with a media element (`player.attach(video)`
 * done). Call it before `player.load()`. One attachment serves one source. Throws a
 * `SammyConfigError` for a bad option, before touching the player.
 */
export function attachSammy(player: shaka.Player, options?: SammyOptions): SammyHandle {
  return new ShakaAttachment(player, resolveAttachOptions(options, 'shaka'));
}

class ShakaAttachment extends SammyAttachment {
  readonly #player: shaka.Player;
  readonly #restore: Record<string, unknown>;
  #abr: SammyAbrManager | null = null;
  /** The chunk each video request stands for, until its response. */
  readonly #chunks = new WeakMap<shaka.extern.Request, ChunkRequest>();

  constructor(player: shaka.Player, o: AttachOptions) {
    super('shaka', o);
    this.#player = player;
    const before = player.getConfiguration();
    this.#restore = { streaming: { bufferingGoal: before.streaming.bufferingGoal }, cmcd: before.cmcd, abrFactory: before.abrFactory };
    player.configure(shakaConfig(o));
    const net = player.getNetworkingEngine()!;
    net.registerRequestFilter(this.#onRequest);
    net.registerResponseFilter(this.#onResponse);
    player.addEventListener('segmentappended', this.#onAppended);
  }

  protected videoElement(): HTMLVideoElement {
    return this.#player.getMediaElement() as HTMLVideoElement;
  }

  protected videoBufferS(): number {
    const info = this.#player.getBufferedInfo();
    return bufferedAheadS(info.video.length > 0 ? info.video : info.total, this.videoElement().currentTime);
  }

  protected playerTopKbps(): number {
    return Math.max(0, ...this.#player.getVariantTracks().map((t) => (t.videoBandwidth ?? t.bandwidth) / 1000));
  }

  protected uninstall(): void {
    const net = this.#player.getNetworkingEngine();
    net?.unregisterRequestFilter(this.#onRequest);
    net?.unregisterResponseFilter(this.#onResponse);
    this.#player.removeEventListener('segmentappended', this.#onAppended);
    this.#abr?.stop();
    this.#player.configure(this.#restore);
  }

  protected override onStart(live: PlaybackCore): void {
    if (!live.session) return;
    // Shaka makes its AbrManager (its preloader one, then the player one) once the manifest is in, after this.
    this.#player.configure({ abrFactory: () => (this.#abr = new SammyAbrManager(live, this.o.log)) });
  }

  readonly #onRequest: shaka.extern.RequestFilter = (type, request, context) => {
    if (this.detached) return;
    if (type === RequestType.MANIFEST && this.live === null) {
      // Shaka waits for a filter's promise: the manifest goes out once the playback has started.
      return this.start(new URL(request.uris[0]!, pageUrl()).href).catch((err: unknown) => this.o.log('could not start the playback; the manifest goes out unchanged', err));
    }
    const kind = segmentKind(context);
    const live = this.live;
    if (type !== RequestType.SEGMENT || kind === null || !live) return;
    guarded(this.o.log, 'request filter failed; request sent as Shaka made it', undefined, () => {
      const stream = context?.stream;
      const { headers, chunk } = live.onRequest(
        { url: request.uris[0]!, mediaType: stream?.type ?? '', type: kind, rung: Number(stream?.originalId), bitrateKbps: stream?.bandwidth ? stream.bandwidth / 1000 : null },
        request.headers,
      );
      request.headers = headers ?? {};
      if (chunk) this.#chunks.set(request, chunk);
    });
  };

  /** The Sammy AbrManager switches once the video chunk it decided on is appended. */
  readonly #onAppended = (event: Event): void => {
    if ((event as Event & { contentType?: string }).contentType === 'video') this.#abr?.onVideoAppended();
  };

  readonly #onResponse: shaka.extern.ResponseFilter = (type, response) => {
    const chunk = type === RequestType.SEGMENT ? this.#chunks.get(response.originalRequest) : undefined;
    if (!chunk || !this.live || this.detached) return;
    this.#chunks.delete(response.originalRequest);
    const live = this.live;
    guarded(this.o.log, 'response filter failed; chunk not recorded', undefined, () => {
      live.onResponse(chunk, {
        status: response.status ?? 200,
        sizeBytes: byteLength(response.data),
        playerDownloadMs: response.timeMs ?? null,
        serverTiming: headerValue(response.headers, 'server-timing'),
      });
      this.#abr?.afterChunk();
    });
  };
}
