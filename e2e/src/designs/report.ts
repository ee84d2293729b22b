/**
 * The report's part for an experiment design: the estimates beside the TTE with their
 * bias (tables), the IMC-style bias plot per metric, the switchback estimate, the
 * history-bias curve and the fairness heatmaps. A function of `result.json` alone.
 */
import type { LabResult } from '../analysis/result.js';
import { mean } from '../analysis/stats.js';
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

function abLines(x: ExperimentResult, d: ExperimentDesign, files: Record<string, string>): string[] {
  if (d.design !== 'ab') return [];
  const shares = d.shares.filter((p) => p > 0 && p < 1);
  const lines = [
    '### A/B estimates against the total treatment effect',
    '',
    `Percent change, ${d.treatment} (treatment) against ${d.control} (control), mean [95% CI]. TTE: every viewer on ${d.treatment} against every viewer on ${d.control} (shares 1 and 0). A/B at share p: the treatment viewers against the control viewers of the same run, round(p x ${d.sessions}) of ${d.sessions} on the treatment. Bias: the A/B estimate minus the TTE, in percentage points.`,
    '',
    `| metric | TTE | ${shares.map((p) => `A/B at ${p} (bias)`).join(' | ')} |`,
    `| --- | --- | ${shares.map(() => '---').join(' | ')} |`,
  ];
  for (const m of DESIGN_METRICS) {
    const e = x.metrics[m];
    if (!e) continue;
    lines.push(`| ${DESIGN_METRIC_LABELS[m]} | ${estimateText(e.tte)} | ${shares.map((p) => { const a = e.ab.find((y) => y.share === p); return `${estimateText(a)} (${points(a?.biasPoints)})`; }).join(' | ')} |`);
    const series: IntervalSeries[] = [{ name: 'A/B estimate', color: '#1f77b4', points: e.ab.map((a) => ({ x: a.share, y: a.pct, ci95: a.ci95 })) }];
    files[`fig-bias-${m}.svg`] = intervalPlot({
      title: `${DESIGN_METRIC_LABELS[m]}: A/B estimate at each treatment share vs the TTE`, xLabel: `treatment share (${d.treatment} among ${d.sessions} viewers)`, yLabel: `${d.treatment} vs ${d.control} (%)`,
      series, bands: [{ name: 'TTE (95% CI)', y: e.tte?.pct ?? null, ci95: e.tte?.ci95 ?? null, color: '#d62728' }], xRange: [0, 1],
    });
  }
  lines.push('', ...DESIGN_METRICS.filter((m) => x.metrics[m]).map((m) => `![bias of ${m}](fig-bias-${m}.svg)`), '');
  return lines;
}

function switchbackLines(x: ExperimentResult, d: ExperimentDesign, files: Record<string, string>): string[] {
  if (d.design !== 'switchback') return [];
  const lines = [
    '### Switchback estimate against the total treatment effect',
    '',
    `${d.intervals} intervals of ${d.intervalS} s per trial, half all-${d.treatment} and half all-${d.control} in random order; viewers arrive every session.playS / ${d.sessions} s; those starting within ${d.washoutS} s of a switch, or too late to finish inside their interval, play but are not measured. The estimate compares treatment-interval means with control-interval means (per trial, then over trials). TTE: one interval of the same arrivals with every viewer on ${d.treatment} against one with every viewer on ${d.control} (run in the same trial, measured by the same rule).`,
    '',
    '| metric | TTE | switchback | bias |',
    '| --- | --- | --- | --- |',
  ];
  const tte: IntervalSeries = { name: 'TTE', color: '#d62728', points: [] };
  const sb: IntervalSeries = { name: 'switchback', color: '#1f77b4', points: [] };
  DESIGN_METRICS.forEach((m, i) => {
    const e = x.metrics[m];
    if (!e) return;
    lines.push(`| ${DESIGN_METRIC_LABELS[m]} | ${estimateText(e.tte)} | ${estimateText(e.switchback)} | ${points(e.switchback?.biasPoints)} |`);
    tte.points.push({ x: i - 0.12, y: e.tte?.pct ?? null, ci95: e.tte?.ci95 ?? null });
    sb.points.push({ x: i + 0.12, y: e.switchback?.pct ?? null, ci95: e.switchback?.ci95 ?? null });
  });
  files['fig-switchback.svg'] = intervalPlot({
    title: 'Switchback estimate beside the TTE, per metric', xLabel: '', yLabel: `${d.treatment} vs ${d.control} (%)`, series: [tte, sb],
    xRange: [0, DESIGN_METRICS.length - 1], xTicks: DESIGN_METRICS.map((m, i) => [i, DESIGN_METRIC_LABELS[m].replace('time-average ', '').replace('retransmitted', 'retrans.')]),
  });
  lines.push('', '![switchback](fig-switchback.svg)', '');
  return lines;
}

function historyLines(x: ExperimentResult, d: ExperimentDesign, files: Record<string, string>): string[] {
  if (d.design !== 'history' || !x.historyCurve) return [];
  const lines = [
    '### History bias (thesis 2.5.6)',
    '',
    `${Math.round(d.sessions / 2)} treatment viewers start from an empty history, ${d.sessions - Math.round(d.sessions / 2)} control viewers from one written by ${d.fillRounds} unmeasured round(s) of their own (${d.fillPlayS} s each); then every viewer plays one session per round and keeps its history. Treatment ${d.treatment}, control ${d.control}. Initial bitrate: the mean bitrate of the first 20 s of media.`,
    '',
    '| round | treatment initial bitrate (kbps) | control initial bitrate (kbps) | gap, treatment vs control |',
    '| --- | --- | --- | --- |',
    ...x.historyCurve.map((r) => `| ${r.round} | ${r.treatmentKbps?.toFixed(0) ?? '–'} | ${r.controlKbps?.toFixed(0) ?? '–'} | ${estimateText(r)} |`),
    '',
    'Over all rounds, treatment vs control:',
    '',
    '| metric | estimate |',
    '| --- | --- |',
    ...DESIGN_METRICS.map((m) => `| ${DESIGN_METRIC_LABELS[m]} | ${estimateText(x.metrics[m]?.history)} |`),
    '',
  ];
  files['fig-history.svg'] = intervalPlot({
    title: 'Initial-bitrate gap over successive rounds (empty vs full history)', xLabel: 'round (one session per viewer)', yLabel: 'treatment vs control (%)',
    series: [{ name: 'gap', color: '#1f77b4', points: x.historyCurve.map((r) => ({ x: r.round, y: r.pct, ci95: r.ci95 })) }],
    xRange: [1, Math.max(2, x.historyCurve.length)], xTicks: x.historyCurve.map((r) => [r.round, String(r.round)]),
  });
  lines.push('![history bias](fig-history.svg)', '');
  return lines;
}

function fairnessLines(x: ExperimentResult, d: ExperimentDesign, files: Record<string, string>): string[] {
  const f = x.fairness;
  if (d.design !== 'fairness' || !f) return [];
  const lines = [
    '### Fairness matrix',
    '',
    `Each pair of flows shares the link for session.playS; throughput counts from ${d.measureFromS} s on. A cell is the row flow's throughput divided by its max-min fair share when it runs beside the column flow (1 = its fair share; below 1 it got less, above 1 it took more). A video's demand is its top bitrate x ${d.videoDemandMultiplier}; a bulk flow's is unlimited; the capacity is the link rate.`,
    '',
  ];
  f.settings.forEach((setting, k) => {
    const values = f.flows.map((row) => f.flows.map((col) => f.cells.find((c) => c.setting === setting && c.flow === row && c.against === col)?.shareOfFair ?? null));
    const name = `fig-fairness-${k + 1}.svg`;
    files[name] = heatmap({ title: `Share of max-min fair share, ${setting}`, rowLabel: 'flow', colLabel: 'beside', rows: f.flows, cols: f.flows, values, color: shareColor, format: (v) => (v === null ? '–' : v.toFixed(2)) });
    lines.push(`#### ${setting}`, '', `![fairness ${setting}](${name})`, '', `| flow \\ beside | ${f.flows.join(' | ')} |`, `| --- | ${f.flows.map(() => '---').join(' | ')} |`);
    for (const row of f.flows) {
      lines.push(`| ${row} | ${f.flows.map((col) => { const c = f.cells.find((y) => y.setting === setting && y.flow === row && y.against === col); return c && c.shareOfFair !== null ? `${c.shareOfFair.toFixed(2)} (${c.throughputMbps?.toFixed(1)} of ${c.fairMbps.toFixed(1)} Mbit/s)` : '–'; }).join(' | ')} |`);
    }
    lines.push('');
  });
  if (f.videoQoe.length > 0) {
    const n = (v: number | null, digits = 2) => (v === null ? '–' : v.toFixed(digits));
    lines.push('#### Video QoE beside each flow', '', '| setting | video | beside | play delay (s) | rebuffer time (s) | time-average bitrate (kbps) | chunk throughput (kbps) | n |', '| --- | --- | --- | --- | --- | --- | --- | --- |');
    for (const q of f.videoQoe) lines.push(`| ${q.setting} | ${q.flow} | ${q.against} | ${n(q.playDelayS)} | ${n(q.rebufferS)} | ${n(q.avgBitrateKbps, 0)} | ${n(q.chunkThroughputKbps, 0)} | ${q.n} |`);
    lines.push('');
  }
  return lines;
}

function headlessText(result: LabResult): string {
  const u = result.headlessPlayer;
  if (!u || u.cpuS === null) return '';
  return ` The headless player process used ${u.cpuS.toFixed(1)} s of CPU in ${u.wallS.toFixed(0)} s for ${u.sessions} sessions (${((100 * u.cpuS) / u.wallS).toFixed(1)}% of one core).`;
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

/** The design's section of report.md, and its figures. */
export function designReport(result: LabResult): { lines: string[]; files: Record<string, string> } {
  const d = result.config.scenario.experiment;
  if (!d) return { lines: [], files: {} };
  const { runs, experiment: x } = rederived(result, d);
  const files: Record<string, string> = {};
  const sessions = runs.flatMap((r) => r.sessions);
  const failed = sessions.filter((s) => s.error !== null);
  const cpu = mean(runs.flatMap((r) => r.cpu.map((c) => c[1] * 100)));
  const lines = [
    `## Experiment design: ${d.design}`,
    '',
    `${DESIGNS[d.design].description}. ${runs.length} runs, ${sessions.length} sessions of the headless player (${failed.length} failed), ${runs.reduce((a, r) => a + r.flows.length, 0)} bulk flows.${cpu === null ? '' : ` The machine's cores were ${cpu.toFixed(0)}% busy on average during the runs (everyone's work).`}${headlessText(result)}`,
    '',
    ...(x?.skipped.length ? ['Not run:', '', ...x.skipped.map((s) => `- ${s}`), ''] : []),
  ];
  if (x) lines.push(...abLines(x, d, files), ...switchbackLines(x, d, files), ...historyLines(x, d, files), ...fairnessLines(x, d, files));
  lines.push('### Runs', '', '| trial | run | sessions (failed) | flows |', '| --- | --- | --- | --- |');
  for (const r of runs) lines.push(`| ${r.trial} | ${r.label} | ${r.sessions.length} (${r.sessions.filter((s) => s.error !== null).length}) | ${r.flows.map((f) => `${f.kind} ${f.throughputMbps?.toFixed(1) ?? '–'} Mbit/s${f.error ? ` (${f.error})` : ''}`).join(', ') || '–'} |`);
  lines.push('');
  if (failed.length > 0) lines.push('Failed sessions:', '', ...failed.slice(0, 50).map((s) => `- ${s.id} (${s.arm}): ${s.error}`), '');
  return { lines, files };
}
