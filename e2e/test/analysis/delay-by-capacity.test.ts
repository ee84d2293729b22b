import { createHash } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { capacityBeforeMbps, capacityClassLabel, traceCapacity, traceCapacityOf, traceSpanS, udpDelayByCapacity, udpDelayByTime } from '../../src/analysis/delay-by-capacity.js';
import { parseScenario } from '../../src/scenario/scenario.js';
import type { LabResult, TrialRecord } from '../../src/analysis/result.js';
import { opportunitySchedule, readTrace } from '../../src/scenario/trace.js';

const dir = mkdtempSync(join(tmpdir(), 'sammy-capacity-'));
// 5 s without capacity, then 4.8 Mbit/s (one 1500 B opportunity every 2.5 ms), held.
const STEPS = JSON.stringify([{ durationS: 5, bandwidthKbps: 0 }, { durationS: 1, bandwidthKbps: 4800 }]);
const tracePath = join(dir, 'dead-then-4.8.json');
writeFileSync(tracePath, STEPS);
const capacity = traceCapacity(opportunitySchedule(readTrace(tracePath)), 20);

function trial(arm: string, packets: Array<[number, number]>, over: Partial<TrialRecord> = {}): TrialRecord {
  // Play request (the trace's restart) at 1 s, first frame at 2 s, the neighbour's window from playback start:
  // a packet sent at t ms into the window is at trace time 1 + t / 1000 s.
  return {
    arm, trial: 1, neighbour: 'udp', error: null, playbackStartS: 2, traceStartS: 1, window: { startS: 0, endS: 30 },
    neighbourRaw: { kind: 'udp', rateKbps: 250, packetBytes: 1200, sent: packets.length, packets },
    ...over,
  } as unknown as TrialRecord;
}

describe('capacity before a moment of the trace', () => {
  test('none in the dead stretch, the step rate a second into the next, a mix across the edge', () => {
    expect(capacityBeforeMbps(capacity, 3)).toBe(0);
    expect(capacityBeforeMbps(capacity, 7)).toBeCloseTo(4.8, 6);
    expect(capacityBeforeMbps(capacity, 5.5)).toBeCloseTo(2.4, 1);
  });

  test('null before the first second and beyond what the series covers', () => {
    expect(capacityBeforeMbps(capacity, 0.5)).toBeNull();
    expect(capacityBeforeMbps(capacity, 25)).toBeNull();
  });

  test('class labels', () => {
    expect(capacityClassLabel(0)).toBe('0-0.5 Mbit/s');
    expect(capacityClassLabel(5)).toBe('5 Mbit/s and more');
  });
});

describe('udpDelayByTime', () => {
  test("packets go to the bin of their send time since playback start (the window's start added); sessions' means are averaged per arm", () => {
    const d = udpDelayByTime(
      [
        // Window from playback start: 1 s and 4 s fall in the first 10 s bin, 12 s in the second.
        trial('control', [[1000, 100], [4000, 300], [12_000, 40]]),
        trial('control', [[2000, 400]]),
        // A window that starts 10 s after playback start: its packet at 3 s is at 13 s.
        trial('sammy', [[3000, 70]], { window: { startS: 10, endS: 30 } }),
        // Beyond the session's 25 s: left out.
        trial('sammy', [[26_000, 9999]]),
      ],
      25,
    )!;
    expect(d.byClass.map((c) => c.label)).toEqual(['0-10 s', '10-20 s', '20-25 s']);
    expect(d.packets).toBe(5);
    expect(d.byClass[0]!.arms.control).toMatchObject({ mean: 300, n: 2 }); // sessions: 200 and 400
    expect(d.byClass[0]!.arms.sammy!.n).toBe(0);
    expect(d.byClass[1]!.arms.control).toMatchObject({ mean: 40, n: 1 });
    expect(d.byClass[1]!.arms.sammy).toMatchObject({ mean: 70, n: 1 });
    expect(d.byClass[2]!.packetShare).toBe(0);
  });

  test('it needs no trace: a session without a trace restart time still counts; failed sessions do not', () => {
    const d = udpDelayByTime([trial('control', [[1000, 5]], { traceStartS: null } as Partial<TrialRecord>), trial('control', [[1000, 500]], { error: 'boom' })], 10)!;
    expect(d.byClass[0]!.arms.control).toMatchObject({ mean: 5, n: 1 });
    expect(udpDelayByTime([trial('control', [[1000, 5]], { error: 'boom' })], 10)).toBeNull();
  });
});

describe('udpDelayByCapacity', () => {
  test("each session's packets go to the class of the capacity before them; sessions' means are averaged per arm", () => {
    const d = udpDelayByCapacity(
      [
        // trace time 2 and 3 s (dead): 1000 and 3000 ms; 8 and 9 s (4.8 Mbit/s): 10 and 30 ms.
        trial('control', [[1000, 1000], [2000, 3000], [7000, 10], [8000, 30]]),
        trial('control', [[1500, 2000], [7500, 50]]),
        trial('sammy', [[7000, 5], [8000, 7]]),
      ],
      capacity,
    )!;
    expect(d.packets).toBe(8);
    const dead = d.byClass[0]!;
    expect(dead.label).toBe('0-0.5 Mbit/s');
    expect(dead.packetShare).toBeCloseTo(3 / 8, 9);
    expect(dead.arms.control).toMatchObject({ mean: 2000, n: 2 }); // sessions: 2000 and 2000
    expect(dead.arms.sammy!.n).toBe(0);
    const live = d.byClass.find((c) => c.label === '3-5 Mbit/s')!;
    expect(live.arms.control).toMatchObject({ mean: 35, n: 2 }); // sessions: 20 and 50
    expect(live.arms.sammy).toMatchObject({ mean: 6, n: 1 });
    expect(d.byClass.find((c) => c.label === '1-2 Mbit/s')!.packetShare).toBe(0);
  });

  test("a session that started its trace later (link.traceStart spread) reads the capacity at its own point of the trace", () => {
    // Sent 3 s into the window: trace time 4 s from the trace's start (dead), 7 s from a restart at 3 s (4.8 Mbit/s).
    const d = udpDelayByCapacity([trial('control', [[3000, 900]]), trial('sammy', [[3000, 20]], { traceFromS: 3 })], capacity)!;
    expect(d.byClass[0]!.arms.control).toMatchObject({ mean: 900, n: 1 });
    expect(d.byClass[0]!.arms.sammy!.n).toBe(0);
    expect(d.byClass.find((c) => c.label === '3-5 Mbit/s')!.arms.sammy).toMatchObject({ mean: 20, n: 1 });
  });

  test('failed sessions, other neighbours and packets outside the series are left out; nothing left gives null', () => {
    expect(udpDelayByCapacity([trial('control', [[1000, 5]], { error: 'boom' }), trial('control', [[40_000, 5]]), trial('sammy', [[1000, 5]], { neighbourRaw: null } as Partial<TrialRecord>)], capacity)).toBeNull();
  });
});

describe('traceCapacityOf', () => {
  const sha256 = createHash('sha256').update(STEPS).digest('hex');
  const result = (trace: object, traceCapacityField?: object) =>
    ({
      config: { scenario: { link: { trace }, session: { startupTimeoutS: 5, playS: 10 } } },
      trials: [],
      ...(traceCapacityField ? { traceCapacity: traceCapacityField } : {}),
    }) as unknown as LabResult;

  test('a result that carries its series uses it', () => {
    const own = { binS: 0.1, bytesPerBin: [1] };
    expect(traceCapacityOf(result({ file: 'nowhere.json', path: '/nowhere.json', sha256: 'x' }, own))).toBe(own);
  });

  test('an older result: from its trace file when the file is unchanged, else none', () => {
    const rebuilt = traceCapacityOf(result({ file: 'nowhere.json', path: tracePath, sha256 }))!;
    expect(rebuilt.bytesPerBin).toEqual(traceCapacity(opportunitySchedule(readTrace(tracePath)), 20).bytesPerBin);
    expect(traceCapacityOf(result({ file: 'nowhere.json', path: tracePath, sha256: '0'.repeat(64) }))).toBeNull();
    expect(traceCapacityOf(result({ file: 'nowhere.json', path: '/nowhere.json', sha256 }))).toBeNull();
  });

  test("the series reaches as far as the last trial's sessions can: their start point in the trace, the startup timeout, the session and 5 s", () => {
    const s = parseScenario({ name: 'x', trials: 4, link: { trace: tracePath, rttMs: 40, traceStart: 'spread' }, media: { durationS: 100 }, session: { playS: 10, startupTimeoutS: 5 }, neighbours: [{ kind: 'none' }], arms: ['control'] }, dir);
    // One pass is 6 s (up to the last step plus 1 s): the last trial starts at 4.5 s.
    expect(traceSpanS(s)).toBeCloseTo(4.5 + 5 + 10 + 5, 9);
    expect(traceSpanS({ ...s, link: { ...s.link, traceStart: 'beginning' } })).toBe(20);
  });

  test('a constant link has none', () => {
    expect(traceCapacityOf(result(null as unknown as object))).toBeNull();
  });
});
