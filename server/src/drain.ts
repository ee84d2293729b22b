// The drain policy: when to look again at bytes of a response that have not left the
// socket yet, and when to stop looking. Pure: a look (what TCP_INFO and Node's buffers
// said, and when) goes in, a decision comes out; the caller owns the timer.
//
// The same policy is compiled into the C core (native/core/rate.h, sammy_drain_poll_ms)
// that the Traffic Server plugin and the nginx module use. These constants are the
// source: native/test/core.test.ts reads the C #defines through the test driver and
// fails if any differs from these, and checks drainPollMs against the C function on
// the same cases (the C one returns whole milliseconds: drainPollMs floored).

/** Never look again sooner than this. */
export const DRAIN_POLL_MIN_MS = 1;
/** An unpaced tail's rate is a guess: look again within this. */
export const DRAIN_POLL_MAX_MS = 1000;
/**
 * A paced tail cannot leave faster than its cap: look when it can have left, at most
 * this far ahead (the native modules' ceiling; the Node server passes its own, below).
 */
export const PACED_DRAIN_POLL_MAX_MS = 30_000;
/** Assumed send rate of an unpaced tail until the kernel has a delivery-rate sample. */
export const UNPACED_DRAIN_RATE_BYTES_PER_S = 1_000_000;
/**
 * A tail that has not moved for this long (a client that stopped reading) is released
 * anyway; normally the keep-alive timeout closes such a connection first.
 */
export const MAX_DRAIN_STALL_MS = 120_000;

export interface DrainPollInput {
  /** Bytes that have not left yet. */
  unsentBytes: number;
  /** The response's cap; null (or 0, as the C side says it) when unpaced. */
  rateBytesPerS: number | null;
  /** TCP_INFO delivery_rate; 0 when the kernel has no sample yet. */
  deliveryRateBytesPerS: number;
  /** Added to the expected send time before the bounds (a held-back last byte's wait, tail.ts); default 0. */
  extraMs?: number;
  /** The ceiling for a paced tail; default PACED_DRAIN_POLL_MAX_MS. */
  pacedMaxMs?: number;
}

/**
 * How long to wait before the next look: the expected remaining send time, at the cap
 * when paced, else at the kernel's delivery rate, else at an assumed rate; within
 * [DRAIN_POLL_MIN_MS, the paced ceiling or DRAIN_POLL_MAX_MS]. Milliseconds, not
 * rounded (sammy_drain_poll_ms is this, floored).
 */
export function drainPollMs(input: DrainPollInput): number {
  const paced = input.rateBytesPerS !== null && input.rateBytesPerS > 0;
  const rate = paced ? input.rateBytesPerS! : input.deliveryRateBytesPerS || UNPACED_DRAIN_RATE_BYTES_PER_S;
  const maxMs = paced ? (input.pacedMaxMs ?? PACED_DRAIN_POLL_MAX_MS) : DRAIN_POLL_MAX_MS;
  const sendMs = (input.unsentBytes * 1000) / rate + (input.extraMs ?? 0);
  return Math.min(maxMs, Math.max(DRAIN_POLL_MIN_MS, sendMs));
}

/** What a drain wait knows between looks. Never mutated: each look returns the next. */
export interface DrainWatch {
  /** The response's cap; null when unpaced. */
  rateBytesPerS: number | null;
  extraMs: number;
  pacedMaxMs: number;
  /** Give up after the unsent count has not fallen for this long (Infinity: never). */
  stallLimitMs: number;
  /** When the unsent count last fell (or the wait began). */
  progressMs: number;
  /** The unsent count at the last look (Infinity before the first). */
  lastUnsentBytes: number;
}

export interface DrainLook {
  /** Bytes that have not left: TCP_INFO notsent_bytes plus any Node still holds; null: TCP_INFO unreadable. */
  unsentBytes: number | null;
  deliveryRateBytesPerS: number;
  nowMs: number;
}

export type DrainStep =
  /** Nothing left unsent (or nothing more can be learnt: TCP_INFO unreadable). */
  | { kind: 'left' }
  /** The unsent count has not fallen for stallLimitMs. */
  | { kind: 'stalled' }
  /** Look again in waitMs; `moved`: the unsent count fell since the last look. */
  | { kind: 'wait'; waitMs: number; moved: boolean; watch: DrainWatch };

export function newDrainWatch(opts: Pick<DrainWatch, 'rateBytesPerS' | 'extraMs' | 'pacedMaxMs' | 'stallLimitMs' | 'progressMs'>): DrainWatch {
  return { ...opts, lastUnsentBytes: Infinity };
}

/** One look at a draining socket: done, or how long until the next look. */
export function drainStep(watch: DrainWatch, look: DrainLook): DrainStep {
  if (look.unsentBytes === null || look.unsentBytes === 0) return { kind: 'left' };
  if (look.nowMs - watch.progressMs > watch.stallLimitMs) return { kind: 'stalled' };
  const moved = look.unsentBytes < watch.lastUnsentBytes;
  const waitMs = drainPollMs({
    unsentBytes: look.unsentBytes,
    rateBytesPerS: watch.rateBytesPerS,
    deliveryRateBytesPerS: look.deliveryRateBytesPerS,
    extraMs: watch.extraMs,
    pacedMaxMs: watch.pacedMaxMs,
  });
  return { kind: 'wait', waitMs, moved, watch: { ...watch, progressMs: moved ? look.nowMs : watch.progressMs, lastUnsentBytes: look.unsentBytes } };
}
