/**
 * Thin hls.js adapter around the Sammy core, with the same options and handle as the
 * dash.js plugin. hls.js takes its ABR controller and its loaders as classes when it is
 * constructed, so the plugin is a configuration plus a handle, made from the app's own
 * `Hls` class (whose default loader and ABR controller it extends; the plugin never
 * imports hls.js, so an app's bundle holds one copy):
 *
 *   const setup = sammyHls(Hls, { segments: '/media/segments.json' });
 *   const hls = new Hls({ ...setup.config });
 *   const sammy = setup.attach(hls);   // before hls.loadSource()
 *
 * What every player plugin shares is src/browser/attachment.ts; this file is
 * responsible for:
 *   1. hls.js's configuration: the buffer target, CMCD in headers (version 1, `rtp` only
 *      when the arm keeps hls.js's own), and for the `sammy` arm the Sammy ABR
 *      controller (abr-controller.ts).
 *   2. A playlist loader that holds the manifest request until the segment sizes are
 *      loaded, so the core is there before hls.js picks the first level.
 *   3. A fragment loader around hls.js's own, which hls.js's CMCD step wraps in turn,
 *      so it runs after that step: every fragment request (init and media, video and
 *      audio) goes to the playback, which sets or strips `rtp` in `CMCD-Status` as the
 *      arm's policy says, with the `tb` it was computed from (hls.js sends no `tb` for
 *      video-only fragments); each video chunk's bytes, hls.js's timing and
 *      Server-Timing go back to the playback for its ChunkRecord.
 *   4. `detach()`: the loaders pass everything through unchanged and hls.js's own ABR
 *      decides again (the classes stay: hls.js has no way to take them out).
 * Nothing here throws into hls.js: a failing step logs, and the request or response
 * goes on unchanged.
 */
import type Hls from 'hls.js';
import type { FragmentLoaderConstructor, FragmentLoaderContext, HlsConfig, Loader, LoaderCallbacks, LoaderConfiguration, PlaylistLoaderConstructor, PlaylistLoaderContext } from 'hls.js';
import { ARM_REGISTRY } from '../abr/arms/index.js';
import { resolveAttachOptions, type AttachOptions } from '../browser/attach-options.js';
import { pageUrl, SammyAttachment } from '../browser/attachment.js';
import { CMCD_HEADERS, playerCmcdKeys } from '../browser/cmcd-status.js';
import { headerName } from '../browser/headers.js';
import type { SammyHandle, SammyOptions } from '../browser/options.js';
import { armParam } from '../browser/player-config.js';
import { byteLength, guarded, type ChunkRequest } from '../browser/playback.js';
import { levelRungs, sammyAbrController, type SammyAbr } from './abr-controller.js';

type LoaderClass<C extends FragmentLoaderContext | PlaylistLoaderContext> = new (config: HlsConfig) => Loader<C>;

/** hls.js's configuration for the arm (without the plugin's classes). */
export function hlsjsConfig(o: Pick<AttachOptions, 'arm' | 'config'>): Partial<HlsConfig> {
  const ownRtp = ARM_REGISTRY[o.arm].ownRtp;
  return {
    // Every arm plays to the same buffer target (hls.js grows maxBufferLength up to maxMaxBufferLength).
    maxBufferLength: o.config.maxBufferS,
    maxMaxBufferLength: o.config.maxBufferS,
    cmcd: {
      useHeaders: true,
      version: 1,
      includeKeys: playerCmcdKeys(o.arm) as NonNullable<HlsConfig['cmcd']>['includeKeys'],
      ...(ownRtp ? { rtpSafetyFactor: armParam(o.config, ownRtp.safetyFactorParam) } : {}),
    },
  };
}

export interface SammyHlsSetup {
  /** Spread into the hls.js configuration (`new Hls({ ...setup.config, ...yours })`; keep these keys). */
  readonly config: Partial<HlsConfig>;
  /** The player made with that configuration; call before `hls.loadSource()`. */
  attach(hls: Hls): SammyHandle;
}

/**
 * Sammy for hls.js: `Hls` is the app's own hls.js class (the default export of
 * `hls.js`). Throws a `SammyConfigError` for a bad option, and a `TypeError` when `Hls`
 * is not an hls.js class.
 */
export function sammyHls(Hls: typeof import('hls.js').default, options?: SammyOptions): SammyHlsSetup {
  if (typeof Hls?.DefaultConfig?.loader !== 'function' || typeof Hls.DefaultConfig.abrController !== 'function') {
    throw new TypeError('sammyHls(Hls, options): the first argument must be the hls.js class (import Hls from "hls.js")');
  }
  const attachment = new HlsjsAttachment(Hls, resolveAttachOptions(options, 'hlsjs'));
  return { config: attachment.hlsConfig(), attach: (hls) => attachment.attachTo(hls) };
}

class HlsjsAttachment extends SammyAttachment {
  readonly #Hls: typeof Hls;
  #hls: Hls | null = null;
  #abr: SammyAbr | null = null;
  /** The player's CMCD is on because this setup turned it on: off again after `detach()`. */
  #ownsCmcd = false;
  /** The buffer lengths `detach()` gives back: the player's own, or hls.js's defaults where they were this setup's. */
  #bufferBefore: Pick<HlsConfig, 'maxBufferLength' | 'maxMaxBufferLength'> | null = null;

  constructor(HlsClass: typeof Hls, o: AttachOptions) {
    super('hlsjs', o);
    this.#Hls = HlsClass;
  }

  attachTo(hls: Hls): SammyHandle {
    if (this.#hls === hls && this.detached) {
      // hls.js keeps the classes it was made with for the player's life: a new setup cannot install its own.
      throw new Error('this Sammy setup was detached from this hls.js player, which keeps its loaders for its life: make a new Hls with a new sammyHls() setup to attach again');
    }
    if (this.#hls && this.#hls !== hls) throw new Error('this Sammy setup is attached to another hls.js player already');
    if (this.#hls === null) {
      const ours = hlsjsConfig(this.o);
      this.#ownsCmcd = JSON.stringify(hls.config.cmcd) === JSON.stringify(ours.cmcd);
      const defaults = this.#Hls.DefaultConfig;
      this.#bufferBefore = {
        maxBufferLength: hls.config.maxBufferLength === ours.maxBufferLength ? defaults.maxBufferLength : hls.config.maxBufferLength,
        maxMaxBufferLength: hls.config.maxMaxBufferLength === ours.maxMaxBufferLength ? defaults.maxMaxBufferLength : hls.config.maxMaxBufferLength,
      };
    }
    this.#hls = hls;
    return this;
  }

  hlsConfig(): Partial<HlsConfig> {
    const base = this.#Hls.DefaultConfig.loader as unknown as LoaderClass<never>;
    return {
      ...hlsjsConfig(this.o),
      pLoader: this.#playlistLoader(base),
      fLoader: this.#fragmentLoader(base),
      ...(this.sammyBitrate
        ? { abrController: sammyAbrController(this.#Hls.DefaultConfig.abrController, () => (this.detached ? null : this.live), this.o.log, (abr) => void (this.#abr = abr)) as unknown as HlsConfig['abrController'] }
        : {}),
    };
  }

  protected videoElement(): HTMLVideoElement {
    return this.#hls!.media as HTMLVideoElement;
  }

  protected videoBufferS(): number {
    return this.#hls?.mainForwardBufferInfo?.len ?? 0;
  }

  protected playerTopKbps(): number {
    return Math.max(0, ...(this.#hls?.levels ?? []).map((l) => l.bitrate / 1000));
  }

  protected uninstall(): void {
    // The loaders and the controller check `detached`: they pass through from now on,
    // without the CMCD this setup turned on; the buffer target goes back.
    if (this.#hls && this.#bufferBefore) Object.assign(this.#hls.config, this.#bufferBefore);
  }

  /** After `detach()`, a request leaves without the CMCD this setup turned on (hls.js's CMCD step runs before these loaders). */
  #withoutOurCmcd(context: { headers?: Record<string, string> }): void {
    if (!this.detached || !this.#ownsCmcd || !context.headers) return;
    const headers = { ...context.headers };
    for (const name of CMCD_HEADERS) {
      const key = headerName(headers, name);
      if (key !== null) delete headers[key];
    }
    context.headers = headers;
  }

  /** Holds the manifest request until the playback has started. */
  #playlistLoader(Base: LoaderClass<PlaylistLoaderContext>): PlaylistLoaderConstructor {
    const self = this;
    return class SammyPlaylistLoader extends Base {
      override load(context: PlaylistLoaderContext, config: LoaderConfiguration, callbacks: LoaderCallbacks<PlaylistLoaderContext>): void {
        self.#withoutOurCmcd(context);
        if (context.type !== 'manifest' || self.live !== null || self.detached) return super.load(context, config, callbacks);
        if (!self.#hls?.media) {
          self.o.log('hls.js has no media element when it loads the manifest (call hls.attachMedia() before hls.loadSource()): Sammy stays off');
          return super.load(context, config, callbacks);
        }
        void self
          .start(new URL(context.url, pageUrl()).href)
          .catch((err: unknown) => self.o.log('could not start the playback; the manifest goes out unchanged', err))
          .then(() => super.load(context, config, callbacks));
      }
    };
  }

  /** hls.js's own fragment loader, with the playback on each request and response. */
  #fragmentLoader(Base: LoaderClass<FragmentLoaderContext>): FragmentLoaderConstructor {
    const self = this;
    return class SammyFragmentLoader extends Base {
      override load(context: FragmentLoaderContext, config: LoaderConfiguration, callbacks: LoaderCallbacks<FragmentLoaderContext>): void {
        self.#withoutOurCmcd(context);
        const chunk = self.#onRequest(context);
        if (!chunk) return super.load(context, config, callbacks);
        super.load(context, config, {
          ...callbacks,
          onSuccess: (response, stats, ctx, networkDetails) => {
            const live = self.live;
            if (live && !self.detached) {
              guarded(self.o.log, 'fragment loader failed; chunk not recorded', undefined, () => {
                live.onResponse(chunk, {
                  status: response.code ?? 200,
                  sizeBytes: byteLength(response.data),
                  playerDownloadMs: stats.loading.end - stats.loading.start,
                  serverTiming: networkDetails instanceof XMLHttpRequest ? networkDetails.getResponseHeader('server-timing') : null,
                });
                self.#abr?.afterChunk();
              });
            }
            callbacks.onSuccess(response, stats, ctx, networkDetails);
          },
        });
      }
    };
  }

  /** The arm's rtp on a fragment request; for a video chunk, what the response step needs. */
  #onRequest(context: FragmentLoaderContext): ChunkRequest | null {
    const live = this.live;
    if (!live || this.detached) return null;
    return guarded(this.o.log, 'fragment loader failed; request sent as hls.js made it', null, () => {
      const { frag } = context;
      const { headers, chunk } = live.onRequest(
        {
          url: context.url,
          mediaType: frag.type === 'main' ? 'video' : 'audio',
          type: frag.sn === 'initSegment' ? 'InitializationSegment' : 'MediaSegment',
          rung: levelRungs(this.#hls?.levels ?? [])[frag.level] ?? null,
        },
        context.headers,
      );
      if (headers) context.headers = headers;
      return chunk;
    });
  }
}
