import { acrossTrials, biasPoints, maxMinFair, ratioOfMeans, seededRandom, shuffled } from '../../src/designs/estimators.js';
import { abRun, initialBitrateKbps, sessionError, tteOf, withinRuns } from '../../src/designs/common.js';
import { switchbackEstimate, switchbackRun, switchbackTteRun } from '../../src/designs/switchback.js';
import { historyRuns, HISTORY_DESIGN } from '../../src/designs/history.js';
import { fairnessRuns, pairsOf, runShares, summarizeFairness } from '../../src/designs/fairness.js';
import { AB_DESIGN } from '../../src/designs/ab.js';
import { parseScenario } from '../../src/scenario/scenario.js';
import type { AbDesign, DesignRun, FairnessDesign, HistoryDesign, SessionOutcome, SwitchbackDesign } from '../../src/designs/types.js';

/** Student's t, 97.5% quantile, 2 degrees of freedom. */
const T2 = 4.302652729911275;

const parsed = parseScenario({
  name: 'x', link: { rateMbps: 10, rttMs: 5 }, media: { durationS: 100 }, session: { playS: 30 }, player: { kind: 'headless' },
  experiment: { design: 'ab', sessions: 10, shares: [0, 0.5, 1] },
});
const scenario = { playS: parsed.session.playS, history: parsed.player.history };

describe('ratioOfMeans', () => {
  test('percent change of the means, with the delta-method interval at the Welch degrees of freedom', () => {
    // Treatment = 2 x control: equal relative variances (1/121 each), so df = 2 (n - 1) = 2.
    const e = ratioOfMeans([20, 24], [10, 12]);
    expect(e.pct).toBeCloseTo(100, 10);
    const half = (T2 * 200 * Math.sqrt(2)) / 11;
    expect(e.ci95![0]).toBeCloseTo(100 - half, 8);
    expect(e.ci95![1]).toBeCloseTo(100 + half, 8);
    expect(e.n).toEqual({ treatment: 2, control: 2 });
  });

  test('no estimate without both sides or with a control mean of 0; no interval from one value; nulls are left out', () => {
    expect(ratioOfMeans([], [1, 2]).pct).toBeNull();
    expect(ratioOfMeans([1, 2], [0, 0]).pct).toBeNull();
    expect(ratioOfMeans([3], [2, 2])).toEqual({ pct: 50, ci95: null, n: { treatment: 1, control: 2 } });
    expect(ratioOfMeans([3, 3, null, undefined, NaN], [2, 2])).toEqual({ pct: 50, ci95: [50, 50], n: { treatment: 2, control: 2 } });
  });
});

describe('acrossTrials', () => {
  test("the mean of each trial's estimate, with a t interval over trials", () => {
    const e = acrossTrials([
      { treatment: [110], control: [100] },
      { treatment: [120], control: [100] },
      { treatment: [130], control: [100] },
    ]);
    expect(e.pct).toBeCloseTo(20, 10);
    const half = (T2 * 10) / Math.sqrt(3);
    expect(e.ci95![0]).toBeCloseTo(20 - half, 8);
    expect(e.ci95![1]).toBeCloseTo(20 + half, 8);
    expect(e.n).toEqual({ treatment: 3, control: 3 });
  });

  test('one trial: its sessions pooled into one ratio of means', () => {
    expect(acrossTrials([{ treatment: [20, 24], control: [10, 12] }])).toEqual(ratioOfMeans([20, 24], [10, 12]));
  });

  test('bias is the estimate minus the TTE, in points', () => {
    expect(biasPoints({ pct: -30, ci95: null, n: { treatment: 1, control: 1 } }, { pct: -50, ci95: null, n: { treatment: 1, control: 1 } })).toBe(20);
    expect(biasPoints({ pct: null, ci95: null, n: { treatment: 0, control: 0 } }, { pct: 1, ci95: null, n: { treatment: 1, control: 1 } })).toBeNull();
  });
});

describe('maxMinFair', () => {
  test('water-filling: a flow that wants less than an equal split gets what it wants', () => {
    expect(maxMinFair(40, [Infinity, Infinity])).toEqual([20, 20]);
    const [video, bulk] = maxMinFair(40, [11.55, Infinity]);
    expect(video).toBeCloseTo(11.55, 10);
    expect(bulk).toBeCloseTo(28.45, 10);
    expect(maxMinFair(12, [2, 10, Infinity])).toEqual([2, 5, 5]);
    expect(maxMinFair(12, [5, 5, Infinity])).toEqual([4, 4, 4]);
    expect(maxMinFair(100, [11.55, 11.55])).toEqual([11.55, 11.55]);
  });
});

describe('seeded assignment', () => {
  test('the same seed gives the same order; a shuffle keeps every item', () => {
    const a = shuffled([...Array(10).keys()], seededRandom(7));
    expect(shuffled([...Array(10).keys()], seededRandom(7))).toEqual(a);
    expect([...a].sort((x, y) => x - y)).toEqual([...Array(10).keys()]);
    expect(shuffled([...Array(10).keys()], seededRandom(8))).not.toEqual(a);
  });

  test('small seeds give uniform draws: the first draw is not near 1, and a shuffle moves its last item', () => {
    const seeds = [...Array(1000).keys()].map((i) => i + 1);
    const first = seeds.map((seed) => seededRandom(seed)());
    const meanFirst = first.reduce((a, b) => a + b, 0) / first.length;
    expect(meanFirst).toBeGreaterThan(0.45);
    expect(meanFirst).toBeLessThan(0.55);
    expect(first.filter((x) => x < 0.1).length).toBeGreaterThan(50);
    // Fisher-Yates over 5 items leaves the last in place 1 time in 5.
    const stays = seeds.filter((seed) => shuffled([0, 1, 2, 3, 4], seededRandom(seed))[4] === 4).length / seeds.length;
    expect(stays).toBeGreaterThan(0.15);
    expect(stays).toBeLessThan(0.25);
  });
});

function outcome(role: 'treatment' | 'control', metrics: Partial<SessionOutcome['metrics']>, extra: Partial<SessionOutcome> = {}): SessionOutcome {
  return {
    id: 'x', arm: role === 'treatment' ? 'sammy' : 'control', role, device: 'd', startS: 0, playS: 30, measured: true, originS: 0, playbackStartS: 0.5,
    metrics: { chunkThroughputKbps: null, videoRttMs: null, retransPct: null, playDelayS: null, rebufferCount: null, rebufferS: null, avgBitrateKbps: null, avgQuality: null, queueDelayMs: null, meanRtpKbps: null, initialBitrateKbps: null, ...metrics },
    qoe: null, telemetry: [], error: null, ...extra,
  };
}

function run(partial: Partial<DesignRun> & Pick<DesignRun, 'trial' | 'purpose' | 'sessions'>): DesignRun {
  return { label: 'r', lengthS: 30, startedAt: '', flows: [], queue: [], cpu: [], error: null, ...partial };
}

describe('the A/B design', () => {
  const d = parsed.experiment as AbDesign;

  test('a run per share: round(pN) treatment viewers at seeded positions, starting staggerS apart', () => {
    const r = abRun(d, scenario, 1, 0.5);
    expect(r.sessions.filter((x) => x.role === 'treatment')).toHaveLength(5);
    expect(r.sessions.map((x) => x.startS)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(r.sessions.every((x) => x.arm === (x.role === 'treatment' ? 'sammy' : 'control'))).toBe(true);
    expect(abRun(d, scenario, 1, 0.5).sessions.map((x) => x.role)).toEqual(r.sessions.map((x) => x.role));
    expect(abRun(d, scenario, 1, 0).sessions.every((x) => x.role === 'control')).toBe(true);
    expect(abRun(d, scenario, 1, 1).sessions.every((x) => x.role === 'treatment')).toBe(true);
    expect(r.lengthS).toBe(9 + 30);
    expect(AB_DESIGN.plan(d, scenario, 1).map((x) => x.share).sort()).toEqual([0, 0.5, 1]);
  });

  test('over 25 trials the last viewer to arrive, and the share that runs last, are not always the same', () => {
    const trials = [...Array(25).keys()].map((i) => i + 1);
    const lastRoles = new Set(trials.map((trial) => abRun(d, scenario, trial, 0.5).sessions.at(-1)!.role));
    expect(lastRoles).toEqual(new Set(['treatment', 'control']));
    const lastShares = new Set(trials.map((trial) => AB_DESIGN.plan(d, scenario, trial).at(-1)!.share));
    expect(lastShares.size).toBe(3);
  });

  test('TTE from the all-treatment and all-control runs; the A/B estimate within the mixed run; the bias between them', () => {
    const t = (v: number) => outcome('treatment', { chunkThroughputKbps: v });
    const c = (v: number) => outcome('control', { chunkThroughputKbps: v });
    const runs = [
      run({ trial: 1, purpose: 'ab', share: 1, sessions: [t(10), t(12)] }),
      run({ trial: 1, purpose: 'ab', share: 0, sessions: [c(20), c(24)] }),
      run({ trial: 1, purpose: 'ab', share: 0.5, sessions: [t(5), c(25)] }),
    ];
    expect(tteOf(runs, 'chunkThroughputKbps')!.pct).toBeCloseTo(-50, 10);
    expect(withinRuns(runs, (r) => r.share === 0.5, 'chunkThroughputKbps').pct).toBeCloseTo(-80, 10);
    const summary = AB_DESIGN.summarize(d, runs, { topBitrateKbps: 1050 });
    expect(summary.metrics.chunkThroughputKbps!.ab).toHaveLength(1);
    expect(summary.metrics.chunkThroughputKbps!.ab[0]!.share).toBe(0.5);
    expect(summary.metrics.chunkThroughputKbps!.ab[0]!.biasPoints).toBeCloseTo(-30, 10);
    expect(summary.metrics.videoRttMs!.tte!.pct).toBeNull();
  });

  test('a session that never showed a frame failed: it is not averaged as 0 s of rebuffering at 0 kbit/s', () => {
    expect(sessionError(null, { playDelayS: null })).toBe('no first frame');
    expect(sessionError(undefined, null)).toBe('no QoE record');
    expect(sessionError('page crashed', { playDelayS: 1 })).toBe('page crashed');
    expect(sessionError(null, { playDelayS: 0.8 })).toBeNull();
  });

  test('sessions that failed or were not measured are left out', () => {
    const runs = [
      run({ trial: 1, purpose: 'ab', share: 1, sessions: [outcome('treatment', { playDelayS: 1 }), outcome('treatment', { playDelayS: 9 }, { error: 'no frame' })] }),
      run({ trial: 1, purpose: 'ab', share: 0, sessions: [outcome('control', { playDelayS: 2 }), outcome('control', { playDelayS: 9 }, { measured: false })] }),
    ];
    expect(tteOf(runs, 'playDelayS')!.pct).toBeCloseTo(-50, 10);
  });
});

describe('the switchback design', () => {
  const d: SwitchbackDesign = { design: 'switchback', sessions: 3, treatment: 'sammy', control: 'control', staggerS: 1, seed: 1, intervalS: 100, intervals: 4, washoutS: 30 };

  test('arrivals every playS / N; half the intervals each arm; washout and interval end decide who is measured', () => {
    const r = switchbackRun(d, scenario, 1);
    expect(r.intervalArms!.filter((a) => a === 'treatment')).toHaveLength(2);
    expect(r.sessions).toHaveLength(38);
    expect(r.sessions[1]!.startS).toBe(10);
    // Measured: 30 <= s - interval start and s + 2 + 30 <= interval end: 30, 40, 50, 60 s into each interval.
    expect(r.sessions.filter((x) => x.measured).map((x) => x.startS)).toEqual([30, 40, 50, 60, 130, 140, 150, 160, 230, 240, 250, 260, 330, 340, 350, 360]);
    for (const x of r.sessions) expect(x.role).toBe(r.intervalArms![x.interval!]);
  });

  test('the interval order differs between trials', () => {
    const orders = new Set([1, 2, 3, 4, 5].map((trial) => switchbackRun(d, scenario, trial).intervalArms!.join('')));
    expect(orders.size).toBeGreaterThan(1);
  });

  test("the TTE's runs have the switchback's arrivals: one interval on one arm, measured by the same rule, arrivals going on past its end", () => {
    for (const share of [0, 1] as const) {
      const r = switchbackTteRun(d, scenario, 1, share);
      expect(r).toMatchObject({ purpose: 'ab', share, label: `share-${share}`, lengthS: 100 + scenario.playS });
      expect(new Set(r.sessions.map((x) => x.role))).toEqual(new Set([share === 1 ? 'treatment' : 'control']));
      expect(r.sessions.map((x) => x.startS)).toEqual([0, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100]);
      expect(r.sessions.filter((x) => x.measured).map((x) => x.startS)).toEqual([30, 40, 50, 60]);
    }
  });

  test('the estimate compares interval means', () => {
    const sessions = [
      outcome('treatment', { rebufferS: 1 }, { interval: 0 }), outcome('treatment', { rebufferS: 3 }, { interval: 0 }),
      outcome('control', { rebufferS: 4 }, { interval: 1 }),
      outcome('treatment', { rebufferS: 2 }, { interval: 2 }),
      outcome('control', { rebufferS: 8 }, { interval: 3 }), outcome('control', { rebufferS: 100 }, { interval: 3, measured: false }),
    ];
    const runs = [run({ trial: 1, purpose: 'switchback', intervalArms: ['treatment', 'control', 'treatment', 'control'], sessions })];
    // Interval means: treatment 2 and 2, control 4 and 8: 2 / 6 - 1.
    expect(switchbackEstimate(runs, 'rebufferS').pct).toBeCloseTo(-200 / 3, 10);
  });
});

describe('the history design', () => {
  const d: HistoryDesign = { design: 'history', sessions: 4, treatment: 'sammy', control: 'sammy', staggerS: 2, seed: 1, rounds: 2, fillRounds: 1, fillPlayS: 5 };

  test('fill rounds for the control viewers, then every viewer each round; treatment starts empty, histories carry over', () => {
    const runs = historyRuns(d, scenario, 1);
    expect(runs.map((r) => [r.label, r.sessions.length])).toEqual([['fill-1', 2], ['round-1', 4], ['round-2', 4]]);
    expect(runs[0]!.sessions.every((x) => x.role === 'control' && x.resetHistory && !x.measured && x.playS === 5)).toBe(true);
    expect(runs[1]!.sessions.map((x) => [x.device, x.role, x.resetHistory])).toEqual([
      ['t1-viewer-0', 'treatment', true], ['t1-viewer-2', 'control', false], ['t1-viewer-1', 'treatment', true], ['t1-viewer-3', 'control', false],
    ]);
    expect(runs[2]!.sessions.some((x) => x.resetHistory)).toBe(false);
  });

  test('the initial-bitrate gap per round', () => {
    const s = (role: 'treatment' | 'control', kbps: number, round: number) => outcome(role, { initialBitrateKbps: kbps }, { round });
    const runs = [
      run({ trial: 1, purpose: 'history', sessions: [s('treatment', 150, 1), s('control', 1000, 1)] }),
      run({ trial: 1, purpose: 'history', sessions: [s('treatment', 750, 2), s('control', 1000, 2)] }),
    ];
    const { historyCurve } = HISTORY_DESIGN.summarize(d, runs, { topBitrateKbps: 1050 });
    expect(historyCurve!.map((r) => [r.round, r.treatmentKbps, r.controlKbps, r.pct])).toEqual([[1, 150, 1000, -85], [2, 750, 1000, -25]]);
  });

  test('initial bitrate: the first 20 s of media, the last download of each segment', () => {
    const chunk = (index: number, bitrateKbps: number) => ({ index, bitrateKbps }) as never;
    expect(initialBitrateKbps({ chunks: [chunk(0, 150), chunk(1, 300), chunk(1, 1050), ...[...Array(12).keys()].slice(2).map((i) => chunk(i, 1050))] }, 2)).toBe((150 + 9 * 1050) / 10);
    expect(initialBitrateKbps(null, 2)).toBeNull();
  });
});

describe('the fairness design', () => {
  const d: FairnessDesign = { design: 'fairness', flows: ['sammy', 'reno'], settings: [{ rateMbps: 40, queue: { bdp: 1 } }], videoDemandMultiplier: 11, measureFromS: 5, seed: 1 };

  test('every pair, a kind with itself included; videos are sessions, bulk flows neighbours', () => {
    expect(pairsOf(['a', 'b', 'c'])).toEqual([['a', 'a'], ['a', 'b'], ['a', 'c'], ['b', 'b'], ['b', 'c'], ['c', 'c']]);
    const runs = fairnessRuns(d, scenario, 1);
    expect(runs.map((r) => [r.pair, r.sessions.length, r.flows.length])).toEqual([[['sammy', 'sammy'], 2, 0], [['sammy', 'reno'], 1, 1], [['reno', 'reno'], 0, 2]]);
    expect(runs[1]!.flows[0]!.neighbour).toEqual({ kind: 'tcp', congestionControl: 'reno', startS: 0, endS: null });
  });

  test("a flow's throughput over its max-min fair share; a video's demand is its top bitrate x 11", () => {
    const r = run({ trial: 1, purpose: 'fairness', setting: d.settings[0], pair: ['sammy', 'reno'], sessions: [outcome('treatment', { throughputMbps: 10 })] });
    r.flows = [{ id: 'f', kind: 'reno', raw: null, throughputMbps: 28, error: null }];
    const shares = runShares(r, 1050, 11);
    expect(shares[0]!.fairMbps).toBeCloseTo(11.55, 10);
    expect(shares[1]!.fairMbps).toBeCloseTo(28.45, 10);
    const f = summarizeFairness(d, [r], 1050);
    const cell = (flow: string, against: string) => f.cells.find((c) => c.flow === flow && c.against === against)!;
    expect(cell('sammy', 'reno').shareOfFair).toBeCloseTo(10 / 11.55, 10);
    expect(cell('reno', 'sammy').shareOfFair).toBeCloseTo(28 / 28.45, 10);
    expect(cell('sammy', 'sammy').n).toBe(0);
  });
});

describe('the report of a design', () => {
  test('the A/B table with each share and its bias, and a bias plot per metric', async () => {
    const { designReport } = await import('../../src/designs/report.js');
    const t = (v: number) => outcome('treatment', { videoRttMs: v });
    const c = (v: number) => outcome('control', { videoRttMs: v });
    const runs = [
      run({ trial: 1, purpose: 'ab', share: 1, label: 'share-1', sessions: [t(10), t(12)] }),
      run({ trial: 1, purpose: 'ab', share: 0, label: 'share-0', sessions: [c(20), c(24)] }),
      run({ trial: 1, purpose: 'ab', share: 0.5, label: 'share-0.5', sessions: [t(18), c(20)] }),
    ];
    const d = parsed.experiment as AbDesign;
    const experiment = { design: 'ab' as const, sessionsRun: 6, ...AB_DESIGN.summarize(d, runs, { topBitrateKbps: 1050 }), skipped: [] };
    const { sections, files } = designReport({ config: { scenario: parsed }, designRuns: runs, experiment } as never);
    const [about, table] = sections.find((s) => s.key === 'design:ab')!.blocks;
    expect(about).toEqual({ lines: [{ prose: 'abEstimates', slots: { treatment: d.treatment, control: d.control, sessions: d.sessions } }] });
    if (!table || !('table' in table)) throw new Error('no A/B table');
    expect(table.table.header).toEqual(['metric', 'TTE', 'A/B at 0.5 (bias)']);
    // TTE -50%, A/B at 0.5: 18 against 20, -10%, so +40 points of bias.
    expect(table.table.rows.find((r) => r[0] === 'video RTT')).toEqual(['video RTT', expect.stringMatching(/^-50\.0% \[[^\]]+\]$/), '-10.0% (+40.0 pt)']);
    expect(Object.keys(files)).toContain('fig-bias-videoRttMs.svg');
    expect(files['fig-bias-videoRttMs.svg']).toContain('TTE (95% CI)');
  });
});
