/**
 * What the session model asks of an arm, and tells it. An arm is the player's
 * decision logic only: which rung to request next, at what pace rate (the CMCD
 * `rtp`), and how much buffer the player keeps. The session owns the clock, the
 * network and the playback buffer.
 */
import { armsIn, type ArmIn, type Phase } from '../core.js';

/** The arms the registry (`@sammy/player/abr`) marks as simulated; `spiral` runs only here. */
export type SimArm = ArmIn<'simulator'>;

export const SIM_ARMS: readonly SimArm[] = armsIn('simulator');

export interface DecisionContext {
  /** Session clock: seconds since the play request. */
  nowS: number;
  /** Segment to request (0-based). */
  index: number;
  bufferS: number;
  /** The first frame has been shown. */
  started: boolean;
  /** Playback started and is now waiting for data (a rebuffer). */
  stalled: boolean;
}

export interface Decision {
  rung: number;
  /** The CMCD `rtp` sent with the request (integer kbps, CTA-5004 rounding applied); null sends none. */
  rtpKbps: number | null;
  /** The floor the request declares to the server's spiral guard (CMCD `sammy-floor`, integer kbps); null or absent: none. */
  declaredFloorKbps?: number | null;
  /** Wait this long before sending the request (dash.js BOLA's time-to-load delay). */
  delayS?: number;
  /** The arm's own phase for this request; by default, `initial` until the first frame. */
  phase?: Phase;
}

/** A chunk that finished downloading, as the player sees it. */
export interface ChunkDone {
  index: number;
  rung: number;
  sizeBytes: number;
  durationS: number;
  phase: Phase;
  rtpKbps: number | null;
  /** Request sent. */
  requestS: number;
  /** First byte received (request + one latency). */
  firstByteS: number;
  /** Last byte received. */
  endS: number;
  /** Buffer when the last byte arrived, before the chunk is appended. */
  bufferAtEndS: number;
  /** Buffer after the chunk is appended. */
  bufferAfterS: number;
}

/** A download in flight, as the player sees it in a progress event. */
export interface DownloadProgress {
  index: number;
  rung: number;
  sizeBytes: number;
  loadedBytes: number;
  sinceFirstByteS: number;
  /** Since the request was sent (the first byte comes one latency later). */
  sinceRequestS: number;
  /** Session clock now. */
  nowS: number;
  /** Buffer level now. */
  bufferS: number;
}

export interface ArmPolicy {
  readonly arm: SimArm;
  /** Every parameter the arm ran with, written into the session's `config`. */
  readonly config: Record<string, unknown>;
  /**
   * The player requests the next segment only while buffer + one segment stays within
   * this; asked once after each chunk lands, with the buffer then.
   */
  bufferTargetS(currentRung: number, bufferS: number): number;
  decide(context: DecisionContext): Decision;
  onChunk(chunk: ChunkDone): void;
  /** First frame shown (end of the initial phase). */
  onPlaybackStart?(nowS: number): void;
  /** The buffer ran dry during playback. */
  onStall?(nowS: number): void;
  /** A download in flight: return another rung to abandon it and fetch the segment there, or null. */
  onProgress?(progress: DownloadProgress): number | null;
}

/**
 * How long the player waits before its next video request, given the buffer now
 * (dash.js ScheduleController._shouldBuffer: it requests while buffer + one segment is
 * below the arm's target; the segment is not counted when the target is below one
 * segment). The simulator and the headless player schedule by this one rule.
 */
export function waitBeforeRequestS(policy: ArmPolicy, lastRung: number, bufferS: number, segmentS: number): number {
  const targetS = policy.bufferTargetS(lastRung, bufferS);
  return Math.max(0, bufferS + (targetS <= segmentS ? 0 : segmentS) - targetS);
}
