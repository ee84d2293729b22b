/**
 * The public types of every Sammy player plugin (`@sammy/player/dashjs` today): the
 * options of its one attach call and the handle it returns. Each plugin adds only
 * what its player needs. Types only: their declarations must import nothing but the
 * core's (attach-options.ts checks the options).
 */
import type { Arm } from '../abr/arms/index.js';
import type { KeyValueStore } from '../abr/history.js';
import type { ChunkRecord, Phase, SessionQoE } from '../abr/records.js';
import type { PlayerConfig } from './player-config.js';

/** The URL of the encoder's `segments.json`, or a function returning (a promise of) its content. */
export type SegmentsOption = string | (() => unknown);

/** A `localStorage` key (default `sammy.initialThroughputHistory`), a store, or null for none. */
export type HistoryOption = string | KeyValueStore | null;

export interface SammyOptions {
  /**
   * Overrides of the Sammy config (`DEFAULT_SAMMY_CONFIG`), field by field, e.g.
   * `{ maxBufferS: 60 }`; the comparison arms' parameters too (`fixedRtpMultiplier`).
   * An unknown field or a value out of range throws a `SammyConfigError` naming it.
   */
  config?: Partial<PlayerConfig>;
  /**
   * Where the per-segment sizes come from: the URL of the encoder's `segments.json`
   * (relative to the page), or a function returning (a promise of) its content.
   * Default: `segments.json` beside the manifest.
   */
  segments?: SegmentsOption;
  /**
   * The device's initial-phase throughput history: a `localStorage` key (default
   * `sammy.initialThroughputHistory`), an object with `getItem`/`setItem`/`removeItem`,
   * or null to keep none beyond this session.
   */
  history?: HistoryOption;
  /**
   * For experiments: who picks the bitrate and what rtp is sent (default `sammy`; the
   * others, e.g. `control` = the player's own ABR and no rtp, record the same QoE).
   */
  arm?: Arm;
  /** Called with each video chunk's record as soon as it has arrived. */
  onChunk?: (record: ChunkRecord) => void;
  /** Where problems are reported (default `console.warn`); nothing is ever thrown into the player. */
  log?: (message: string, err?: unknown) => void;
}

/** One segment request as sent (video and audio, media and init). */
export interface SentRequest {
  path: string;
  mediaType: string;
  type: string;
  phase: Phase;
  rtpKbps: number | null;
  /** Seconds since the play request. */
  t: number;
}

export interface SammyHandle {
  /**
   * Resolves once the segment sizes are loaded; rejects with the reason when the `sammy`
   * arm cannot have them (the player then plays as it would without Sammy: its own
   * ABR, no rtp), or when detached first. With the default `segments`, it settles only
   * once the manifest is requested.
   */
  readonly ready: Promise<void>;
  /** The session so far (empty before the manifest request; frozen by `detach()`). */
  qoe(): SessionQoE;
  /** The resolved config (defaults and overrides) and the arm. */
  config(): PlayerConfig & { arm: Arm };
  /** `initial` until the first frame (and again from a seek to the next frame), `playing` after. */
  phase(): Phase;
  /** Every segment request so far, as sent. */
  requests(): readonly SentRequest[];
  /**
   * When the viewer asked to play (`performance.now()` clock; default now): the play
   * delay counts from here instead of from the manifest request. Call it before the
   * player requests the manifest; later calls are ignored.
   */
  playRequested(atMs?: number): void;
  /** The stored initial-phase throughput per past session, oldest first (null: storage unreadable). */
  history(): number[] | null;
  /** Empties the history (experiments start every arm from the same state, thesis 2.5.6). */
  resetHistory(): void;
  /** Takes Sammy off the player: its rule, interceptors and settings go, the player's own come back. */
  detach(): void;
}
