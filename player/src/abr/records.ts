/**
 * Result records: one shape everywhere (docs/records.md). The browser
 * player (`window.sammy.qoe()`), the simulator (`npm run sim -- --json`) and the lab
 * (`result.json` trials) all describe a session with these two types, so one
 * analysis reads them all. Extra fields are allowed; these names and units are the
 * contract.
 */

import type { Phase } from './phase.js';

export type { Phase };

import type { Arm } from './arms/index.js';

/** The experiment arms are listed in `arms/index.ts`; a record names the player arm it ran. */
export type { Arm };

/** One downloaded video chunk. */
export interface ChunkRecord {
  /** Media segment index, 0-based (segment file number - 1). */
  index: number;
  /** Ladder rung, 0 = lowest bitrate. */
  rung: number;
  bitrateKbps: number;
  sizeBytes: number;
  downloadS: number;
  throughputKbps: number;
  phase: Phase;
  /** The CMCD `rtp` sent with the request; null if none. */
  rtpKbps: number | null;
  /** The rate the server applied, from its `Server-Timing` header; null if unknown or simulated. */
  appliedRateKbps: number | null;
  bufferBeforeS: number;
  bufferAfterS: number;
  /** Extra: seconds from the play request to this chunk's request (browser and simulator clocks). */
  requestS?: number;
  /** Extra: the Eq. 2.1 floor (with headroom) when the chunk was requested; null for arms without the Sammy core. */
  paceFloorKbps?: number | null;
  /** Extra: why this rung and rate (the core's `Decision.reason`). */
  reason?: string;
  /** Extra: bytes of an earlier request for this segment that was given up (a stalled download, or dash.js's abandonment); absent or 0 if none. */
  abandonedBytes?: number;
  /**
   * Extra: the chunk did not cross the network (the browser's cache answered, or its
   * timing is one no link produces): it played, but it is neither a throughput sample
   * nor a history entry, and no server applied a rate to it (`appliedRateKbps` null).
   * Absent for a chunk that came over the network.
   */
  notFromNetwork?: 'browser-cache' | 'implausible-timing';
  /** Extra: the protocol that carried the response (Resource Timing `nextHopProtocol`: `http/1.1`, `h2`, ...); absent when unknown. */
  protocol?: string;
}

/** One playback session. */
export interface SessionQoE {
  arm: Arm;
  /** Play request to first frame. */
  playDelayS: number | null;
  /** Rebuffers after startup. */
  rebufferCount: number;
  rebufferS: number;
  /** Time-weighted over played media. */
  avgBitrateKbps: number;
  /** Mean SSIM of the played segments (time-weighted), from segments.json. */
  avgQuality: number | null;
  switchCount: number;
  /** Mean throughput of the initial-phase (unpaced) chunks: their total bits over their total download time. */
  initialThroughputKbps: number | null;
  /** Mean throughput over playing-phase chunks: total bits over total download time (the "on"-period throughput, thesis 2.5.1). */
  chunkThroughputKbps: number | null;
  chunks: ChunkRecord[];
  /** Extra: media element errors during the session (dash.js rebuilds the MediaSource after a decode error); browser only. */
  mediaErrors?: number;
  /** The full parameter set the session ran with. */
  config: Record<string, unknown>;
}
