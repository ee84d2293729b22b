import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Managed } from '../../src/lab/processes.js';
import { queueDelayMsOf } from '../../src/analysis/queue-samples.js';
import { parseDelaySamples, startDelayLineQueueMonitor } from '../../src/lab/queue-monitor.js';
import { bdpBytes, linkRateMbps, loadScenario, parseScenario, queueBytes, traceStartS, withOverrides } from '../../src/scenario/scenario.js';
import { restartTrace } from '../../src/lab/trace-link.js';
import { capacityPerBin, correlation, cumulativeAt, longestOutage, opportunitySchedule, outages, readTrace, resumeAfterOutage, scheduleText, traceFidelity } from '../../src/scenario/trace.js';

const dir = mkdtempSync(join(tmpdir(), 'sammy-trace-'));
function file(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

describe('opportunitySchedule', () => {
  test("a mahimahi trace gives back its own opportunities; the one at the period is the next repetition's first", () => {
    const s = opportunitySchedule(readTrace(file('tiny.down', '1\n1\n3\n10\n')));
    // Two opportunities in one millisecond are spread over it.
    expect(s).toEqual({ offsetsUs: [0, 1000, 1500, 3000], periodUs: 10_000, loopFromUs: 0 });
    expect(capacityPerBin(s, 5000, 4)).toEqual([6000, 0, 6000, 0]);
  });

  test('a steps trace: opportunities at its rate, none in a zero step, and its last step repeats in whole opportunities', () => {
    // 120 kbit/s = 15,000 B/s: 10 opportunities a second; 1200 kbit/s: one every 10 ms.
    const path = file('steps.json', JSON.stringify([{ durationS: 1, bandwidthKbps: 120 }, { durationS: 2, bandwidthKbps: 0 }, { durationS: 1, bandwidthKbps: 1200 }]));
    const s = opportunitySchedule(readTrace(path));
    expect(s.offsetsUs.slice(0, 10)).toEqual([0, 100_000, 200_000, 300_000, 400_000, 500_000, 600_000, 700_000, 800_000, 900_000]);
    expect(s.offsetsUs[10]).toBe(3_000_000);
    expect(s.offsetsUs).toHaveLength(110);
    expect(s.loopFromUs).toBe(3_000_000);
    expect(s.periodUs).toBe(4_000_000);
    expect(capacityPerBin(s, 1e6, 6)).toEqual([15_000, 0, 0, 150_000, 150_000, 150_000]);
  });

  test('capacity left over from a step carries into the next', () => {
    // 30 kbit/s for 0.5 s is 1875 B: opportunities at 0 and 0.4 s, 375 B carried;
    // at 24 kbit/s (3000 B/s) the next MTU is complete 0.375 s into the last step.
    const path = file('carry.json', JSON.stringify([{ durationS: 0.5, bandwidthKbps: 30 }, { durationS: 1, bandwidthKbps: 0 }, { durationS: 1, bandwidthKbps: 24 }]));
    const s = opportunitySchedule(readTrace(path));
    expect(s.offsetsUs.slice(0, 4)).toEqual([0, 400_000, 1_875_000, 2_375_000]);
  });

  test('the schedule file the delay line reads', () => {
    const text = scheduleText({ offsetsUs: [0, 1000], periodUs: 5000, loopFromUs: 0 }, 'x.down');
    expect(text.split('\n')).toEqual(['# delivery opportunities of x.down, us from the trace\'s start', 'period_us 5000', 'loop_from_us 0', '0', '1000', '']);
  });

  test('the shipped cellular traces keep their mean rate', () => {
    const lte = loadScenario('cellular-lte');
    const s = opportunitySchedule(readTrace(lte.link.trace!.path));
    expect(s.offsetsUs).toHaveLength(45_604);
    const bytes = capacityPerBin(s, s.periodUs, 1)[0]!;
    expect((bytes * 8) / (s.periodUs / 1e6) / 1e6).toBeCloseTo(lte.link.trace!.meanRateMbps, 6);
  });
});

describe('outages', () => {
  test('gaps of at least a second between opportunities that end before the given time, repetitions included', () => {
    const s = { offsetsUs: [0, 500_000, 2_000_000, 2_100_000], periodUs: 5_000_000, loopFromUs: 0 };
    // 0.5 -> 2.0 s, 2.1 -> 5.0 s (the next pass's first), 5.5 -> 7.0 s.
    expect(outages(s, 7.5)).toEqual([{ startS: 0.5, endS: 2 }, { startS: 2.1, endS: 5 }, { startS: 5.5, endS: 7 }]);
    expect(outages(s, 4)).toEqual([{ startS: 0.5, endS: 2 }]);
    expect(outages(s, 7.5, 2)).toEqual([{ startS: 2.1, endS: 5 }]);
  });

  test("the longest outage a session met, from its start point in the trace: one it began in counts from its start", () => {
    const s = { offsetsUs: [0, 500_000, 2_000_000, 2_100_000], periodUs: 5_000_000, loopFromUs: 0 };
    expect(longestOutage(s, 0, 7.5)).toEqual({ startS: 2.1, endS: 5 });
    // From 3 s: 2.1 -> 5.0 counts as 3 -> 5; 5.5 -> 7.0 is shorter.
    expect(longestOutage(s, 3, 7.5)).toEqual({ startS: 3, endS: 5 });
    // From 4.2 s only 0.8 s of the first is met (under a second): the next pass's 5.5 -> 7.0 is the one.
    expect(longestOutage(s, 4.2, 7.5)).toEqual({ startS: 5.5, endS: 7 });
    expect(longestOutage(s, 4.2, 6)).toBeNull();
  });

  test('the outage scenario has one of 10 s, from 15 s', () => {
    const outage = loadScenario('outage');
    const found = outages(opportunitySchedule(readTrace(outage.link.trace!.path)), outage.session.playS);
    expect(found).toHaveLength(1);
    expect(found[0]!.startS).toBeCloseTo(15, 2);
    expect(found[0]!.endS).toBe(25);
  });

  test('playback that went on, that stalled and came back, and that never came back', () => {
    const samples = (playhead: number[]): Array<[number, number, number]> => playhead.map((p, i) => [i * 0.5, 0, p]);
    // Never stopped: 0.
    expect(resumeAfterOutage(samples([0, 0.5, 1, 1.5, 2, 2.5, 3, 3.5]), 2)).toEqual({ resumed: true, resumeS: 0 });
    // Stalled from 1 s to 3 s, the outage ended at 2 s: the playhead moves from the 3 s sample on.
    expect(resumeAfterOutage(samples([0, 0.5, 1, 1, 1, 1, 1, 1.5, 2]), 2)).toEqual({ resumed: true, resumeS: 1 });
    expect(resumeAfterOutage(samples([0, 0.5, 1, 1, 1, 1, 1, 1, 1]), 2)).toEqual({ resumed: false, resumeS: null });
  });
});

describe('trace links in a scenario', () => {
  const base = { name: 'x', media: { durationS: 100 }, neighbours: [{ kind: 'none' }], arms: ['control'] };
  const steps = file('flat.json', JSON.stringify([{ durationS: 10, bandwidthKbps: 8000 }, { durationS: 10, bandwidthKbps: 0 }, { durationS: 1, bandwidthKbps: 8000 }]));

  test('the path is relative to the scenario file; the queue in BDP is taken at the mean rate', () => {
    const sub = join(dir, 'scenarios');
    mkdirSync(sub, { recursive: true });
    const path = join(sub, 't.json');
    writeFileSync(path, JSON.stringify({ ...base, link: { trace: '../flat.json', rttMs: 40, queue: { bdp: 2 } } }));
    const s = loadScenario(path);
    expect(s.link.trace).toMatchObject({ file: '../flat.json', path: steps, format: 'steps', periodS: null });
    // 8 Mbit/s for 10 of the 21 s up to the last step plus 1 s.
    expect(linkRateMbps(s.link)).toBeCloseTo((8 * 11) / 21, 9);
    expect(bdpBytes(s.link)).toBeCloseTo(((8 * 11) / 21) * 1e6 * 0.04 / 8, 6);
    expect(queueBytes(s.link)).toBe(Math.round(2 * bdpBytes(s.link)));
    expect(s.link).toMatchObject({ rateMbps: null, calibrationS: 30, traceStart: 'beginning' });
    expect(s.link.trace!.lengthS).toBe(21);
  });

  test('traceStart spread: trial k of K starts at (k - 1) / K of one pass of the trace, every trial at 0 otherwise', () => {
    const spread = parseScenario({ ...base, trials: 4, link: { trace: 'flat.json', rttMs: 40, traceStart: 'spread' } }, dir);
    expect([0, 1, 2, 3, 4].map((k) => traceStartS(spread, k))).toEqual([0, 0, 5.25, 10.5, 15.75]);
    // --trials changes the spacing.
    expect(traceStartS(withOverrides(spread, { trials: 2 }), 2)).toBe(10.5);
    const umts = loadScenario('cellular-umts');
    expect([1, 2, 3].map((k) => traceStartS({ ...umts, link: { ...umts.link, traceStart: 'beginning' } }, k))).toEqual([0, 0, 0]);
    expect(traceStartS(parseScenario({ ...base, link: { rateMbps: 10, rttMs: 40 } }, dir), 3)).toBe(0);
  });

  test.each([
    [{ rateMbps: 10, trace: 'flat.json', rttMs: 40 }, /scenario field link = .* expected exactly one of rateMbps .* and trace/],
    [{ rttMs: 40 }, /scenario field link = .* expected exactly one of rateMbps/],
    [{ trace: 'nope.down', rttMs: 40 }, /link.trace = "nope.down" is invalid: expected a mahimahi trace or a JSON steps file, relative to the scenario file \(.*nope.down: cannot read trace/],
    [{ trace: 'bad.down', rttMs: 40 }, /link.trace = "bad.down" .*one integer millisecond timestamp per line/],
    [{ trace: 'flat.json', rttMs: 40, shapeUpstream: true }, /link.shapeUpstream = true .*false on a trace link/],
    [{ trace: 'flat.json', rttMs: 40, calibrationS: 1 }, /link.calibrationS = 1 .*from 5 to 3600/],
    [{ rateMbps: 10, rttMs: 40, calibrationS: 30 }, /link.calibrationS = 30 .*only a trace link/],
    [{ trace: 'flat.json', rttMs: 40, traceStart: 'middle' }, /link.traceStart = "middle" .*beginning, spread/],
    [{ rateMbps: 10, rttMs: 40, traceStart: 'spread' }, /link.traceStart = "spread" .*only a trace link/],
  ])('refuses link %# with a message naming the field', (link, message) => {
    file('bad.down', '3\nfour\n');
    expect(() => parseScenario({ ...base, link }, dir)).toThrow(message);
  });

  test('--trace runs a trace scenario on another trace (its queue in BDP at the new mean rate), --trace-start moves the trials; both refused with a reason', () => {
    const umts = loadScenario('cellular-umts');
    const other = withOverrides(umts, { trace: steps, traceStart: 'beginning' });
    expect(other.link.trace).toMatchObject({ file: steps, path: steps, format: 'steps', lengthS: 21 });
    expect(other.link.traceStart).toBe('beginning');
    expect(queueBytes(other.link)).toBe(Math.round(4 * ((8 * 11) / 21) * 1e6 * 0.04 / 8));
    expect(other.description).toContain(`[The link's trace replaced from the command line: --trace ${steps}.]`);
    // The scenario itself is left as it was.
    expect(umts.link.trace!.format).toBe('mahimahi');
    expect(umts.link.traceStart).toBe('spread');
    expect(() => withOverrides(umts, { trace: join(dir, 'nope.down') })).toThrow(/--trace = ".*nope.down" is invalid: expected a mahimahi trace or a JSON steps file/);
    expect(() => withOverrides(umts, { traceStart: 'end' })).toThrow(/--trace-start = "end" is invalid: expected beginning, spread/);
    expect(() => withOverrides(loadScenario('thesis-2.6'), { trace: steps })).toThrow(/--trace = .* expected a scenario with a trace link \(link.trace\); thesis-2.6 has a constant link/);
  });

  test('a constant link has no trace and no calibration', () => {
    expect(parseScenario({ ...base, link: { rateMbps: 40, rttMs: 5 } }, dir).link).toMatchObject({ rateMbps: 40, trace: null, calibrationS: null, traceStart: null });
  });

  test('the shipped trace scenarios', () => {
    expect(loadScenario('cellular-lte').link).toMatchObject({ rttMs: 40, trace: { format: 'mahimahi', periodS: 120.002 } });
    expect(loadScenario('cellular-umts').link.trace).toMatchObject({ format: 'mahimahi', periodS: 928.424 });
    for (const name of ['cellular-lte', 'cellular-umts']) {
      const s = loadScenario(name);
      expect(s.arms).toEqual(['control', 'sammy', 'fixed4x']);
      expect(s.neighbours.map((n) => n.kind)).toEqual(['none', 'udp']);
    }
    // The outage: 10 s without capacity inside the session, the buffer target shorter than it.
    const outage = loadScenario('outage');
    const s = opportunitySchedule(readTrace(outage.link.trace!.path));
    const perSecond = capacityPerBin(s, 1e6, outage.session.playS);
    const zero = perSecond.flatMap((b, i) => (b === 0 ? [i] : []));
    expect(zero).toEqual([15, 16, 17, 18, 19, 20, 21, 22, 23, 24]);
    expect(outage.player.maxBufferS).toBeLessThan(zero.length);
  });
});

describe('fidelity', () => {
  const capacity = [100, 300, 50, 400, 200, 0, 250];
  const args = { trace: 't', calibrationS: 8, skippedS: 1, binS: 1, capacity };

  test('a link that delivers the trace passes; one that delivers 85% of it does not', () => {
    const exact = traceFidelity({ ...args, served: capacity, received: capacity.map((c) => c * 0.965) });
    expect(exact).toMatchObject({ correlation: 1, totalRatio: 1, binErrorPct: 0, withinTolerance: true, constantCapacity: false });
    expect(exact.goodputTotalRatio).toBeCloseTo(0.965, 9);
    const short = traceFidelity({ ...args, served: capacity.map((c) => c * 0.85), received: capacity });
    expect(short.correlation).toBeCloseTo(1, 9);
    expect(short.totalRatio).toBeCloseTo(0.85, 9);
    expect(short.withinTolerance).toBe(false);
  });

  test('the right total with the wrong shape fails on the correlation', () => {
    const shuffled = traceFidelity({ ...args, served: [300, 100, 400, 50, 0, 250, 200], received: capacity });
    expect(shuffled.totalRatio).toBe(1);
    expect(shuffled.correlation!).toBeLessThan(0.9);
    expect(shuffled.withinTolerance).toBe(false);
  });

  test('a constant trace is judged by its total; bins without a measurement are left out', () => {
    const flat = traceFidelity({ ...args, capacity: [1000, 1000, 1000, 1000], served: [980, 1010, null, 990], received: [null, null, null, null] });
    expect(flat).toMatchObject({ constantCapacity: true, withinTolerance: true, goodputCorrelation: null, goodputTotalRatio: null });
    expect(flat.totalRatio).toBeCloseTo(2980 / 3000, 9);
    expect(flat.bins[2]).toEqual([1000, null, null]);
  });

  test('correlation and cumulative interpolation', () => {
    expect(correlation([1, 2, 3], [2, 4, 6])).toBeCloseTo(1, 12);
    expect(correlation([1, 2, 3], [3, 2, 1])).toBeCloseTo(-1, 12);
    expect(correlation([1, 1, 1], [1, 2, 3])).toBeNull();
    const curve: Array<[number, number]> = [[0, 0], [1, 100], [2, 100], [3, 400]];
    expect(cumulativeAt(curve, 0.5)).toBe(50);
    expect(cumulativeAt(curve, 2.5)).toBe(250);
    expect(cumulativeAt(curve, 3)).toBe(400);
    expect(cumulativeAt(curve, 3.5)).toBeNull();
  });
});

describe("the delay line's queue samples", () => {
  const lines = 'ready\nq 1000 0 0 0 0 0\nq 1100 100000 3000 0 1500 2500\nrestart 1150\nq 1150 0 1500 1 4500 800\n';

  test('parses the q lines and nothing else', () => {
    expect(parseDelaySamples(lines)).toEqual([
      { realtimeMs: 1000, traceUs: 0, queuedBytes: 0, drops: 0, servedBytes: 0, headAgeUs: 0 },
      { realtimeMs: 1100, traceUs: 100_000, queuedBytes: 3000, drops: 0, servedBytes: 1500, headAgeUs: 2500 },
      { realtimeMs: 1150, traceUs: 0, queuedBytes: 1500, drops: 1, servedBytes: 4500, headAgeUs: 800 },
    ]);
  });

  test('a session sees the samples printed while it ran, relative to its origin, with the queueing delay in ms', () => {
    let out = lines;
    const fake = { stdout: () => out } as unknown as Managed;
    const monitor = startDelayLineQueueMonitor(fake, () => 1100);
    out += 'q 1200 50000 0 1 6000 10000000\nq 13';
    const samples = monitor.stop();
    expect(samples).toEqual([[100, 0, 1, 6000, 10_000]]);
    // The delay is the oldest packet's wait, not the (empty) backlog over a rate; a tbf sample divides.
    expect(queueDelayMsOf(samples[0]!, 5)).toBe(10_000);
    expect(queueDelayMsOf([0, 100_000, 0, 0], 40)).toBe(20);
  });
});

describe('restartTrace', () => {
  const startFile = () => join(mkdtempSync(join(tmpdir(), 'sammy-restart-')), 'trace-start');

  test("writes the trace time into the start file, signals the delay line and returns the time of its new restart line, not an older one's", async () => {
    let out = 'ready\nrestart 1000 0\nq 1000 0 0 0 0\n';
    const signals: string[] = [];
    const file = startFile();
    const process = {
      stdout: () => out, stderr: () => '',
      child: { exitCode: null, kill: (sig: string) => (signals.push(sig), setTimeout(() => (out += 'q 1050 50000 0 0 0\nrestart 2000 185700000\n'), 20), true) },
    } as unknown as Managed;
    await expect(restartTrace({ process, startFile: file }, 185.7)).resolves.toBe(2000);
    expect(signals).toEqual(['SIGUSR1']);
    expect(readFileSync(file, 'utf8')).toBe('185700000\n');
  });

  test('fails with the reason when the delay line refused the restart, started elsewhere, or has gone', async () => {
    const answering = (line: string) => {
      let out = 'ready\n';
      return { stdout: () => out, stderr: () => '', child: { exitCode: null, kill: () => ((out += line), true) } } as unknown as Managed;
    };
    await expect(restartTrace({ process: answering('restart-refused Permission denied\n'), startFile: startFile() }, 3)).rejects.toThrow(/did not restart its trace at 3000000 us \(Permission denied\)/);
    await expect(restartTrace({ process: answering('restart 2000 0\n'), startFile: startFile() }, 3)).rejects.toThrow(/at 3000000 us \(it started at 0 us\)/);
    await expect(restartTrace({ process: answering('restart 2000 0\n'), startFile: startFile() }, -1)).rejects.toThrow(/non-negative trace time, got -1 s/);
    const gone = { stdout: () => 'ready\n', stderr: () => 'labtools: boom', child: { exitCode: 1, kill: () => false } } as unknown as Managed;
    await expect(restartTrace({ process: gone, startFile: startFile() })).rejects.toThrow(/did not restart its trace \(labtools: boom\)/);
  });
});
