/**
 * The web players the page drives (`?player=`), one entry each: the manifest it plays
 * unless told otherwise, and how the page makes one and attaches Sammy through that
 * player's plugin call (the same options and handle for all three). Each player and its
 * adapter are loaded on demand, so a page carries one player, not three. Which arms
 * each player runs is the arm registry's (`players` of each arm).
 *
 * A `cacheTag` puts `sammy-session=<tag>` in the query of every request the player makes
 * (hls.js: of every fragment), before Sammy sees it: the page's compared session (`compare=`)
 * runs in a frame of the same origin, whose HTTP cache is shared, and the two sessions
 * fetch the same segment URLs; untagged, one session's chunks come from the other's
 * downloads (in Resource Timing, a transferSize of 0), and neither chart shows its own
 * traffic. The server ignores the parameter.
 */
import type { PlayerName } from '../abr/arms/index.js';
import type { SammyHandle, SammyOptions } from '../browser/options.js';
import { bufferedAheadS } from '../browser/playback.js';

/** One player on the page, with Sammy attached. */
export interface PagePlayer {
  sammy: SammyHandle;
  /** Loads the manifest and plays. */
  start(manifestUrl: string): void;
  /** The video buffered ahead of the playhead, for the chart. */
  bufferS(): number;
  destroy(): void;
}

export interface PlayerEntry {
  description: string;
  /** The encoder's manifest this player reads. */
  defaultManifest: string;
  create(video: HTMLVideoElement, options: SammyOptions, cacheTag?: string): Promise<PagePlayer>;
}

/** `url` (absolute, or relative to the page) with `sammy-session=<tag>` in its query. */
export function taggedUrl(url: string, tag: string, base: string): string {
  const u = new URL(url, base);
  u.searchParams.set('sammy-session', tag);
  return u.href;
}

export const PAGE_PLAYERS: Readonly<Record<PlayerName, PlayerEntry>> = {
  dashjs: {
    description: 'dash.js 5 (DASH)',
    defaultManifest: '/media/manifest.mpd',
    async create(video, options, cacheTag) {
      const [dashjs, { attachSammy }] = await Promise.all([import('dashjs'), import('../dashjs/adapter.js')]);
      const player = dashjs.MediaPlayer().create();
      player.updateSettings({ debug: { logLevel: 3 /* warnings and errors */ } } as never);
      // Added before Sammy's interceptor: dash.js runs them in that order.
      if (cacheTag) player.addRequestInterceptor((async (req: { url: string }) => ((req.url = taggedUrl(req.url, cacheTag, location.href)), req)) as never);
      return {
        sammy: attachSammy(player, options),
        start: (url) => player.initialize(video, url, true),
        bufferS: () => player.getBufferLength('video') || 0,
        destroy: () => player.destroy(),
      };
    },
  },
  shaka: {
    description: 'Shaka Player 5 (DASH)',
    defaultManifest: '/media/manifest.mpd',
    async create(video, options, cacheTag) {
      const [{ default: shaka }, { attachSammy }] = await Promise.all([import('shaka-player'), import('../shaka/adapter.js')]);
      shaka.polyfill.installAll();
      const player = new shaka.Player();
      await player.attach(video);
      // Registered before Sammy's filter: Shaka runs them in that order.
      if (cacheTag) player.getNetworkingEngine()!.registerRequestFilter((_type, request) => void (request.uris = request.uris.map((u) => taggedUrl(u, cacheTag, location.href))));
      return {
        sammy: attachSammy(player, options),
        start: (url) => void player.load(url).then(() => video.play()).catch((err: unknown) => options.log?.('Shaka could not play', err)),
        bufferS: () => bufferedAheadS(player.getBufferedInfo().video, video.currentTime),
        destroy: () => void player.destroy(),
      };
    },
  },
  hlsjs: {
    description: 'hls.js 1 (HLS)',
    defaultManifest: '/media/manifest.m3u8',
    async create(video, options, cacheTag) {
      const [{ default: Hls }, { sammyHls }] = await Promise.all([import('hls.js'), import('../hlsjs/adapter.js')]);
      const setup = sammyHls(Hls, options);
      const config = { ...setup.config };
      if (cacheTag && config.fLoader) {
        // Sammy's fragment loader, given the tagged URL.
        const SammyLoader = config.fLoader;
        config.fLoader = class extends SammyLoader {
          override load(...args: Parameters<InstanceType<typeof SammyLoader>['load']>): void {
            args[0].url = taggedUrl(args[0].url, cacheTag, location.href);
            super.load(...args);
          }
        };
      }
      const hls = new Hls(config);
      const sammy = setup.attach(hls);
      hls.attachMedia(video);
      return {
        sammy,
        start: (url) => {
          hls.loadSource(url);
          void video.play().catch(() => {});
        },
        bufferS: () => hls.mainForwardBufferInfo?.len ?? 0,
        destroy: () => hls.destroy(),
      };
    },
  },
};
