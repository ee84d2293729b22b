/**
 * What every player plugin's entry exports beside its attach call: the options and the
 * handle, the Sammy configuration and its defaults, the history's store and the records
 * a handle returns. `@sammy/player/dashjs`, `/shaka` and `/hlsjs` each re-export this.
 */
export type { HistoryOption, SammyHandle, SammyOptions, SegmentsOption, SentRequest } from './options.js';
export type { PlayerConfig } from './player-config.js';
export { DEFAULT_PLAYER_CONFIG } from './player-config.js';
export { DEFAULT_SAMMY_CONFIG, SammyConfigError, type SammyConfig } from '../abr/config.js';
export { HISTORY_KEY, type KeyValueStore } from '../abr/history.js';
export type { Arm, ChunkRecord, Phase, SessionQoE } from '../abr/records.js';
