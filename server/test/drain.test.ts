// The drain policy (src/drain.ts): pure, so every case is a look in and a decision out.
// native/test/core.test.ts checks the C core's sammy_drain_poll_ms and its constants
// against the same functions.
import {
  DRAIN_POLL_MAX_MS,
  DRAIN_POLL_MIN_MS,
  drainPollMs,
  drainStep,
  MAX_DRAIN_STALL_MS,
  newDrainWatch,
  PACED_DRAIN_POLL_MAX_MS,
  UNPACED_DRAIN_RATE_BYTES_PER_S,
  type DrainWatch,
} from '../src/drain.js';

describe('drainPollMs', () => {
  test('a paced tail is looked at when it can have left at its cap', () => {
    expect(drainPollMs({ unsentBytes: 50_000, rateBytesPerS: 5_000_000, deliveryRateBytesPerS: 9_000_000 })).toBe(10);
    expect(drainPollMs({ unsentBytes: 50_000_000, rateBytesPerS: 5_000_000, deliveryRateBytesPerS: 0 })).toBe(10_000);
  });

  test('a paced tail waits at most the paced ceiling, which the caller may lower', () => {
    const look = { unsentBytes: 500_000_000, rateBytesPerS: 5_000_000, deliveryRateBytesPerS: 0 };
    expect(drainPollMs(look)).toBe(PACED_DRAIN_POLL_MAX_MS);
    expect(drainPollMs({ ...look, pacedMaxMs: DRAIN_POLL_MAX_MS })).toBe(DRAIN_POLL_MAX_MS);
  });

  test("an unpaced tail goes at the kernel's delivery rate, else an assumed one, and is looked at within 1 s", () => {
    expect(drainPollMs({ unsentBytes: 100_000, rateBytesPerS: null, deliveryRateBytesPerS: 2_000_000 })).toBe(50);
    expect(drainPollMs({ unsentBytes: 300_000, rateBytesPerS: null, deliveryRateBytesPerS: 0 })).toBe((300_000 * 1000) / UNPACED_DRAIN_RATE_BYTES_PER_S);
    expect(drainPollMs({ unsentBytes: 4_000_000, rateBytesPerS: 0, deliveryRateBytesPerS: 2_000_000 })).toBe(DRAIN_POLL_MAX_MS);
    // A ceiling for paced tails changes nothing for an unpaced one.
    expect(drainPollMs({ unsentBytes: 4_000_000, rateBytesPerS: null, deliveryRateBytesPerS: 1, pacedMaxMs: 5 })).toBe(DRAIN_POLL_MAX_MS);
  });

  test('never sooner than the floor; a held-back byte adds its wait before the bounds', () => {
    expect(drainPollMs({ unsentBytes: 0, rateBytesPerS: 5_000_000, deliveryRateBytesPerS: 0 })).toBe(DRAIN_POLL_MIN_MS);
    expect(drainPollMs({ unsentBytes: 999, rateBytesPerS: null, deliveryRateBytesPerS: 1_000_000 })).toBe(DRAIN_POLL_MIN_MS);
    expect(drainPollMs({ unsentBytes: 5000, rateBytesPerS: 5_000_000, deliveryRateBytesPerS: 0, extraMs: 2.5 })).toBe(3.5);
    expect(drainPollMs({ unsentBytes: 0, rateBytesPerS: 5_000_000, deliveryRateBytesPerS: 0, extraMs: 0.25 })).toBe(DRAIN_POLL_MIN_MS);
  });
});

describe('drainStep', () => {
  const watch = (over: Partial<DrainWatch> = {}): DrainWatch => ({
    ...newDrainWatch({ rateBytesPerS: 1_000_000, extraMs: 0, pacedMaxMs: DRAIN_POLL_MAX_MS, stallLimitMs: MAX_DRAIN_STALL_MS, progressMs: 0 }),
    ...over,
  });

  test('nothing unsent, or TCP_INFO unreadable: the bytes have left', () => {
    expect(drainStep(watch(), { unsentBytes: 0, deliveryRateBytesPerS: 0, nowMs: 5 })).toEqual({ kind: 'left' });
    expect(drainStep(watch(), { unsentBytes: null, deliveryRateBytesPerS: 0, nowMs: 5 })).toEqual({ kind: 'left' });
  });

  test('the first look counts as progress; a count that fell moves the progress time, one that did not keeps it', () => {
    const first = drainStep(watch(), { unsentBytes: 10_000, deliveryRateBytesPerS: 0, nowMs: 100 });
    expect(first).toEqual({ kind: 'wait', waitMs: 10, moved: true, watch: watch({ progressMs: 100, lastUnsentBytes: 10_000 }) });
    if (first.kind !== 'wait') throw new Error('unreachable');
    const same = drainStep(first.watch, { unsentBytes: 10_000, deliveryRateBytesPerS: 0, nowMs: 200 });
    expect(same).toMatchObject({ kind: 'wait', moved: false, watch: { progressMs: 100, lastUnsentBytes: 10_000 } });
    const fell = drainStep(first.watch, { unsentBytes: 4000, deliveryRateBytesPerS: 0, nowMs: 300 });
    expect(fell).toMatchObject({ kind: 'wait', waitMs: 4, moved: true, watch: { progressMs: 300, lastUnsentBytes: 4000 } });
    // The watch it was given is unchanged.
    expect(first.watch).toEqual(watch({ progressMs: 100, lastUnsentBytes: 10_000 }));
  });

  test('a count that has not fallen for longer than the stall limit is given up; the limit is checked before this look counts', () => {
    const w = watch({ progressMs: 0, lastUnsentBytes: 10_000 });
    expect(drainStep(w, { unsentBytes: 10_000, deliveryRateBytesPerS: 0, nowMs: MAX_DRAIN_STALL_MS })).toMatchObject({ kind: 'wait' });
    expect(drainStep(w, { unsentBytes: 10_000, deliveryRateBytesPerS: 0, nowMs: MAX_DRAIN_STALL_MS + 1 })).toEqual({ kind: 'stalled' });
    expect(drainStep(w, { unsentBytes: 9000, deliveryRateBytesPerS: 0, nowMs: MAX_DRAIN_STALL_MS + 1 })).toEqual({ kind: 'stalled' });
    expect(drainStep(watch({ stallLimitMs: Infinity }), { unsentBytes: 1, deliveryRateBytesPerS: 0, nowMs: 1e12 })).toMatchObject({ kind: 'wait' });
  });

  test("the wait is drainPollMs of the watch's rate, ceiling and extra time", () => {
    const w = watch({ rateBytesPerS: null, extraMs: 3, pacedMaxMs: PACED_DRAIN_POLL_MAX_MS });
    const step = drainStep(w, { unsentBytes: 40_000, deliveryRateBytesPerS: 2_000_000, nowMs: 1 });
    expect(step).toMatchObject({ kind: 'wait', waitMs: drainPollMs({ unsentBytes: 40_000, rateBytesPerS: null, deliveryRateBytesPerS: 2_000_000, extraMs: 3 }) });
    expect(step).toMatchObject({ waitMs: 23 });
  });
});
