/**
 * The records the lab's runtime hands to a result (a session, the delay line's
 * statistics, the code version): plain data, below both the runtime modules that fill
 * them and the result and report that read them.
 */
import type { Arm, SessionQoE } from '@sammy/player/abr';

/** One video session's record: in Chromium (the lab's session.ts) or the headless player. */
export interface SessionResult {
  arm: Arm;
  url: string;
  /** Epoch ms when the autoplaying page was requested (the play request). */
  originMs: number;
  /** Epoch ms when the first frame was seen (null if it never was). */
  playbackStartMs: number | null;
  qoe: SessionQoE | null;
  /** The page's full player config (`window.sammy.config()`). */
  playerConfig: Record<string, unknown> | null;
  /** [s since origin, buffer ahead of the playhead (s), playhead (s)]. */
  buffer: Array<[number, number, number]>;
  pageErrors: string[];
}

/** What the delay line (labtools delay) reported at teardown, per direction. */
export interface DelayLineStats {
  down: DirectionStats;
  up: DirectionStats;
}
export interface DirectionStats {
  delayMs: number;
  /** Trace mode (downlink of a trace link): the bottleneck queue in the delay line. */
  trace?: {
    queueLimitBytes: number;
    maxQueuedBytes: number;
    dropsQueue: number;
    servedBytes: number;
    opportunities: number;
    unusedOpportunities: number;
    restarts: number;
  };
  packets: number;
  bytes: number;
  dropsFull: number;
  writeErrors: number;
  maxQueued: number;
  latenessUs: { p50: number; p99: number; p999: number; max: number };
}

/** Which code a run ran (`config.code`): the lab's code-version.ts reads it from git. */
export interface CodeVersion {
  /** `git rev-parse HEAD` of the checkout the lab ran from. */
  commit: string | null;
  /** Files `git status --porcelain` listed (changed, added, untracked): 0 is the commit as it is. */
  changedFiles: number | null;
}
