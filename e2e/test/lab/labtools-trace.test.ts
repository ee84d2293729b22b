/**
 * The delay line's trace mode (labtools.c), on a simulated clock (`labtools trace-sim`):
 * the same queue and opportunity code the lab's downlink runs, without namespaces.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildLabtools, gccUnavailableReason, traceSim } from '../../src/lab/native.js';
import { loadScenario } from '../../src/scenario/scenario.js';
import { capacityPerBin, OPPORTUNITY_BYTES, opportunitySchedule, readTrace, scheduleText, type OpportunitySchedule } from '../../src/scenario/trace.js';

const reason = gccUnavailableReason();
const dir = mkdtempSync(join(tmpdir(), 'sammy-tracesim-'));
let labtools = '';

beforeAll(async () => {
  if (reason === null) labtools = await buildLabtools();
}, 120_000);

function sim(schedule: OpportunitySchedule, queueBytes: number, packets: Array<[number, number]>, startUs = 0): string[] {
  const file = join(dir, `s-${Math.random().toString(36).slice(2)}.txt`);
  writeFileSync(file, scheduleText(schedule, 'test'));
  return traceSim(labtools, file, queueBytes, packets, startUs);
}

(reason ? describe.skip : describe)('labtools trace mode', () => {
  const schedule = { offsetsUs: [0, 1000, 1500, 3000], periodUs: 10_000, loopFromUs: 0 };

  test('each opportunity serves up to 1500 B in order, a split packet finishes at the next, droptail by bytes, the trace repeats', () => {
    const out = sim(schedule, 3000, [
      [0, 1500], // at the opportunity itself: served by it
      [100, 1000], // 1000 B at 1000 us, leaving 500 B of that opportunity
      [100, 1000], // 500 B at 1000 us, the rest at 1500 us
      [3100, 1500], // after the last opportunity of the first pass: 10,000 us
      [3100, 1500], // 11,000 us
      [3100, 1500], // the queue holds 3000 B: dropped
      [9000, 1500], // still full: dropped
      [11_200, 100], // 11,000 us had passed when it came: 11,500 us
    ]);
    expect(out).toEqual(['served 0', 'served 1000', 'served 1500', 'drop 5', 'drop 6', 'served 10000', 'served 11000', 'served 11500']);
  });

  test('a restart at a trace time serves from the first opportunity at or after it, in a later pass too', () => {
    // From 1200 us: the opportunity at 1000 us is gone, 1500 us is the first.
    expect(sim(schedule, 3000, [[1200, 1500], [1200, 1500]], 1200)).toEqual(['served 1500', 'served 3000']);
    // From 3001 us, past the pass's last opportunity: the next pass's first, at 10,000 us.
    expect(sim(schedule, 3000, [[3001, 1500]], 3001)).toEqual(['served 10000']);
    // From 21,200 us, in the third pass (period 10 ms): 21,500 us.
    expect(sim(schedule, 3000, [[21_200, 100]], 21_200)).toEqual(['served 21500']);
    // A trace whose repeating part starts later: past its first pass, only [loop_from_us, period_us) repeats.
    const looped = { offsetsUs: [0, 1000, 6000, 8000], periodUs: 10_000, loopFromUs: 5000 };
    // 14,000 us is 9000 us into the repeating part's second pass (5 ms long, from 10,000 us): 15,000 + (6000 - 5000) = 16,000 us.
    expect(sim(looped, 3000, [[14_000, 100]], 14_000)).toEqual(['served 16000']);
  });

  test('a bad start is refused with the option named', () => {
    expect(() => sim(schedule, 3000, [], -5)).toThrow(/--start-us must be a whole number of microseconds >= 0, got "-5"/);
  });

  test('an opportunity that finds the queue empty is lost', () => {
    expect(sim(schedule, 3000, [[1200, 1500], [1300, 1500]])).toEqual(['served 1500', 'served 3000']);
  });

  test('under a queue that never empties, the bytes served per second are the trace capacity (AT&T LTE, 20 s)', () => {
    const lte = opportunitySchedule(readTrace(loadScenario('cellular-lte').link.trace!.path));
    const seconds = 20;
    const capacity = capacityPerBin(lte, 1e6, seconds);
    // A standing queue from the start, then full-size packets faster than the trace ever delivers (every 0.1 ms), into a deep queue.
    const packets: Array<[number, number]> = Array.from({ length: 100 }, () => [0, OPPORTUNITY_BYTES] as [number, number]);
    for (let us = 0; us < seconds * 1e6; us += 100) packets.push([us, OPPORTUNITY_BYTES]);
    const served = new Array<number>(seconds).fill(0);
    for (const line of sim(lte, 2_000_000, packets)) {
      const m = /^served (\d+)$/.exec(line);
      if (m && Number(m[1]) < seconds * 1e6) served[Math.floor(Number(m[1]) / 1e6)]! += OPPORTUNITY_BYTES;
    }
    expect(served).toEqual(capacity);
  });
});
