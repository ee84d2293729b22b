/**
 * The report's part for an experiment design: the estimates beside the TTE with their
 * bias (tables), the IMC-style bias plot per metric, the switchback estimate, the
 * history-bias curve and the fairness heatmaps. A function of `result.json` alone.
 */
import type { LabResult } from '../analysis/result.js';
import { mean } from '../analysis/stats.js';
import { prose, type Block, type Section } from '../analysis/report-markdown.js';
import { heatmap, intervalPlot, shareColor, type IntervalSeries } from '../analysis/svg.js';
import type { Estimate } from './estimators.js';
import { withFlowThroughput } from './common.js';
import { DESIGNS, summarizeExperiment } from './index.js';
import { DESIGN_METRICS, type DesignMetric, type DesignRun, type ExperimentDesign, type ExperimentResult } from './types.js';

export const DESIGN_METRIC_LABELS: Record<DesignMetric, string> = {
  chunkThroughputKbps: 'chunk throughput',
  videoRttMs: 'video RTT',
  retransPct: 'retransmitted bytes',
  avgBitrateKbps: 'time-average bitrate',
  rebufferS: 'rebuffer time',
  playDelayS: 'play delay',
};

function pct(v: number | null | undefined): string {
  return typeof v === 'number' && Number.isFinite(v) ? `${v >= 0 ? '+' : ''}${v.toFixed(1)}%` : '–';
}

export function estimateText(e: Estimate | null | undefined): string {
  if (!e || e.pct === null) return '–';
  return `${pct(e.pct)}${e.ci95 ? ` [${e.ci95[0].toFixed(1)}, ${e.ci95[1].toFixed(1)}]` : ''}`;
}

function points(v: number | null | undefined): string {
  return typeof v === 'number' && Number.isFinite(v) ? `${v >= 0 ? '+' : ''}${v.toFixed(1)} pt` : '–';
}

function abSections(x: ExperimentResult, d: ExperimentDesign, files: Record<string, string>): Section[] {
  if (d.design !== 'ab') return [];
  const shares = d.shares.filter((p) => p > 0 && p < 1);
  const rows: string[][] = [];
  for (const m of DESIGN_METRICS) {
    const e = x.metrics[m];
    if (!e) continue;
    rows.push([DESIGN_METRIC_LABELS[m], estimateText(e.tte), ...shares.map((p) => { const a = e.ab.find((y) => y.share === p); return `${estimateText(a)} (${points(a?.biasPoints)})`; })]);
    const series: IntervalSeries[] = [{ name: 'A/B estimate', color: '#1f77b4', points: e.ab.map((a) => ({ x: a.share, y: a.pct, ci95: a.ci95 })) }];
    files[`fig-bias-${m}.svg`] = intervalPlot({
      title: `${DESIGN_METRIC_LABELS[m]}: A/B estimate at each treatment share vs the TTE`, xLabel: `treatment share (${d.treatment} among ${d.sessions} viewers)`, yLabel: `${d.treatment} vs ${d.control} (%)`,
      series, bands: [{ name: 'TTE (95% CI)', y: e.tte?.pct ?? null, ci95: e.tte?.ci95 ?? null, color: '#d62728' }], xRange: [0, 1],
    });
  }
  return [{
    key: 'design:ab',
    heading: { level: 3, text: 'A/B estimates against the total treatment effect' },
    blocks: [
      { lines: [{ prose: 'abEstimates', slots: { treatment: d.treatment, control: d.control, sessions: d.sessions } }] },
      { table: { header: ['metric', 'TTE', ...shares.map((p) => `A/B at ${p} (bias)`)], rows } },
      { lines: DESIGN_METRICS.filter((m) => x.metrics[m]).map((m) => `![bias of ${m}](fig-bias-${m}.svg)`) },
    ],
  }];
}

function switchbackSections(x: ExperimentResult, d: ExperimentDesign, files: Record<string, string>): Section[] {
  if (d.design !== 'switchback') return [];
  const tte: IntervalSeries = { name: 'TTE', color: '#d62728', points: [] };
  const sb: IntervalSeries = { name: 'switchback', color: '#1f77b4', points: [] };
  const rows: string[][] = [];
  DESIGN_METRICS.forEach((m, i) => {
    const e = x.metrics[m];
    if (!e) return;
    rows.push([DESIGN_METRIC_LABELS[m], estimateText(e.tte), estimateText(e.switchback), points(e.switchback?.biasPoints)]);
    tte.points.push({ x: i - 0.12, y: e.tte?.pct ?? null, ci95: e.tte?.ci95 ?? null });
    sb.points.push({ x: i + 0.12, y: e.switchback?.pct ?? null, ci95: e.switchback?.ci95 ?? null });
  });
  files['fig-switchback.svg'] = intervalPlot({
    title: 'Switchback estimate beside the TTE, per metric', xLabel: '', yLabel: `${d.treatment} vs ${d.control} (%)`, series: [tte, sb],
    xRange: [0, DESIGN_METRICS.length - 1], xTicks: DESIGN_METRICS.map((m, i) => [i, DESIGN_METRIC_LABELS[m].replace('time-average ', '').replace('retransmitted', 'retrans.')]),
  });
  const slots = { intervals: d.intervals, intervalS: d.intervalS, treatment: d.treatment, control: d.control, sessions: d.sessions, washoutS: d.washoutS };
  return [{
    key: 'design:switchback',
    heading: { level: 3, text: 'Switchback estimate against the total treatment effect' },
    blocks: [
      { lines: [{ prose: 'switchback', slots }] },
      { table: { header: ['metric', 'TTE', 'switchback', 'bias'], rows } },
      { lines: ['![switchback](fig-switchback.svg)'] },
    ],
  }];
}

function historySections(x: ExperimentResult, d: ExperimentDesign, files: Record<string, string>): Section[] {
  if (d.design !== 'history' || !x.historyCurve) return [];
  files['fig-history.svg'] = intervalPlot({
    title: 'Initial-bitrate gap over successive rounds (empty vs full history)', xLabel: 'round (one session per viewer)', yLabel: 'treatment vs control (%)',
    series: [{ name: 'gap', color: '#1f77b4', points: x.historyCurve.map((r) => ({ x: r.round, y: r.pct, ci95: r.ci95 })) }],
    xRange: [1, Math.max(2, x.historyCurve.length)], xTicks: x.historyCurve.map((r) => [r.round, String(r.round)]),
  });
  const treatmentViewers = Math.round(d.sessions / 2);
  const slots = { treatmentViewers, controlViewers: d.sessions - treatmentViewers, fillRounds: d.fillRounds, fillPlayS: d.fillPlayS, treatment: d.treatment, control: d.control };
  return [{
    key: 'design:history',
    heading: { level: 3, text: 'History bias (thesis 2.5.6)' },
    blocks: [
      { lines: [{ prose: 'historyBias', slots }] },
      {
        table: {
          header: ['round', 'treatment initial bitrate (kbps)', 'control initial bitrate (kbps)', 'gap, treatment vs control'],
          rows: x.historyCurve.map((r) => [String(r.round), r.treatmentKbps?.toFixed(0) ?? '–', r.controlKbps?.toFixed(0) ?? '–', estimateText(r)]),
        },
      },
      { lines: [{ prose: 'historyOverall', slots: {} }] },
      { table: { header: ['metric', 'estimate'], rows: DESIGN_METRICS.map((m) => [DESIGN_METRIC_LABELS[m], estimateText(x.metrics[m]?.history)]) } },
      { lines: ['![history bias](fig-history.svg)'] },
    ],
  }];
}

function fairnessSections(x: ExperimentResult, d: ExperimentDesign, files: Record<string, string>): Section[] {
  const f = x.fairness;
  if (d.design !== 'fairness' || !f) return [];
  const sections: Section[] = [{
    key: 'design:fairness',
    heading: { level: 3, text: 'Fairness matrix' },
    blocks: [{ lines: [{ prose: 'fairness', slots: { measureFromS: d.measureFromS, videoDemandMultiplier: d.videoDemandMultiplier } }] }],
  }];
  f.settings.forEach((setting, k) => {
    const cellOf = (row: string, col: string) => f.cells.find((c) => c.setting === setting && c.flow === row && c.against === col);
    const values = f.flows.map((row) => f.flows.map((col) => cellOf(row, col)?.shareOfFair ?? null));
    const name = `fig-fairness-${k + 1}.svg`;
    files[name] = heatmap({ title: `Share of max-min fair share, ${setting}`, rowLabel: 'flow', colLabel: 'beside', rows: f.flows, cols: f.flows, values, color: shareColor, format: (v) => (v === null ? '–' : v.toFixed(2)) });
    const rows = f.flows.map((row) => [
      row,
      ...f.flows.map((col) => {
        const c = cellOf(row, col);
        return c && c.shareOfFair !== null ? `${c.shareOfFair.toFixed(2)} (${c.throughputMbps?.toFixed(1)} of ${c.fairMbps.toFixed(1)} Mbit/s)` : '–';
      }),
    ]);
    sections.push({
      key: `design:fairness:${setting}`,
      heading: { level: 4, text: setting },
      blocks: [{ lines: [`![fairness ${setting}](${name})`] }, { table: { header: ['flow \\ beside', ...f.flows], rows } }],
    });
  });
  if (f.videoQoe.length > 0) {
    const n = (v: number | null, digits = 2) => (v === null ? '–' : v.toFixed(digits));
    sections.push({
      key: 'design:fairness:qoe',
      heading: { level: 4, text: 'Video QoE beside each flow' },
      blocks: [{
        table: {
          header: ['setting', 'video', 'beside', 'play delay (s)', 'rebuffer time (s)', 'time-average bitrate (kbps)', 'chunk throughput (kbps)', 'n'],
          rows: f.videoQoe.map((q) => [q.setting, q.flow, q.against, n(q.playDelayS), n(q.rebufferS), n(q.avgBitrateKbps, 0), n(q.chunkThroughputKbps, 0), String(q.n)]),
        },
      }],
    });
  }
  return sections;
}

function headlessText(result: LabResult): string {
  const u = result.headlessPlayer;
  if (!u || u.cpuS === null) return '';
  return prose('designHeadless', { cpuS: u.cpuS.toFixed(1), wallS: u.wallS.toFixed(0), sessions: u.sessions, corePct: ((100 * u.cpuS) / u.wallS).toFixed(1) });
}

/**
 * The runs and the estimates derived again from the runs' raw records with today's
 * rules, as the runner derived them (so a result re-renders the same unless a rule
 * changed; the flows' throughput is the one rule changed since results were committed).
 */
function rederived(result: LabResult, d: ExperimentDesign): { runs: DesignRun[]; experiment: ExperimentResult | null } {
  const runs = withFlowThroughput(result.designRuns ?? [], d.design === 'fairness' ? d.measureFromS : 0);
  const stored = result.experiment ?? null;
  const rungsKbps = (result.config.media as { rungsKbps?: number[] } | undefined)?.rungsKbps ?? [];
  if (!stored || rungsKbps.length === 0) return { runs, experiment: stored };
  // The fairness design ran without the flows it had to skip (its summary names those it ran).
  const design = d.design === 'fairness' && stored.fairness ? { ...d, flows: stored.fairness.flows } : d;
  return { runs, experiment: summarizeExperiment(design, runs, { topBitrateKbps: Math.max(...rungsKbps) }, stored.skipped) };
}

/** The design's sections of report.md, and its figures. */
export function designReport(result: LabResult): { sections: Section[]; files: Record<string, string> } {
  const d = result.config.scenario.experiment;
  if (!d) return { sections: [], files: {} };
  const { runs, experiment: x } = rederived(result, d);
  const files: Record<string, string> = {};
  const sessions = runs.flatMap((r) => r.sessions);
  const failed = sessions.filter((s) => s.error !== null);
  const cpu = mean(runs.flatMap((r) => r.cpu.map((c) => c[1] * 100)));
  const opening = {
    description: DESIGNS[d.design].description, runs: runs.length, sessions: sessions.length, failed: failed.length,
    flows: runs.reduce((a, r) => a + r.flows.length, 0),
    cpu: cpu === null ? '' : prose('designCpu', { busyPct: cpu.toFixed(0) }),
    headless: headlessText(result),
  };
  const blocks: Block[] = [{ lines: [{ prose: 'designOpening', slots: opening }] }];
  if (x?.skipped.length) blocks.push({ lines: [{ prose: 'notRun', slots: {} }] }, { lines: x.skipped.map((s) => `- ${s}`) });
  const sections: Section[] = [{ key: 'design', heading: { level: 2, text: `Experiment design: ${d.design}` }, blocks }];
  if (x) sections.push(...abSections(x, d, files), ...switchbackSections(x, d, files), ...historySections(x, d, files), ...fairnessSections(x, d, files));
  const runRows = runs.map((r) => [
    String(r.trial), r.label, `${r.sessions.length} (${r.sessions.filter((s) => s.error !== null).length})`,
    r.flows.map((f) => `${f.kind} ${f.throughputMbps?.toFixed(1) ?? '–'} Mbit/s${f.error ? ` (${f.error})` : ''}`).join(', ') || '–',
  ]);
  const runBlocks: Block[] = [{ table: { header: ['trial', 'run', 'sessions (failed)', 'flows'], rows: runRows } }];
  if (failed.length > 0) {
    runBlocks.push(
      { lines: [{ prose: 'designFailed', slots: {} }] },
      { lines: failed.slice(0, 50).map((s) => ({ item: { prose: 'designFailedSession', slots: { id: s.id, arm: s.arm, error: s.error! } } })) },
    );
  }
  sections.push({ key: 'design:runs', heading: { level: 3, text: 'Runs' }, blocks: runBlocks });
  return { sections, files };
}
