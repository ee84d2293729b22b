import { join } from 'node:path';
import { armFactory } from '../src/arms/index.js';
import { SimError } from '../src/errors.js';
import { simulateSession } from '../src/session.js';
import { runStarts, STALL_TOLERANCE_S, startPointsS, tracePassS, type StartsResult } from '../src/starts.js';
import { constantTrace, loadTrace, parseStepsTrace, startTraceAt } from '../src/trace.js';
import { resolveSammyConfig } from '../src/core.js';
import { labSidecar, runCli, TRACES_DIR } from './helpers.js';

describe('start points along one pass of a trace', () => {
  test('a periodic trace: every S seconds below its period', () => {
    const umts = loadTrace(join(TRACES_DIR, 'TMobile-UMTS-driving.down'), { defaultLatencyMs: 40 });
    expect(tracePassS(umts)).toBeCloseTo(928.4, 1);
    const starts = startPointsS(umts, { everyS: 100 });
    expect(starts).toEqual([0, 100, 200, 300, 400, 500, 600, 700, 800, 900]);
    // Integer steps: 0.3 x 10 lands on 3, not 2.9999999999999996 with another start after it.
    expect(startPointsS(parseStepsTrace(JSON.parse('[{"durationS": 3, "bandwidthKbps": 1000}, {"durationS": 1, "bandwidthKbps": 2000}]'), 't'), { everyS: 0.3 })).toHaveLength(10);
  });

  test('N starts spread over the pass, where the lab puts trial k + 1 of N', () => {
    const umts = loadTrace(join(TRACES_DIR, 'TMobile-UMTS-driving.down'), { defaultLatencyMs: 40 });
    const passS = tracePassS(umts);
    const starts = startPointsS(umts, { count: 10 });
    expect(starts).toHaveLength(10);
    expect(starts[0]).toBe(0);
    starts.forEach((s, k) => expect(s).toBeCloseTo((k * passS) / 10, 6));
    // Rounded to the microsecond, so no start prints as 464.20000000000005.
    expect(starts.every((s) => Math.abs(s * 1e6 - Math.round(s * 1e6)) < 1e-6)).toBe(true);
    expect(startPointsS(umts, { count: 1 })).toEqual([0]);
  });

  test('a steps trace: up to where its last, held step begins', () => {
    const down = loadTrace(join(TRACES_DIR, 'step-down.json'));
    expect(tracePassS(down)).toBe(240);
    expect(startPointsS(down, { everyS: 60 })).toEqual([0, 60, 120, 180]);
  });

  test('refuses a constant link and a bad spacing', () => {
    expect(() => startPointsS(constantTrace(4000), { everyS: 10 })).toThrow(/one rate from its start/);
    const down = loadTrace(join(TRACES_DIR, 'step-down.json'));
    for (const bad of [0, -5, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => startPointsS(down, { everyS: bad })).toThrow(SimError);
      expect(() => startPointsS(down, { count: bad })).toThrow(SimError);
    }
    expect(() => startPointsS(down, { everyS: 0.001 })).toThrow('that is 240000 starts over the trace\'s 240 s; at most 100000');
    expect(() => startPointsS(down, { count: 100_001 })).toThrow(/at most 100000/);
    expect(startPointsS(down, { everyS: 0.0024 })).toHaveLength(100_000);
    for (const bad of [0.5, 1.5]) {
      expect(() => startPointsS(down, { count: bad })).toThrow(/--starts must be a positive whole number/);
    }
  });
});

describe('runStarts', () => {
  const trace = loadTrace(join(TRACES_DIR, 'dip-and-recover.json'));
  const options = { maxBufferS: 30 };
  const result: StartsResult = runStarts({ trace, sidecar: labSidecar, arms: ['sammy', 'control'], armOptions: options, durationS: 60, spacing: { everyS: 20 } });

  test('each start is the session the simulator plays from that offset', () => {
    expect(result.rows.map((r) => r.startS)).toEqual([0, 20, 40, 60, 80, 100, 120, 140, 160, 180, 200, 220, 240]);
    for (const row of [result.rows[5]!, result.rows[11]!]) {
      for (const arm of ['sammy', 'control'] as const) {
        const q = simulateSession({ trace: startTraceAt(trace, row.startS), sidecar: labSidecar, durationS: 60, arm: armFactory(arm, options) });
        expect(row.sessions[arm]).toEqual({ rebufferS: q.rebufferS, avgBitrateKbps: q.avgBitrateKbps, chunkThroughputKbps: q.chunkThroughputKbps, switchCount: q.switchCount, neighbourDelayQueues: q.sim.neighbourDelayQueues });
      }
    }
    // The starts meet different links: the dips cost bitrate that the fast stretches do not.
    const bitrates = result.rows.map((r) => r.sessions.control!.avgBitrateKbps);
    expect(Math.max(...bitrates) - Math.min(...bitrates)).toBeGreaterThan(300);
  }, 30_000);

  test('the summary is the rows averaged and paired start by start', () => {
    const [sammy, control] = result.summary;
    const n = result.rows.length;
    const avg = (f: (r: (typeof result.rows)[number]) => number): number => result.rows.reduce((a, r) => a + f(r), 0) / n;
    expect(sammy!.arm).toBe('sammy');
    expect(sammy!.avgBitrateKbps).toBeCloseTo(avg((r) => r.sessions.sammy!.avgBitrateKbps), 9);
    expect(sammy!.rebufferS).toBeCloseTo(avg((r) => r.sessions.sammy!.rebufferS), 9);
    expect(control!.againstControl).toBeNull();
    const pairs = result.rows.map((r) => [r.sessions.sammy!, r.sessions.control!] as const);
    expect(sammy!.againstControl).toEqual({
      rebufferedMore: pairs.filter(([s, c]) => s.rebufferS - c.rebufferS > STALL_TOLERANCE_S).length,
      rebufferedLess: pairs.filter(([s, c]) => c.rebufferS - s.rebufferS > STALL_TOLERANCE_S).length,
      bitrateLower: pairs.filter(([s, c]) => s.avgBitrateKbps < c.avgBitrateKbps).length,
      bitrateHigher: pairs.filter(([s, c]) => s.avgBitrateKbps > c.avgBitrateKbps).length,
      neighbourDelayLower: pairs.filter(([s, c]) => s.neighbourDelayQueues < c.neighbourDelayQueues).length,
      neighbourDelayHigher: pairs.filter(([s, c]) => s.neighbourDelayQueues > c.neighbourDelayQueues).length,
    });
    expect(sammy!.neighbourDelayQueues).toBeCloseTo(avg((r) => r.sessions.sammy!.neighbourDelayQueues), 9);
    expect(sammy!.stalledStarts).toBe(result.rows.filter((r) => r.sessions.sammy!.rebufferS > 0).length);
  });

  test('no control arm, no pairing', () => {
    const alone = runStarts({ trace, sidecar: labSidecar, arms: ['sammy'], armOptions: options, durationS: 20, spacing: { everyS: 120 } });
    expect(alone.summary.map((s) => s.againstControl)).toEqual([null]);
    expect(() => runStarts({ trace, sidecar: labSidecar, arms: [], armOptions: options, durationS: 20, spacing: { everyS: 120 } })).toThrow(/at least one arm/);
  });
});

describe('npm run sim:starts', () => {
  const run = (args: string[]): ReturnType<typeof runCli> => runCli('starts', args);

  test('prints the comparison, or JSON with the configuration it ran', () => {
    const table = run(['--trace', 'traces/step-down.json', '--every-s', '60', '--duration', '30', '--arms', 'sammy,control']);
    expect(table.status).toBe(0);
    expect(table.stdout).toMatch(/4 sessions per arm, one from every 60 s of the trace's 240\.0 s pass/);
    expect(table.stdout).toMatch(/^\| sammy \| /m);
    const json = run(['--trace', 'traces/step-down.json', '--every-s', '60', '--duration', '30', '--max-buffer', '60', '--link-efficiency', '0.85', '--json']);
    expect(json.status).toBe(0);
    const parsed = JSON.parse(json.stdout) as StartsResult & { config: Record<string, unknown> };
    expect(parsed.config).toMatchObject({ trace: 'step-down.json@0.85', durationS: 30, everyS: 60, maxBufferS: 60, linkEfficiency: 0.85 });
    // Sammy's whole config as it ran, the buffer target included.
    expect(parsed.config.sammyConfig).toEqual(resolveSammyConfig({ maxBufferS: 60 }));
    expect(parsed.summary.map((s) => s.arm)).toEqual(['sammy', 'control', 'fixed4x']);
    expect(parsed.rows).toHaveLength(4);
    const spread = run(['--trace', 'traces/step-down.json', '--starts', '3', '--duration', '30', '--arms', 'control', '--json']);
    expect(spread.status).toBe(0);
    const three = JSON.parse(spread.stdout) as StartsResult & { config: Record<string, unknown> };
    expect(three.config).toMatchObject({ count: 3 });
    expect(three.rows.map((r) => r.startS)).toEqual([0, 80, 160]);
    // A buffer target given in --config is every arm's, and recorded as such.
    const viaConfig = run(['--trace', 'traces/step-down.json', '--starts', '2', '--duration', '30', '--config', '{"maxBufferS": 45}', '--json']);
    const c = (JSON.parse(viaConfig.stdout) as { config: { maxBufferS: number; sammyConfig: { maxBufferS: number } } }).config;
    expect([c.maxBufferS, c.sammyConfig.maxBufferS]).toEqual([45, 45]);
  }, 60_000);

  test('bad input is one line and exit 2', () => {
    const cases: Array<[string[], RegExp]> = [
      [['--every-s', '10'], /--trace is required/],
      [['--trace', 'constant:3000'], /one rate from its start/],
      [['--trace', 'traces/step-down.json', '--arms', 'sammy,bola'], /--arms: unknown arm "bola"/],
      [['--trace', 'traces/step-down.json', '--arms', 'sammy,sammy'], /lists an arm twice/],
      [['--trace', 'traces/step-down.json', '--every-s', '0'], /--every-s must be a positive number of seconds/],
      [['--trace', 'traces/step-down.json', '--config', '{"beta": 7}'], /beta/],
      [['--trace', 'traces/step-down.json', '--starts', '2.5'], /--starts must be a positive whole number/],
      [['--trace', 'traces/step-down.json', '--starts', '4', '--every-s', '60'], /--every-s and --starts both place the starts/],
    ];
    for (const [args, message] of cases) {
      const r = run(args);
      expect(r.status).toBe(2);
      expect(r.stderr).toMatch(message);
    }
  }, 60_000);
});
