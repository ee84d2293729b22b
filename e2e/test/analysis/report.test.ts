import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Arm } from '@sammy/player/abr';
import { averageSeries, renderReport, reportModel, writeReport } from '../../src/analysis/report.js';
import { prose, sectionOf, type Block, type ReportModel } from '../../src/analysis/report-markdown.js';
import type { LabResult, TrialRecord } from '../../src/analysis/result.js';
import { loadScenario } from '../../src/scenario/scenario.js';
import { summarize } from '../../src/analysis/stats.js';
import { traceFidelity } from '../../src/scenario/trace.js';
import { barChart, lineChart, ticks } from '../../src/analysis/svg.js';

function trial(arm: Arm, neighbour: TrialRecord['neighbour'], trialNo: number, metrics: Record<string, number>): TrialRecord {
  const rtt = arm === 'control' ? 25 : 5.5;
  return {
    trial: trialNo, neighbour, arm, order: 0, startedAt: '2026-01-01T00:00:00Z', originMs: 0, historyReset: false, playbackStartS: 0.7,
    window: neighbour === 'none' ? null : { startS: 0, endS: 30 },
    metrics: metrics as unknown as TrialRecord['metrics'],
    session: { arm, url: 'u', originMs: 0, playbackStartMs: 700, qoe: null, playerConfig: null, buffer: [[1, 2, 0], [2, 4, 1]], pageErrors: [] },
    neighbourSession: null,
    telemetry: [[1, '/media/chunk-4-00001.m4s', 260_000, 50, rtt, 0, 0, 270_000, arm === 'control' ? null : 9000, null], [3, '/media/chunk-4-00002.m4s', 260_000, 200, rtt, 0, 0, 270_000, null, null]],
    neighbourRaw: null,
    queue: [[0, 0, 0, 0], [100, arm === 'control' ? 90_000 : 0, 0, 500_000]],
    error: null,
  };
}

function result(): LabResult {
  const scenario = loadScenario('thesis-2.6');
  const trials: TrialRecord[] = [];
  for (const t of [1, 2]) {
    trials.push(trial('control', 'none', t, { chunkThroughputKbps: 36_000 + t * 100, videoRttMs: 25, playDelayS: 0.8, rebufferCount: 0 }));
    trials.push(trial('sammy', 'none', t, { chunkThroughputKbps: 9_000 + t * 100, videoRttMs: 5.5, playDelayS: 0.8, rebufferCount: 0 }));
    trials.push(trial('control', 'udp', t, { udpOwdMs: 20 + t }));
    trials.push(trial('sammy', 'udp', t, { udpOwdMs: 2.6 + t / 10 }));
  }
  const failed = trial('sammy', 'tcp', 1, {});
  failed.error = 'the player never showed a frame';
  trials.push(failed);
  const values = (kind: string | null) => {
    const out: Record<string, Record<string, number[]>> = {};
    for (const arm of ['control', 'sammy']) {
      out[arm] = {};
      for (const m of ['chunkThroughputKbps', 'videoRttMs', 'udpOwdMs', 'playDelayS', 'rebufferCount'])
        out[arm]![m] = trials.filter((x) => x.arm === arm && (kind === null || x.neighbour === kind)).map((x) => (x.metrics as unknown as Record<string, number>)[m]!).filter((v) => v !== undefined);
    }
    return summarize(out);
  };
  return {
    config: {
      scenario: { ...scenario, arms: ['control', 'sammy'] },
      link: { queueBytes: 100_000, bdpBytes: 25_000, measuredIdleRtt: { avgMs: 5.26, minMs: 5.19, maxMs: 5.86 } },
      media: { rungsKbps: [150, 300, 500, 750, 1050] },
    },
    trials,
    summary: values(null),
    summaryByNeighbour: { none: values('none'), udp: values('udp') },
    delayLine: {
      down: { delayMs: 2.5, packets: 10, bytes: 1, dropsFull: 0, writeErrors: 0, maxQueued: 1, latenessUs: { p50: 38, p99: 165, p999: 2848, max: 8178 } },
      up: { delayMs: 2.5, packets: 10, bytes: 1, dropsFull: 0, writeErrors: 0, maxQueued: 1, latenessUs: { p50: 28, p99: 131, p999: 2354, max: 8464 } },
    },
    warmups: [{ arm: 'sammy', playDelayS: 1, initialThroughputKbps: 28_000, error: null }],
    startedAt: '2026-01-01T00:00:00Z',
    finishedAt: '2026-01-01T01:00:00Z',
    complete: true,
  };
}

/** The setup table's cell for `row`. */
function setupCell(model: ReportModel, row: string): string {
  const table = sectionOf(model, 'setup')!.blocks[0]!;
  if (!('table' in table)) throw new Error('the setup section holds no table');
  return table.table.rows.find((r) => r[0] === row)![1]!;
}

/** A paragraph block's one sentence. */
function sentence(b: Block) {
  if (!('lines' in b) || b.lines.length !== 1 || typeof b.lines[0] !== 'object' || !('prose' in b.lines[0]!)) throw new Error('not one sentence');
  return b.lines[0];
}

describe('report', () => {
  test('summary table beside the thesis numbers, with CIs, n and the change vs control', () => {
    const { markdown } = renderReport(result());
    const row = markdown.split('\n').find((l) => l.startsWith('| chunk throughput'))!;
    expect(row).toMatch(/\| 36150 \[\d+, \d+\] \(n=2\) \| 9150 \[\d+, \d+\] \(n=2\) \| -74\.7% \| -46\.0% \|/);
    const udp = markdown.split('\n').find((l) => l.startsWith('| UDP neighbour one-way delay (ms)'))!;
    expect(udp).toContain('0–30 s after playback start');
    expect(udp).toContain('-48.0%');
    expect(markdown).toContain('40 Mbit/s, droptail queue 100000 B (4.00 x BDP of 25000 B)');
    expect(markdown).toContain('idle ping 5.26 ms avg');
    expect(markdown).toContain('| down | 2.5 ms | 10 | 0 | 38 / 165 / 2848 / 8178 us |');
    expect(markdown).toContain('![fig-throughput.svg](fig-throughput.svg)');
    const { model } = reportModel(result());
    expect(sectionOf(model, 'failed')!.blocks).toEqual([
      { lines: [{ item: { prose: 'failedSession', slots: { trial: 1, experiment: 'tcp', arm: 'sammy', error: 'the player never showed a frame' } } }] },
    ]);
    // Video metrics from the experiment without a neighbour, beside the thesis.
    expect(sectionOf(model, 'summary')!.blocks[0]).toEqual({ lines: [{ prose: 'videoFromSolo', slots: {} }, { prose: 'summaryCellsThesis', slots: {} }] });
  });

  test('the setup says how the player history was treated, as configured', () => {
    const perArm = result();
    perArm.config.scenario.player = { ...perArm.config.scenario.player, history: 'per-arm', warmupSessions: 1, warmupPlayS: 5 };
    expect(setupCell(reportModel(perArm).model, 'player')).toContain(prose('historyPerArm', { warmup: prose('warmup', { sessions: 1, playS: 5 }) }));
    const perSession = result();
    perSession.config.scenario.player = { ...perSession.config.scenario.player, history: 'per-session', warmupSessions: 0 };
    const player = setupCell(reportModel(perSession).model, 'player');
    expect(player).toContain(prose('historyPerSession'));
    expect(player).not.toContain(prose('noWarmup'));
  });

  test.each([
    ['thesis-2.6', 'burst 4 packets'],
    ['thesis-2.6-edge', "a Traffic Server edge (sammy_edge plugin) in front of a Node origin with --pacing off; the edge's kernel trains"],
    ['thesis-2.6-nginx', "nginx with the Sammy module (ngx_http_sammy_module), one worker; nginx's kernel trains"],
  ])("the setup names %s's server and whose trains it sends", (name, server) => {
    const r = result();
    r.config.scenario = { ...loadScenario(name), arms: ['control', 'sammy'] };
    expect(renderReport(r).markdown).toContain(`| server | ${server}, congestion control reno |`);
  });

  test('a result from before server.kind is the Node server', () => {
    const r = result();
    const { kind: _kind, ...server } = r.config.scenario.server;
    r.config.scenario = { ...r.config.scenario, server: server as typeof r.config.scenario.server };
    expect(renderReport(r).markdown).toContain('| server | burst 4 packets, congestion control reno |');
  });

  test('figures: time series per arm and neighbour bars', () => {
    const { files } = renderReport(result());
    expect(Object.keys(files).sort()).toEqual(
      ['fig-buffer.svg', 'fig-link.svg', 'fig-neighbour-udp.svg', 'fig-pace.svg', 'fig-queue.svg', 'fig-rtt.svg', 'fig-throughput.svg'].sort(),
    );
    for (const svg of Object.values(files)) expect(svg).toMatch(/^<svg [^>]*xmlns="http:\/\/www.w3.org\/2000\/svg"[\s\S]*<\/svg>$/);
    // Both arms drawn in the RTT figure; only Sammy has a pace rate.
    expect(files['fig-rtt.svg']!.match(/<polyline/g)).toHaveLength(2);
    expect(files['fig-pace.svg']!.match(/<polyline/g)).toHaveLength(1);
    expect(files['fig-neighbour-udp.svg']!.match(/<rect x=/g)!.length).toBeGreaterThanOrEqual(2);
  });

  test('a trace link: the trace in the setup, the fidelity section and figure, the delay line queue', () => {
    const r = result();
    r.config.scenario = { ...loadScenario('cellular-lte'), arms: ['control', 'sammy'] };
    r.traceFidelity = traceFidelity({ trace: '../../sim/traces/ATT-LTE-driving-2016.down', calibrationS: 4, skippedS: 1, binS: 1, capacity: [300, 100, 200], served: [290, 110, 190], received: [280, 100, 180] });
    r.delayLine!.down.trace = { queueLimitBytes: 91206, maxQueuedBytes: 90000, dropsQueue: 12, servedBytes: 5000, opportunities: 10, unusedOpportunities: 3, restarts: 7 };
    const { markdown, files } = renderReport(r);
    expect(markdown).toContain('| bottleneck | trace `../../sim/traces/ATT-LTE-driving-2016.down` (mahimahi, mean 4.56 Mbit/s, repeating every 120.002 s, restarted at every play request)');
    expect(markdown).toContain('## Trace fidelity');
    expect(markdown).toContain('| served at the bottleneck (IP bytes) | 0.998 | 0.983 | 5.0% |');
    const { model } = reportModel(r);
    expect(sectionOf(model, 'fidelity')!.blocks.at(-1)).toEqual({ lines: [{ prose: 'fidelityWithin', slots: { tolerancePct: 10, correlation: prose('fidelityCorrelation', { minCorrelation: 0.9 }) } }] });
    expect(sentence(sectionOf(model, 'delayLine')!.blocks.at(-1)!)).toEqual({
      prose: 'traceQueue', slots: { limitBytes: 91206, maxQueuedBytes: 90000, drops: 12, servedBytes: 5000, opportunities: 10, unused: 3, restarts: 7 },
    });
    expect(files['fig-trace-fidelity.svg']!.match(/<polyline/g)).toHaveLength(3);
    // A constant link has neither.
    const constant = renderReport(result());
    expect(sectionOf(reportModel(result()).model, 'fidelity')).toBeUndefined();
    expect(constant.files['fig-trace-fidelity.svg']).toBeUndefined();
  });

  test('trials spread over the trace: their start points in the setup, and every arm against control within each trial', () => {
    const r = result();
    r.config.scenario = { ...loadScenario('cellular-umts'), arms: ['control', 'sammy'], trials: 2, neighbours: loadScenario('cellular-umts').neighbours };
    const { markdown } = renderReport(r);
    expect(setupCell(reportModel(r).model, 'bottleneck')).toContain(prose('restartSpread', { trials: 2, startsS: '0.0, 464.2' }));
    expect(sectionOf(reportModel(r).model, 'paired')).toBeDefined();
    // Trial 1: 9100 - 36100, trial 2: 9200 - 36200: -27000 both times.
    expect(markdown).toContain('| chunk throughput, playing phase (kbps) | -27000 [-27000, -27000] (n=2); lower 2, higher 0 |');
    expect(markdown).toMatch(/\| UDP neighbour one-way delay \(ms\) \| -18\.\d+ \[-\d+\.\d+, -\d+\.\d+\] \(n=2\); lower 2, higher 0 \|/);
    // Trials that all start at the trace's beginning are not paired in the report.
    r.config.scenario = { ...r.config.scenario, link: { ...r.config.scenario.link, traceStart: 'beginning' } };
    expect(sectionOf(reportModel(r).model, 'paired')).toBeUndefined();
  });

  test('the CPU load: per session, with the CPU-bound ones named', () => {
    const r = result();
    r.trials.forEach((t, i) => Object.assign(t.metrics, { cpuBusyPct: 60 + i, cpuBusyUnnicedPct: i === 1 ? 95 : 40 }));
    const cpu = sectionOf(reportModel(r).model, 'cpu')!;
    expect(sentence(cpu.blocks[0]!).slots).toEqual({ cores: '', busyPct: '64', unnicedPct: '46' });
    expect(cpu.blocks[1]).toEqual({
      lines: [
        { prose: 'cpuBound', slots: { bound: 1, measured: 9, boundPct: 90 } },
        { item: { prose: 'cpuBoundSession', slots: { trial: 1, experiment: 'none', arm: 'sammy', unnicedPct: '95', busyPct: '61' } } },
      ],
    });
    // Results from before the CPU was measured have no such section.
    expect(sectionOf(reportModel(result()).model, 'cpu')).toBeUndefined();
  });

  test('writeReport writes report.md and every figure it links', () => {
    const dir = mkdtempSync(join(tmpdir(), 'sammy-report-'));
    try {
      writeReport(result(), dir);
      const md = readFileSync(join(dir, 'report.md'), 'utf8');
      for (const [, file] of md.matchAll(/!\[[^\]]*\]\(([^)]+)\)/g)) expect(readdirSync(dir)).toContain(file);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('averageSeries: per-trial bin means, then the mean over trials', () => {
    expect(averageSeries([[[0, 1], [0.4, 3], [1, 5]], [[0.2, 6]]], 0.5)).toEqual([[0, 4], [1, 5]]);
  });
});

describe('svg', () => {
  test('ticks are round numbers covering the range', () => {
    expect(ticks(0, 40)).toEqual([0, 10, 20, 30, 40]);
    expect(ticks(0, 1.05)).toEqual([0, 0.5, 1]);
    expect(ticks(0, 27)).toEqual([0, 10, 20]);
  });

  test('escapes text and draws one polyline per series', () => {
    const svg = lineChart({ title: 'a < b', xLabel: 'x', yLabel: 'y', series: [{ name: 'sammy', points: [[0, 1], [1, 2]] }, { name: 'control', points: [[0, 3]] }] });
    expect(svg).toContain('a &lt; b');
    expect(svg.match(/<polyline/g)).toHaveLength(2);
  });

  test('bars with CI whiskers; a missing value draws no bar', () => {
    const svg = barChart({ title: 't', yLabel: 'ms', bars: [{ name: 'control', value: 10, ci95: [8, 12] }, { name: 'sammy', value: null, ci95: null }] });
    expect(svg.match(/<rect x=/g)).toHaveLength(1);
    expect(svg).toContain('>sammy<');
  });
});

describe('comparePlayers', () => {
  test('per arm and metric: the headless mean against the browser mean, within 10% or not', async () => {
    const { comparePlayers } = await import('../../src/analysis/compare.js');
    const summary = (chunk: number, play: number) => ({ none: { sammy: { chunkThroughputKbps: { mean: chunk, ci95: null, n: 2, changeVsControlPct: null }, avgBitrateKbps: { mean: 1050, ci95: null, n: 2, changeVsControlPct: null }, playDelayS: { mean: play, ci95: null, n: 2, changeVsControlPct: null } } } });
    const result = (chunk: number, play: number) => ({ config: { scenario: { arms: ['sammy'] } }, summary: {}, summaryByNeighbour: summary(chunk, play) }) as never;
    const rows = comparePlayers(result(6000, 0.4), result(6300, 0.3));
    expect(rows.map((r) => [r.arm, r.metric, r.differencePct, r.within])).toEqual([
      ['sammy', 'chunkThroughputKbps', 5, true],
      ['sammy', 'avgBitrateKbps', 0, true],
      ['sammy', 'playDelayS', expect.closeTo(-25, 10), false],
    ]);
  });
});
