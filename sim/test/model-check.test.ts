import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { armFactory, behindGuardFloor, type ArmFactory } from '../src/arms/index.js';
import type { Decision } from '../src/arms/types.js';
import { agreement, checkRun } from '../src/model-check/check.js';
import { readLabRun } from '../src/model-check/lab.js';
import { simulateSession } from '../src/session.js';
import { pearson, ranks, spearman } from '../src/stats.js';
import { loadTrace } from '../src/trace.js';
import { labSidecar, TRACES_DIR } from './helpers.js';

describe('the statistics of the check', () => {
  test('ranks share ties; Spearman is Pearson of the ranks', () => {
    expect(ranks([10, 30, 20, 30])).toEqual([1, 3.5, 2, 3.5]);
    expect(spearman([1, 2, 3, 4], [1, 8, 27, 64])).toBeCloseTo(1, 12);
    expect(pearson([1, 2, 3], [3, 2, 1])).toBeCloseTo(-1, 12);
    expect(pearson([1, 2, 3], [5, 5, 5])).toBeNull();
  });

  test('agreement counts pairs whose differences share a sign', () => {
    const a = agreement(
      [
        [100, 110],
        [100, 90],
        [100, 130],
      ],
      [
        [1, 1.2],
        [1, 1.1],
        [1, 1.5],
      ],
    );
    expect(a.signAgree).toBe(2);
    expect(a.labMeanDiffMs).toBeCloseTo(10, 9);
    expect(a.spearman).toBeCloseTo(1, 9);
  });
});

describe('a lab result replayed', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sim-model-check-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const traceFile = join(TRACES_DIR, 'step-down.json');
  const sha256 = createHash('sha256').update(readFileSync(traceFile)).digest('hex');
  const trial = (arm: 'control' | 'sammy', owdMs: number, telemetry: unknown[][]) => ({
    trial: 1,
    neighbour: 'udp',
    arm,
    error: null,
    historyReset: false,
    traceFromS: 10,
    traceStartS: -0.5,
    playbackStartS: 3,
    window: { startS: 0, endS: 20 },
    metrics: { udpOwdMs: owdMs },
    windows: { fill: { fromS: 0, toS: 5, metrics: { udpOwdMs: owdMs + 50 } }, steady: null },
    // The player's clock: play() at 3 - 1.5 = 1.5 s after the origin, its first chunk 0.25 s later.
    session: { qoe: { playDelayS: 1.5, initialThroughputKbps: arm === 'sammy' ? 3000 : 5000, chunks: [{ requestS: 0.25 }] } },
    telemetry,
  });
  const result = {
    config: {
      scenario: {
        link: { trace: { file: '../../sim/traces/step-down.json', sha256 }, rttMs: 40 },
        player: { maxBufferS: 30 },
        neighbours: [{ kind: 'udp', rateKbps: 300 }],
      },
      player: { byArm: { sammy: { player: 'dashjs', arm: 'sammy', beta: 0.8, maxBufferS: 30, fadeHoldS: 16 } } },
      media: { durationS: 60 },
    },
    warmups: [{ arm: 'sammy', initialThroughputKbps: 2000 }],
    trials: [
      trial('control', 150, []),
      trial('sammy', 140, [
        [1, '/media/a.m4s', 1, 1, 1, 0, 0, 1, 1200, 2625],
        [2, '/media/b.m4s', 1, 1, 1, 0, 0, 1, 3000, 3000],
      ]),
    ],
  };
  writeFileSync(join(dir, 'result.json.gz'), gzipSync(JSON.stringify(result)));

  test('reads where each session started in the trace, its window, history, config and the guard', () => {
    const run = readLabRun(dir);
    expect(run.pairs).toHaveLength(1);
    const { sammy } = run.pairs[0]!;
    // Trace time at the origin 10.5 s, first request 1.75 s after it.
    expect(sammy.traceAtFirstRequestS).toBeCloseTo(12.25, 9);
    expect(sammy.windowFromS).toBeCloseTo(1.25, 9);
    expect(sammy.windowToS).toBeCloseTo(21.25, 9);
    expect(sammy.phases).toEqual({ fill: { fromS: 1.25, toS: 6.25, udpOwdMs: 190 } });
    expect(sammy.historyKbps).toEqual([2000]);
    expect(run.sammy).toEqual({ beta: 0.8, maxBufferS: 30 });
    expect(run.droppedKeys).toEqual(['fadeHoldS']);
    expect(run.guardFloorKbps).toBe(2625);
    expect(run.guardRaised).toEqual({ raised: 1, paced: 2 });
    expect(run.neighbourKbps).toBe(300);
  });

  test('replays both arms and scores them over the window with each model', () => {
    const checked = checkRun(readLabRun(dir), labSidecar);
    const pair = checked.pairs[0]!;
    for (const arm of ['control', 'sammy'] as const) {
      expect(pair.sim[arm].queue).toBeGreaterThan(0);
      expect(Number.isFinite(pair.sim[arm]['link-filled'])).toBe(true);
    }
    expect(checked.agreement.queue.pairs).toBe(1);
    expect(pair.phases.fill!.lab).toEqual({ controlMs: 200, sammyMs: 190 });
    expect(checked.phaseAgreement.fill!.queue.pairs).toBe(1);
    expect(checked.phaseAgreement.steady).toBeUndefined();
  });

  test('a trace file changed since the run is refused', () => {
    const other = join(dir, 'changed');
    const changed = { ...result, config: { ...result.config, scenario: { ...result.config.scenario, link: { trace: { file: '../../sim/traces/step-down.json', sha256: '0'.repeat(64) }, rttMs: 40 } } } };
    mkdirSync(other);
    writeFileSync(join(other, 'result.json.gz'), gzipSync(JSON.stringify(changed)));
    expect(() => readLabRun(other)).toThrow(/has changed since the run/);
  });
});

describe('the server guard in the simulator', () => {
  const umts = loadTrace(join(TRACES_DIR, 'TMobile-UMTS-driving.down'), { defaultLatencyMs: 40 });
  /** The decisions a session's arm made, as sent. */
  const decisions = (factory: ArmFactory): Decision[] => {
    const seen: Decision[] = [];
    const recording: ArmFactory = (sidecar, contentS) => {
      const arm = factory(sidecar, contentS);
      const decide = arm.decide.bind(arm);
      arm.decide = (ctx) => {
        const d = decide(ctx);
        seen.push(d);
        return d;
      };
      return arm;
    };
    simulateSession({ trace: umts, sidecar: labSidecar, durationS: 120, arm: recording });
    return seen;
  };

  test('the sammy arm declares a floor at or under every rtp it sends, so the guard keeps its pace', () => {
    const paced = decisions(armFactory('sammy', { maxBufferS: 60 })).filter((d) => d.rtpKbps !== null);
    expect(paced.length).toBeGreaterThan(10);
    for (const d of paced) {
      expect(d.declaredFloorKbps).not.toBeNull();
      expect(d.declaredFloorKbps!).toBeLessThanOrEqual(d.rtpKbps!);
    }
  });

  test('behind the guard of the earlier lab runs every paced request is at least the floor', () => {
    const guarded = decisions(behindGuardFloor(armFactory('sammy', { maxBufferS: 60 }), 2625));
    expect(guarded.filter((d) => d.rtpKbps !== null).every((d) => d.rtpKbps! >= 2625)).toBe(true);
    // Requests before the first frame carry no rtp and stay unpaced.
    expect(guarded[0]!.rtpKbps).toBeNull();
  });
});
