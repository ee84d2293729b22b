import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SimError } from '../src/errors.js';
import {
  atLinkEfficiency,
  bandwidthAtKbps,
  capacityKbits,
  constantTrace,
  latencyAtS,
  linkFilledS,
  loadTrace,
  meanBandwidthKbps,
  parseMahimahiTrace,
  parseStepsTrace,
  startTraceAt,
  transferEndS,
} from '../src/trace.js';
import { LTE_LIKE, variableMahimahiTrace } from '../src/tracegen.js';

describe('constant traces', () => {
  test('a transfer takes kbits / min(cap, bandwidth)', () => {
    const trace = constantTrace(40000, 5);
    expect(latencyAtS(trace, 123)).toBeCloseTo(0.005);
    expect(transferEndS(trace, 10, 4000, null)).toBeCloseTo(10.1);
    expect(transferEndS(trace, 10, 4000, 4000)).toBeCloseTo(11);
    expect(transferEndS(trace, 10, 4000, 80000)).toBeCloseTo(10.1);
    expect(transferEndS(trace, 10, 0, 1)).toBe(10);
  });

  test('loadTrace reads constant:KBPS and rejects a bad rate', () => {
    expect(bandwidthAtKbps(loadTrace('constant:800'), 0)).toBe(800);
    expect(() => loadTrace('constant:fast')).toThrow(/positive number/);
    expect(() => loadTrace('constant:0')).toThrow(SimError);
  });
});

describe('step traces', () => {
  const steps = parseStepsTrace(
    [
      { durationS: 1, bandwidthKbps: 1000, latencyMs: 10 },
      { durationS: 2, bandwidthKbps: 0 },
      { durationS: 1, bandwidthKbps: 4000, latencyMs: 50 },
    ],
    'steps',
    { defaultLatencyMs: 30 },
  );

  test('integrate over the steps; the last step holds forever', () => {
    // 500 kbit in the first step, nothing in the gap, the other 500 at 4000 kbps.
    expect(transferEndS(steps, 0.5, 1000, null)).toBeCloseTo(3.125);
    // Capped at 2000 kbps in the last step: 1 s carries 2000, the remaining 1000 take 0.5 s more.
    expect(transferEndS(steps, 3, 3000, 2000)).toBeCloseTo(4.5);
    expect(transferEndS(steps, 100, 4000, null)).toBeCloseTo(101);
    expect(capacityKbits(steps, 0, 5)).toBeCloseTo(1000 + 8000);
    expect(meanBandwidthKbps(steps, 5)).toBeCloseTo(1800);
  });

  test('the seconds a download fills the link: unpaced all of them, paced those where the link is no faster than the pace', () => {
    expect(linkFilledS(steps, 0.5, 5, null)).toBeCloseTo(4.5);
    // At 2000 kbps: the 1000 kbps step and the empty gap fill the link, the 4000 kbps steps do not.
    expect(linkFilledS(steps, 0.5, 5, 2000)).toBeCloseTo(2.5);
    // A pace equal to the link's rate fills it too; under every step's rate, nothing.
    expect(linkFilledS(steps, 0, 1, 1000)).toBeCloseTo(1);
    expect(linkFilledS(steps, 3, 10, 3000)).toBe(0);
  });

  test('latency per step, with the default where a step has none', () => {
    expect(latencyAtS(steps, 0.5)).toBeCloseTo(0.01);
    expect(latencyAtS(steps, 2)).toBeCloseTo(0.03);
    expect(latencyAtS(steps, 50)).toBeCloseTo(0.05);
  });

  test.each([
    ['an empty list', [], /non-empty JSON array/],
    ['an unknown field', [{ durationS: 1, bandwidthMbps: 40 }], /unknown field "bandwidthMbps"/],
    ['a zero duration', [{ durationS: 0, bandwidthKbps: 1 }], /durationS must be positive/],
    ['a negative bandwidth', [{ durationS: 1, bandwidthKbps: -1 }], /bandwidthKbps must be a non-negative number/],
    ['a dead last step', [{ durationS: 1, bandwidthKbps: 1 }, { durationS: 1, bandwidthKbps: 0 }], /last step holds forever/],
  ])('rejects %s', (_name, json, message) => {
    expect(() => parseStepsTrace(json, 'bad.json')).toThrow(message);
  });
});

describe('mahimahi traces', () => {
  // 2 opportunities in the first 100 ms, 1 in the second, period 200 ms.
  const trace = parseMahimahiTrace('10\n20\n150\n200\n', 'tiny', { mahimahiBinMs: 100, defaultLatencyMs: 7 });

  test('opportunities become 1500-byte deliveries averaged per bin, repeating with the last timestamp', () => {
    expect(trace.periodS).toBeCloseTo(0.2);
    // The opportunity at 200 ms is the first of the next repetition: bin 0 holds 3.
    expect(Array.from(trace.bandwidthKbps)).toEqual([360, 120]);
    expect(latencyAtS(trace, 0)).toBeCloseTo(0.007);
    expect(meanBandwidthKbps(trace)).toBeCloseTo(240);
    // 36 kbit fill bin 0; the next 12 take bin 1; 12 more take a third of the next bin 0.
    expect(transferEndS(trace, 0, 60, null)).toBeCloseTo(0.2 + 12 / 360);
    // Periods repeat: the same transfer a thousand periods later takes as long.
    expect(transferEndS(trace, 200, 60, null) - 200).toBeCloseTo(0.2 + 12 / 360, 6);
  });

  test.each([
    ['a word', 'abc\n', /integer millisecond timestamp/],
    ['decreasing timestamps', '5\n3\n', /must not decrease/],
    ['no timestamps', '\n\n', /at least one timestamp/],
    ['a zero period', '0\n', /positive last timestamp/],
  ])('rejects %s', (_name, text, message) => {
    expect(() => parseMahimahiTrace(text, 'bad')).toThrow(message);
  });

  test('the bundled variable trace is exactly what the generator writes', () => {
    const committed = readFileSync(new URL('../traces/lte-variable.mahimahi', import.meta.url), 'utf8');
    expect(committed === variableMahimahiTrace(LTE_LIKE)).toBe(true);
    const parsed = parseMahimahiTrace(committed, 'lte');
    expect(parsed.periodS).toBe(LTE_LIKE.periodS);
    // Fades dip below the lab ladder's top bitrate, the rest varies around a few Mbps.
    const bins = Array.from(parsed.bandwidthKbps);
    expect(Math.min(...bins)).toBeLessThan(1050);
    expect(Math.max(...bins)).toBeGreaterThan(8000);
  });
});

describe('startTraceAt', () => {
  const steps = parseStepsTrace(
    [
      { durationS: 2, bandwidthKbps: 1000, latencyMs: 10 },
      { durationS: 3, bandwidthKbps: 0, latencyMs: 20 },
      { durationS: 1, bandwidthKbps: 4000, latencyMs: 30 },
    ],
    'steps',
  );
  const periodic = variableMahimahiTrace(LTE_LIKE);

  test('a non-periodic trace loses what lies before the offset; its last step still holds', () => {
    const late = startTraceAt(steps, 1.5);
    expect(Array.from(late.stepStartS)).toEqual([0, 0.5, 3.5]);
    expect(Array.from(late.bandwidthKbps)).toEqual([1000, 0, 4000]);
    expect(latencyAtS(late, 1)).toBeCloseTo(0.02);
    expect(capacityKbits(late, 0, 100)).toBeCloseTo(capacityKbits(steps, 1.5, 101.5));
    expect(bandwidthAtKbps(startTraceAt(steps, 60), 0)).toBe(4000);
  });

  test.each([0.05, 3.3, 47.25, 130, 1000.7])('a periodic trace joined at %p s carries what the original carries from there', (offsetS) => {
    const trace = parseMahimahiTrace(periodic, 'lte');
    const joined = startTraceAt(trace, offsetS);
    expect(joined.periodS).toBe(trace.periodS);
    for (const [fromS, toS] of [
      [0, 1],
      [0.37, 9.1],
      [5, 250],
    ] as const) {
      expect(capacityKbits(joined, fromS, toS)).toBeCloseTo(capacityKbits(trace, offsetS + fromS, offsetS + toS), 6);
    }
  });

  test('offset 0 is the trace itself; a negative offset is refused', () => {
    expect(startTraceAt(steps, 0)).toBe(steps);
    expect(() => startTraceAt(steps, -1)).toThrow(/non-negative number of seconds/);
  });
});

describe('loadTrace', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'sim-trace-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  test('tells JSON steps from mahimahi by content', () => {
    writeFileSync(join(dir, 'steps.json'), JSON.stringify([{ durationS: 5, bandwidthKbps: 3000, latencyMs: 20 }]));
    writeFileSync(join(dir, 'link.down'), '1\n2\n3\n4\n');
    const steps = loadTrace(join(dir, 'steps.json'));
    expect(steps.format).toBe('steps');
    expect(steps.name).toBe('steps.json');
    const mm = loadTrace(join(dir, 'link.down'), { defaultLatencyMs: 1 });
    expect(mm.format).toBe('mahimahi');
    expect(mm.periodS).toBeCloseTo(0.004);
  });

  test('names the problem for a missing file and invalid JSON', () => {
    expect(() => loadTrace(join(dir, 'missing.json'))).toThrow(/cannot read trace/);
    writeFileSync(join(dir, 'broken.json'), '[{"durationS": 1,');
    expect(() => loadTrace(join(dir, 'broken.json'))).toThrow(/invalid JSON/);
  });
});

describe('atLinkEfficiency', () => {
  const steps = parseStepsTrace(
    [
      { durationS: 1, bandwidthKbps: 1000, latencyMs: 10 },
      { durationS: 1, bandwidthKbps: 0 },
      { durationS: 1, bandwidthKbps: 4000 },
    ],
    'steps',
    { defaultLatencyMs: 30 },
  );

  test('every step carries that share of its bandwidth; latency, timing and the outage stay', () => {
    const slow = atLinkEfficiency(steps, 0.5);
    expect(slow.name).toBe('steps@0.5');
    expect(Array.from(slow.bandwidthKbps)).toEqual([500, 0, 2000]);
    expect(Array.from(slow.stepStartS)).toEqual(Array.from(steps.stepStartS));
    expect(latencyAtS(slow, 0.5)).toBeCloseTo(0.01);
    // 500 kbit in the first second, nothing in the second, the other 500 at 2000 kbps.
    expect(transferEndS(slow, 0, 1000, null)).toBeCloseTo(2.25);
    expect(transferEndS(steps, 0, 1000, null)).toBeCloseTo(1);
    // The original is untouched.
    expect(Array.from(steps.bandwidthKbps)).toEqual([1000, 0, 4000]);
  });

  test('1 is the trace itself; outside (0, 1] is refused', () => {
    expect(atLinkEfficiency(steps, 1)).toBe(steps);
    for (const bad of [0, -0.5, 1.5, Number.NaN]) expect(() => atLinkEfficiency(steps, bad)).toThrow(/link efficiency must be in \(0, 1\]/);
  });
});
