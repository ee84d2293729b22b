/**
 * The web players the page drives, one entry each: where its adapter lives (loaded on
 * demand, so a page carries one player, not three) and the manifest it plays unless
 * told otherwise. Which arms each runs is in the arm registry (`players` of each arm).
 */
import type { PlayerName } from '../abr/arms/index.js';
import type { Playback, PlaybackOptions } from './playback.js';

export interface PlayerEntry {
  description: string;
  /** The manifest format the player reads from the encoder's ladder. */
  defaultManifest: string;
  load: () => Promise<(o: PlaybackOptions) => Playback>;
}

export const PLAYER_REGISTRY: Readonly<Record<PlayerName, PlayerEntry>> = {
  dashjs: { description: 'dash.js 5 (DASH)', defaultManifest: '/media/manifest.mpd', load: () => import('../dashjs/adapter.js').then((m) => m.startPlayback) },
  shaka: { description: 'Shaka Player 5 (DASH)', defaultManifest: '/media/manifest.mpd', load: () => import('../shaka/adapter.js').then((m) => m.startPlayback) },
  hlsjs: { description: 'hls.js 1 (HLS)', defaultManifest: '/media/manifest.m3u8', load: () => import('../hlsjs/adapter.js').then((m) => m.startPlayback) },
};
