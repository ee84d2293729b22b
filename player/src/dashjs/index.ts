/**
 * `@sammy/player/dashjs`: Sammy for an existing dash.js 5 `MediaPlayer`, in one call.
 *
 *   const player = dashjs.MediaPlayer().create();
 *   const sammy = attachSammy(player, { segments: '/media/segments.json' });
 *   player.initialize(video, '/media/manifest.mpd', true);
 *   ... sammy.qoe()   // the session's SessionQoE; sammy.detach() takes Sammy off
 *
 * Built to `lib/` as JavaScript with type declarations (player/README.md, "The dash.js
 * plugin"); dash.js itself is a peer dependency, never bundled.
 */
export { attachSammy } from './adapter.js';
export type { HistoryOption, SammyHandle, SammyOptions, SegmentsOption, SentRequest } from '../browser/options.js';
export type { PlayerConfig } from '../browser/player-config.js';
export { DEFAULT_PLAYER_CONFIG } from '../browser/player-config.js';
export { DEFAULT_SAMMY_CONFIG, SammyConfigError, type SammyConfig } from '../abr/config.js';
export { HISTORY_KEY, type KeyValueStore } from '../abr/history.js';
export type { Arm, ChunkRecord, Phase, SessionQoE } from '../abr/records.js';
