/**
 * The web players the page drives (`?player=`), one entry each: the manifest it plays
 * unless told otherwise, and how the page makes one and attaches Sammy through that
 * player's plugin call (the same options and handle for all three). Each player and its
 * adapter are loaded on demand, so a page carries one player, not three. Which arms
 * each player runs is the arm registry's (`players` of each arm).
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
  create(video: HTMLVideoElement, options: SammyOptions): Promise<PagePlayer>;
}

export const PAGE_PLAYERS: Readonly<Record<PlayerName, PlayerEntry>> = {
  dashjs: {
    description: 'dash.js 5 (DASH)',
    defaultManifest: '/media/manifest.mpd',
    async create(video, options) {
      const [dashjs, { attachSammy }] = await Promise.all([import('dashjs'), import('../dashjs/adapter.js')]);
      const player = dashjs.MediaPlayer().create();
      player.updateSettings({ debug: { logLevel: 3 /* warnings and errors */ } } as never);
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
    async create(video, options) {
      const [{ default: shaka }, { attachSammy }] = await Promise.all([import('shaka-player'), import('../shaka/adapter.js')]);
      shaka.polyfill.installAll();
      const player = new shaka.Player();
      await player.attach(video);
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
    async create(video, options) {
      const [{ default: Hls }, { sammyHls }] = await Promise.all([import('hls.js'), import('../hlsjs/adapter.js')]);
      const setup = sammyHls(Hls, options);
      const hls = new Hls({ ...setup.config });
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
