/**
 * DIR/report.md and its SVG figures from a lab result: the summary table beside the
 * thesis's lab numbers (section 2.6), the measurement windows, and time series
 * averaged over trials (like thesis Fig. 2.7) and neighbour metrics per arm (Fig. 2.8).
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { NEIGHBOUR_KINDS, type NeighbourKind } from '../scenario/neighbour-kinds.js';
import { LabError } from '../lab-error.js';
import type { CodeVersion } from './records.js';
import { experimentName, type LabResult, type TrialRecord } from './result.js';
import { queueDelayMsOf } from './queue-samples.js';
import { linkRateMbps, queueBytes, serverKindOf, trialTraceStartsS, type Scenario } from '../scenario/scenario.js';
import { mean, summarize, type MetricSummary } from './stats.js';
import { cpuBound, CPU_BOUND_PCT } from './cpu-samples.js';
import type { TraceFidelity } from '../scenario/trace.js';
import { CAPACITY_LOOKBACK_S, TIME_BIN_S, traceCapacityOf, udpDelayByCapacity, udpDelayByTime, type AloneDelays, type DelayByClass } from './delay-by-capacity.js';
import { barChart, lineChart, type Series } from './svg.js';
import { pairedDifference, pairedDifferenceOf, type PairedDifference } from './paired.js';
import { designReport } from '../designs/report.js';
import { linkThroughputSeries, throughputSeries } from './video-metrics.js';

const KINDS = Object.keys(NEIGHBOUR_KINDS) as NeighbourKind[];

/** Thesis section 2.6, Sammy vs control: the changes its lab measured. */
export const THESIS_LAB_CHANGE_PCT: Record<string, number> = {
  chunkThroughputKbps: -46,
  videoRttMs: -42,
  ...Object.fromEntries(KINDS.flatMap((k) => {
    const { metrics, thesisChangePct } = NEIGHBOUR_KINDS[k];
    return metrics[0] && thesisChangePct !== undefined ? [[metrics[0].name, thesisChangePct]] : [];
  })),
};

/** Every metric's row label, in the report's order: the video's, then each neighbour kind's. */
export const METRIC_LABELS: Record<string, string> = {
  chunkThroughputKbps: 'chunk throughput, playing phase (kbps)',
  videoRttMs: 'video RTT (ms, server TCP_INFO per response)',
  retransPct: 'video retransmitted bytes (%)',
  playDelayS: 'play delay (s)',
  rebufferCount: 'rebuffers (count)',
  rebufferS: 'rebuffer time (s)',
  avgBitrateKbps: 'time-average bitrate (kbps)',
  avgQuality: 'mean SSIM of played segments',
  queueDelayMs: 'bottleneck queueing delay, session mean (ms)',
  meanRtpKbps: 'mean requested pace rate, playing phase (kbps)',
  mediaErrors: 'media errors the player rebuilt its MediaSource after (count)',
  abandonedChunks: "video chunks refetched after Sammy's stalled-download rule gave a request up (count)",
  fadeHoldS: "requests held by Sammy's fade hold, session total (s of playback)",
  guardRaisedChunks: "paced video chunks the server's spiral guard raised above their rtp (count)",
  resumedAfterOutage: "played on after the trace's outage (fraction of sessions)",
  outageResumeS: 'playback moved again after the outage ended (s, to 0.5 s)',
  cpuBusyPct: "machine CPU busy, all cores, everyone's work (%)",
  cpuBusyUnnicedPct: 'machine CPU busy without niced work (%)',
  ...Object.fromEntries(KINDS.flatMap((k) => NEIGHBOUR_KINDS[k].metrics.map((m) => [m.name, m.label]))),
};

/** Each neighbour kind's headline metric (its bar chart). */
const NEIGHBOUR_METRIC: Record<string, string> = Object.fromEntries(KINDS.flatMap((k) => (NEIGHBOUR_KINDS[k].metrics[0] ? [[k, NEIGHBOUR_KINDS[k].metrics[0].name]] : [])));

/** The kind each neighbour metric belongs to (its window). */
const KIND_OF_METRIC: Record<string, string> = Object.fromEntries(KINDS.flatMap((k) => NEIGHBOUR_KINDS[k].metrics.map((m) => [m.name, k])));

function num(v: number | null | undefined, digits = 2): string {
  if (typeof v !== 'number' || !Number.isFinite(v)) return '–';
  const abs = Math.abs(v);
  return abs >= 1000 ? v.toFixed(0) : abs >= 100 ? v.toFixed(1) : v.toFixed(digits);
}

function pct(v: number | null | undefined): string {
  return typeof v === 'number' ? `${v >= 0 ? '+' : ''}${v.toFixed(1)}%` : '–';
}

function cell(s: MetricSummary | undefined): string {
  if (!s || s.n === 0) return '–';
  const ci = s.ci95 && s.n > 1 ? ` [${num(s.ci95[0])}, ${num(s.ci95[1])}]` : '';
  return `${num(s.mean)}${ci} (n=${s.n})`;
}

/** How the player history was treated, in words (thesis 2.5.6). */
function historyText(player: Scenario['player']): string {
  if (player.history === 'per-session') return 'history reset before every session';
  const warmup = player.warmupSessions === 0 ? 'no warm-up' : `then ${player.warmupSessions} unmeasured ${player.warmupPlayS} s warm-up session(s) to seed it`;
  return `history reset once per arm before its first session, ${warmup}, carried between that arm's sessions`;
}

/** Mean over trials of step series [t, v], in bins of `binS`. */
export function averageSeries(list: Array<Array<[number, number]>>, binS: number): Array<[number, number]> {
  const sums = new Map<number, { sum: number; n: number }>();
  for (const series of list) {
    const per = new Map<number, { sum: number; n: number }>();
    for (const [t, v] of series) {
      const b = Math.floor(t / binS);
      const e = per.get(b) ?? { sum: 0, n: 0 };
      e.sum += v;
      e.n += 1;
      per.set(b, e);
    }
    for (const [b, e] of per) {
      const agg = sums.get(b) ?? { sum: 0, n: 0 };
      agg.sum += e.sum / e.n;
      agg.n += 1;
      sums.set(b, agg);
    }
  }
  return [...sums.entries()].sort((a, b) => a[0] - b[0]).map(([b, e]) => [b * binS, e.sum / e.n]);
}

/** An experiment by its name, or (older results, summary rows) the first of a kind. */
function experimentOf(s: Scenario, key: string): Scenario['neighbours'][number] | undefined {
  return s.neighbours.find((x) => (x.name ?? x.kind) === key) ?? s.neighbours.find((x) => x.kind === key);
}

function windowText(s: Scenario, key: string): string {
  const n = experimentOf(s, key);
  if (!n || n.kind === 'none') return '';
  return `${n.startS}–${n.endS ?? s.session.playS} s after playback start`;
}

function figures(result: LabResult, arms: string[]): Record<string, string> {
  const s = result.config.scenario;
  const ok = (r: TrialRecord) => r.error === null && r.session !== null;
  const solo = result.trials.filter((t) => t.neighbour === 'none' && ok(t));
  const base = solo.length > 0 ? solo : result.trials.filter(ok);
  const perArm = (f: (r: TrialRecord) => Array<[number, number]>, binS: number): Series[] =>
    arms.map((arm) => ({ name: arm, points: averageSeries(base.filter((r) => r.arm === arm).map(f), binS) })).filter((x) => x.points.length > 0);
  const which = solo.length > 0 ? 'no neighbour' : 'all experiments';
  const out: Record<string, string> = {};
  out['fig-throughput.svg'] = lineChart({
    title: `Video throughput over time (${which}, mean of trials)`, xLabel: 's since play request', yLabel: 'Mbit/s',
    series: perArm((r) => throughputSeries(r.telemetry, 0.5), 0.5),
  });
  out['fig-rtt.svg'] = lineChart({
    title: `Video RTT over time (server TCP_INFO, ${which})`, xLabel: 's since play request', yLabel: 'ms',
    series: perArm((r) => r.telemetry.filter((x) => x[4] !== null).map((x) => [x[0], x[4]!]), 1),
  });
  out['fig-queue.svg'] = lineChart({
    title: `Bottleneck queueing delay (${which})`, xLabel: 's since play request', yLabel: 'ms',
    series: perArm((r) => r.queue.map((q) => [q[0] / 1000, queueDelayMsOf(q, linkRateMbps(s.link))]), 0.5),
  });
  out['fig-link.svg'] = lineChart({
    title: `Bottleneck throughput, all traffic (${which})`, xLabel: 's since play request', yLabel: 'Mbit/s',
    series: perArm((r) => linkThroughputSeries(r.queue), 0.5),
  });
  out['fig-buffer.svg'] = lineChart({
    title: `Buffer level (${which})`, xLabel: 's since play request', yLabel: 's of media',
    series: perArm((r) => (r.session?.buffer ?? []).map(([t, b]) => [t, b]), 1),
  });
  out['fig-pace.svg'] = lineChart({
    title: `Requested pace rate (CMCD rtp, per response; ${which})`, xLabel: 's since play request', yLabel: 'Mbit/s',
    series: perArm((r) => r.telemetry.filter((x) => x[8] !== null).map((x) => [x[0], x[8]! / 1000]), 1),
  });
  for (const [name, summary] of Object.entries(result.summaryByNeighbour)) {
    const metric = NEIGHBOUR_METRIC[experimentOf(s, name)?.kind ?? name];
    if (!metric) continue;
    out[`fig-neighbour-${name}.svg`] = barChart({
      title: `${METRIC_LABELS[metric]} (${name === experimentOf(s, name)?.kind ? '' : `${name}, `}${windowText(s, name)})`,
      yLabel: METRIC_LABELS[metric]!.replace(/^.*\((.*)\)$/, '$1'),
      bars: arms.map((arm) => ({ name: arm, value: summary[arm]?.[metric]?.mean ?? null, ci95: summary[arm]?.[metric]?.ci95 ?? null })),
    });
  }
  const fidelity = result.traceFidelity;
  if (fidelity) {
    const at = (k: number) => fidelity.skippedS + k * fidelity.binS;
    const mbps = (i: 0 | 1 | 2): Array<[number, number]> =>
      fidelity.bins.flatMap((b, k) => (b[i] === null ? [] : [[at(k), (b[i]! * 8) / fidelity.binS / 1e6] as [number, number]]));
    out['fig-trace-fidelity.svg'] = lineChart({
      title: `Trace fidelity: ${fidelity.trace} under a saturating TCP flow`, xLabel: 's since the trace started', yLabel: 'Mbit/s per second',
      series: [{ name: 'trace capacity', points: mbps(0) }, { name: 'served at the bottleneck', points: mbps(1) }, { name: 'TCP payload received', points: mbps(2) }],
    });
  }
  return out;
}

/** A per-experiment heading: its name, its neighbour and window, and what it sets apart from the scenario. */
function experimentTitle(s: Scenario, name: string): string {
  const e = experimentOf(s, name);
  const neighbour = !e || e.kind === 'none' ? 'no neighbour' : `${e.kind} neighbour (${windowText(s, name)})`;
  const settings = e ? settingsText(s, e) : '';
  return `${name === e?.kind ? '' : `${name}: `}${neighbour}${settings ? `; ${settings}` : ''}`;
}

/** How the scenario's server makes bursts. */
function burstText(s: Scenario): string {
  const trainsOf = serverKindOf(s).kernelTrainsOf;
  return trainsOf === null ? `burst ${s.server.burstPackets} packets` : `${trainsOf}'s kernel trains`;
}

/** An experiment's server and queue settings where they differ from the scenario's (older results have none). */
function settingsText(s: Scenario, e: Scenario['neighbours'][number]): string {
  const parts: string[] = [];
  if (e.server && e.server.burstPackets !== s.server.burstPackets) parts.push(`burst ${e.server.burstPackets} packets`);
  if (e.server && e.server.trainPackets !== (s.server.trainPackets ?? null)) parts.push(e.server.trainPackets === null ? "the kernel's own trains" : `kernel trains of ${e.server.trainPackets} packets`);
  if (e.queue && JSON.stringify(e.queue) !== JSON.stringify(s.link.queue)) parts.push(`queue ${queueBytes(s.link, e.queue)} B (${'bdp' in e.queue ? `${e.queue.bdp} x BDP` : 'bytes'})`);
  return parts.join(', ');
}

/** Metrics side by side per experiment, when a scenario's experiments differ in their settings (e.g. burst size and queue). */
function experimentsLines(result: LabResult, arms: string[]): string[] {
  const s = result.config.scenario;
  const varied = s.neighbours.filter((e) => settingsText(s, e) !== '');
  if (varied.length === 0) return [];
  const metrics = ['retransPct', 'videoRttMs', 'chunkThroughputKbps', 'queueDelayMs', ...new Set(s.neighbours.flatMap((e) => (NEIGHBOUR_METRIC[e.kind] ? [NEIGHBOUR_METRIC[e.kind]!] : [])))];
  const lines = [
    '## Experiments side by side',
    '',
    `Mean [95% CI] (n) of each experiment's sessions; the scenario's own settings: ${burstText(s)}, ${s.server.trainPackets ? `kernel trains of ${s.server.trainPackets} packets` : "the kernel's own trains"}, queue ${queueBytes(s.link)} B.`,
    '',
  ];
  for (const arm of arms) {
    lines.push(`### ${arm}`, '', `| experiment | settings | ${metrics.map((m) => METRIC_LABELS[m]).join(' | ')} |`, `| --- | --- | ${metrics.map(() => '---').join(' | ')} |`);
    for (const e of s.neighbours) {
      const summary = result.summaryByNeighbour[e.name ?? e.kind]?.[arm];
      if (!summary) continue;
      lines.push(`| ${e.name ?? e.kind} | ${settingsText(s, e) || 'the scenario\'s'} | ${metrics.map((m) => cell(summary[m])).join(' | ')} |`);
    }
    lines.push('');
  }
  return lines;
}

/** The labels of the metrics measured per window (windows.ts), in the order shown. */
const WINDOW_METRIC_LABELS: Record<string, string> = {
  chunkThroughputKbps: 'chunk throughput, playing-phase chunks requested in the window (kbps)',
  chunkThroughputMultiple: 'chunk throughput / top bitrate (x)',
  paceMultiple: 'requested pace rate (rtp) / top bitrate (x)',
  chunkBitrateKbps: 'mean bitrate of the chunks requested (kbps)',
  videoRttMs: METRIC_LABELS.videoRttMs!,
  retransPct: METRIC_LABELS.retransPct!,
  queueDelayMs: 'bottleneck queueing delay (ms)',
  ...Object.fromEntries(KINDS.flatMap((k) => NEIGHBOUR_KINDS[k].metrics.map((m) => [m.name, m.label]))),
};

/** Steady-state scenarios: each experiment's metrics in the startup fill and in the steady state. */
function windowLines(result: LabResult, arms: string[]): string[] {
  const byWindow = result.summaryByWindow;
  const fraction = result.config.scenario.session.steadyFromBufferFraction;
  if (!byWindow || !fraction) return [];
  const target = result.config.scenario.player.maxBufferS;
  const lines = [
    '## Startup fill and steady state',
    '',
    `Each session is measured in two windows: the startup fill, from playback start until its buffer first held ${fraction} x the ${target} s target (${num(fraction * target, 1)} s), and the steady state, from then to the session's end. Mean [95% CI] (n) over the sessions of each window.`,
    '',
    `| arm | sessions that reached the steady state | its start, s after playback start (mean, range) |`,
    '| --- | --- | --- |',
  ];
  for (const arm of arms) {
    const of = result.trials.filter((t) => t.arm === arm && t.windows !== undefined);
    const starts = of.flatMap((t) => (t.windows?.steady ? [t.windows.steady.fromS] : []));
    lines.push(`| ${arm} | ${starts.length} of ${of.length} | ${starts.length ? `${num(mean(starts), 1)} (${num(Math.min(...starts), 1)}–${num(Math.max(...starts), 1)})` : '–'} |`);
  }
  lines.push('');
  for (const [name, summary] of Object.entries(byWindow.steady ?? {})) {
    const fill = byWindow.fill?.[name];
    lines.push(`### ${experimentTitle(result.config.scenario, name)}`, '', `| metric | ${arms.map((a) => `fill: ${a}`).join(' | ')} | ${arms.map((a) => `steady: ${a}`).join(' | ')} |`, `| --- | ${arms.map(() => '---').join(' | ')} | ${arms.map(() => '---').join(' | ')} |`);
    for (const [metric, label] of Object.entries(WINDOW_METRIC_LABELS)) {
      const row = [...arms.map((a) => fill?.[a]?.[metric]), ...arms.map((a) => summary[a]?.[metric])];
      if (row.every((x) => !x || x.n === 0)) continue;
      lines.push(`| ${label} | ${row.map(cell).join(' | ')} |`);
    }
    lines.push('');
  }
  return lines;
}

/** The setup table's bottleneck row. */
function bottleneckText(s: Scenario, link: { queueBytes: number; bdpBytes: number }): string {
  const queue = `droptail queue ${link.queueBytes} B (${(link.queueBytes / link.bdpBytes).toFixed(2)} x BDP of ${Math.round(link.bdpBytes)} B`;
  const trace = s.link.trace;
  if (!trace) return `tbf ${s.link.rateMbps} Mbit/s, ${queue}), server -> client`;
  const repeat = trace.periodS === null ? 'its last step holding' : `repeating every ${trace.periodS} s`;
  return `trace \`${trace.file}\` (${trace.format}, mean ${trace.meanRateMbps.toFixed(2)} Mbit/s, ${repeat}, ${restartText(s)}), served by the delay line at its delivery opportunities of 1500 B; ${queue} at the mean rate), server -> client`;
}

/** Where a trace link's sessions start in the trace. */
function restartText(s: Scenario): string {
  if (s.link.traceStart !== 'spread') return 'restarted at every play request';
  const starts = trialTraceStartsS(s);
  return `restarted at every play request, at a point that moves with the trial so the trials sample the whole trace: trial 1..${s.trials} at ${starts.map((t) => t.toFixed(1)).join(', ')} s of it, every arm and experiment of a trial at the same point`;
}

/** The CPU load per session, and the sessions flagged CPU-bound. */
function cpuLines(result: LabResult): string[] {
  const measured = result.trials.filter((t) => typeof t.metrics.cpuBusyPct === 'number');
  if (measured.length === 0) return [];
  const bound = measured.filter((t) => cpuBound(t.metrics));
  const cores = (result.config.host as { cpus?: number } | undefined)?.cpus;
  return [
    '## CPU load',
    '',
    `The machine's cores${cores ? ` (${cores})` : ''} were busy (from /proc/stat, once a second, everyone's work: Chromium, the servers, the tools and other users' jobs) for ${num(mean(measured.map((t) => t.metrics.cpuBusyPct!)), 0)}% of the time on average over the sessions, ${num(mean(measured.map((t) => t.metrics.cpuBusyUnnicedPct ?? 0)), 0)}% without work at nice > 0 (which yields to the lab). Per arm and experiment: the rows "machine CPU busy" above.`,
    '',
    bound.length === 0
      ? `No session was CPU-bound (${CPU_BOUND_PCT}% or more busy without niced work).`
      : `**${bound.length} of ${measured.length} sessions were CPU-bound** (${CPU_BOUND_PCT}% or more busy without niced work): their metrics measure this machine's CPU as well as the network.`,
    ...bound.map((t) => `- trial ${t.trial} ${experimentName(t)} ${t.arm}: ${num(t.metrics.cpuBusyUnnicedPct, 0)}% (${num(t.metrics.cpuBusyPct, 0)}% with niced work)`),
    '',
  ];
}

/** One row per class with packets: its share of them and each arm's mean [95% CI]. */
function delayClassRows(d: DelayByClass, firstColumn: string, arms: string[]): string[] {
  return [
    `| ${firstColumn} | share of packets | ${arms.join(' | ')} |`,
    `| --- | --- | ${arms.map(() => '---').join(' | ')} |`,
    ...d.byClass.filter((c) => c.packetShare > 0).map((c) => `| ${c.label} | ${(100 * c.packetShare).toFixed(1)}% | ${arms.map((a) => cell(c.arms[a])).join(' | ')} |`),
    '',
  ];
}

/** Trace links with a UDP neighbour: its delay by the capacity the trace offered, and by the time in the session (delay-by-capacity.ts). */
function delayByCapacityLines(result: LabResult, arms: string[], alone: ReportExtras['neighbourAlone']): string[] {
  const s = result.config.scenario;
  if (!s.link.trace || !result.trials.some((t) => t.neighbourRaw?.kind === 'udp')) return [];
  const lines: string[] = [];
  const capacity = traceCapacityOf(result);
  const byCapacity = capacity ? udpDelayByCapacity(result.trials, capacity) : null;
  const head = ['## UDP neighbour delay by the link\'s capacity', ''];
  if (!capacity) lines.push(...head, 'Not available: this result carries no capacity series and its trace file was not found unchanged.', '');
  else if (byCapacity) {
    lines.push(
      ...head,
      `Each of the neighbour's ${byCapacity.packets} packets is classed by the capacity the trace offered in the ${CAPACITY_LOOKBACK_S} s before it was sent. Where that is below the neighbour's own rate, its packets queue up whatever the video does. Per class: the mean over sessions of each session's mean one-way delay (ms) [95% CI] (sessions with packets in the class).`,
      '',
      ...delayClassRows(byCapacity, 'capacity in the second before', arms),
    );
  }
  lines.push(...aloneLines(result, arms, alone));
  const byTime = udpDelayByTime(result.trials, s.session.playS);
  if (byTime) {
    lines.push(
      '## UDP neighbour delay over the session',
      '',
      `The same packets by when they were sent, in ${TIME_BIN_S} s bins from playback start. The trace restarts at every play request, ${s.link.traceStart === 'spread' ? "at the trial's point of it, so in each bin every arm of a trial met the same stretch of the trace (shifted by its play delay; other trials met other stretches)" : 'so in each bin every arm met the same stretch of the trace (shifted by its play delay)'}; what differs is the arm, and whether it was still filling its buffer then. Per bin: the mean over sessions of each session's mean one-way delay (ms) [95% CI].`,
      '',
      ...delayClassRows(byTime, 's after playback start', arms),
    );
  }
  return lines;
}

/** The neighbour's measured delay against the same packets replayed through the queue without the video (neighbour-alone.ts). */
function aloneLines(result: LabResult, arms: string[], alone: ReportExtras['neighbourAlone']): string[] {
  if (!alone) return [];
  const head = ["### What the video added to the neighbour's delay", ''];
  if ('unavailable' in alone) return [...head, `Not available: ${alone.unavailable}.`, ''];
  const aloneOf = (t: TrialRecord) => alone.delays[result.trials.indexOf(t)] ?? null;
  const addedOf = (t: TrialRecord) => {
    const a = aloneOf(t);
    return a ? a.measuredOwdMs - a.owdMs : null;
  };
  const udp = result.trials.filter((t) => t.error === null && aloneOf(t) !== null);
  if (udp.length === 0) return [];
  const values: Record<string, Record<string, number[]>> = {};
  for (const t of udp) {
    const v = (values[t.arm] ??= { measured: [], alone: [], added: [], aloneLoss: [] });
    v.measured!.push(aloneOf(t)!.measuredOwdMs);
    v.alone!.push(aloneOf(t)!.owdMs);
    v.added!.push(addedOf(t)!);
    v.aloneLoss!.push(aloneOf(t)!.lossPct);
  }
  const sums = summarize(values);
  const row = (label: string, key: string) => `| ${label} | ${arms.map((a) => cell(sums[a]?.[key])).join(' | ')} |`;
  const lines = [
    ...head,
    `The neighbour's own datagrams, sent when they were (every one from the first received to the last, lost ones included), replayed through the downlink's queue with no video: \`labtools trace-sim\`, the delay line's own queue and delivery-opportunity code on a simulated clock, from the session's point of the trace, plus the line's ${result.delayLine?.down.delayMs ?? result.config.scenario.link.rttMs / 2} ms one-way delay. That much of the neighbour's delay the trace causes by itself; what the session measured above it, the video added, and only that part can an arm change. Both are means over the datagrams that crossed in the session and in the replay. Mean [95% CI] (n) over sessions.`,
    '',
    `| ms | ${arms.join(' | ')} |`,
    `| --- | ${arms.map(() => '---').join(' | ')} |`,
    row('measured one-way delay (ms)', 'measured'),
    row('the neighbour alone, replayed (ms)', 'alone'),
    row('added by the video (ms)', 'added'),
    row('datagrams the queue refused with no video (%)', 'aloneLoss'),
    '',
  ];
  const others = arms.filter((a) => a !== 'control');
  if (result.config.scenario.link.traceStart === 'spread' && arms.includes('control') && others.length > 0) {
    const experiments = [...new Set(udp.map((t) => experimentName(t)))];
    lines.push(
      'Added by the video, paired by trial: the mean over trials of (arm - control) [95% CI] (n trials), and in how many the arm added less and more than control.',
      '',
      `| experiment | ${others.map((a) => `${a} - control`).join(' | ')} |`,
      `| --- | ${others.map(() => '---').join(' | ')} |`,
      ...experiments.map((name) => `| ${experimentTitle(result.config.scenario, name)} | ${others.map((a) => pairedCell(pairedDifferenceOf(result.trials, name, a, addedOf))).join(' | ')} |`),
      '',
    );
  }
  return lines;
}

/** The video metrics a paired comparison shows; each experiment adds its neighbour's. */
const PAIRED_VIDEO_METRICS = ['chunkThroughputKbps', 'videoRttMs', 'retransPct', 'playDelayS', 'rebufferS', 'avgBitrateKbps', 'avgQuality', 'queueDelayMs'];

function pairedCell(c: PairedDifference): string {
  return c.n === 0 ? '–' : `${num(c.mean)}${c.ci95 && c.n > 1 ? ` [${num(c.ci95[0])}, ${num(c.ci95[1])}]` : ''} (n=${c.n}); lower ${c.lower}, higher ${c.higher}`;
}

/** Trace links whose trials start at different points of the trace: every arm against control within each trial (paired.ts). */
function pairedLines(result: LabResult, arms: string[]): string[] {
  const s = result.config.scenario;
  if (s.link.traceStart !== 'spread') return [];
  const tables = pairedTables(s, result.trials, arms);
  if (tables.length === 0) return [];
  return [
    '',
    '## Paired by trial',
    '',
    "The trials start at different points of the trace, so trial-to-trial spread is mostly the trace's. Here each session is set against control's session of the same trial and experiment: the mean over trials of (arm - control) [95% CI] (n trials), and in how many trials the arm's value was lower and higher than control's.",
    ...tables,
  ];
}

/** One table per experiment of `s`: every arm but control against control, trial by trial, on the video's and that neighbour's metrics. */
export function pairedTables(s: Scenario, trials: TrialRecord[], arms: string[]): string[] {
  const others = arms.filter((a) => a !== 'control');
  if (!arms.includes('control') || others.length === 0) return [];
  const lines: string[] = [];
  for (const e of s.neighbours) {
    const name = e.name ?? e.kind;
    const metrics = [...PAIRED_VIDEO_METRICS, ...(NEIGHBOUR_KINDS[e.kind]?.metrics.map((m) => m.name) ?? [])];
    const rows = metrics.flatMap((metric) => {
      const cells = others.map((arm) => pairedDifference(trials, name, arm, metric));
      if (cells.every((c) => c.n === 0)) return [];
      return [`| ${METRIC_LABELS[metric]} | ${cells.map(pairedCell).join(' | ')} |`];
    });
    if (rows.length === 0) continue;
    lines.push('', `### ${experimentTitle(s, name)}`, '', `| metric | ${others.map((a) => `${a} - control`).join(' | ')} |`, `| --- | ${others.map(() => '---').join(' | ')} |`, ...rows);
  }
  return lines;
}

/** The code a run ran (`config.code`; absent in results from before it was recorded). */
export function codeOf(result: LabResult): CodeVersion | null {
  return (result.config['code'] as CodeVersion | undefined) ?? null;
}

export function codeText(c: CodeVersion): string {
  if (c.commit === null) return 'not from a git checkout';
  return `commit ${c.commit.slice(0, 12)}${c.changedFiles ? ` with ${c.changedFiles} file(s) changed from it` : ''}`;
}

/** The calibration of a trace link, in a few lines. */
function fidelityLines(f: TraceFidelity): string[] {
  const r = (v: number | null) => (v === null ? '–' : v.toFixed(3));
  return [
    '## Trace fidelity',
    '',
    `Before the sessions, one saturating TCP Reno flow ran for ${f.calibrationS} s from the trace's start; each ${f.binS} s bin from ${f.skippedS} s on (the first is its slow start) compares the bytes the bottleneck served, and the TCP payload the receiver got, with the trace's capacity (1500 B per delivery opportunity).`,
    '',
    '| | per-bin correlation | total / trace | per-bin error (sum of abs. differences / total) |',
    '| --- | --- | --- | --- |',
    `| served at the bottleneck (IP bytes) | ${f.constantCapacity ? `${r(f.correlation)} (constant capacity: not judged)` : r(f.correlation)} | ${r(f.totalRatio)} | ${f.binErrorPct === null ? '–' : `${f.binErrorPct.toFixed(1)}%`} |`,
    `| TCP payload received (headers excluded, about 3.5% below) | ${r(f.goodputCorrelation)} | ${r(f.goodputTotalRatio)} | |`,
    '',
    `${f.withinTolerance ? '**Within**' : '**NOT within**'} the ${f.tolerance * 100}% bar (total within ${f.tolerance * 100}% of the trace${f.constantCapacity ? '' : ` and correlation at least ${1 - f.tolerance}`}).`,
    '',
  ];
}

/** What a report needs beyond the result file, computed from it and the files it names (the lab's `reportExtras`). */
export interface ReportExtras {
  /** Trace links with a UDP neighbour: each session's neighbour replayed alone; null: not a trace link with one (neighbour-alone.ts). */
  neighbourAlone?: { delays: AloneDelays } | { unavailable: string } | null;
}

export function renderReport(result: LabResult, extras: ReportExtras = {}): { markdown: string; files: Record<string, string> } {
  const s = result.config.scenario;
  const arms = s.arms;
  const link = result.config.link as { queueBytes: number; bdpBytes: number; measuredIdleRtt: { avgMs: number; minMs: number; maxMs: number } | null };
  const failed = result.trials.filter((t) => t.error !== null);
  const thesis = s.thesisComparison;
  const lines: string[] = [];
  lines.push(`# Lab report: ${s.name}`, '');
  if (s.description) lines.push(s.description, '');
  lines.push(
    `Started ${result.startedAt}, finished ${result.finishedAt ?? '(unfinished)'}${result.complete ? '' : ' — **incomplete run**: only the sessions below were measured'}.`,
    s.experiment
      ? `${(result.designRuns ?? []).reduce((a, r) => a + r.sessions.length, 0)} sessions of the ${s.experiment.design} design in ${(result.designRuns ?? []).length} runs (${s.trials} trial(s) planned), after ${result.warmups.length} warm-up session(s).`
      : `${result.trials.length} sessions (${s.trials} trial(s) planned x ${s.neighbours.length} experiment(s) x ${arms.length} arm(s)), ${failed.length} failed.`,
    '',
    '## Setup',
    '',
    '| | |',
    '| --- | --- |',
    `| bottleneck | ${bottleneckText(s, link)} |`,
    `| propagation delay | RTT ${s.link.rttMs} ms from the TUN delay line (no netem on this kernel); idle ping ${link.measuredIdleRtt ? `${link.measuredIdleRtt.avgMs.toFixed(2)} ms avg (min ${link.measuredIdleRtt.minMs.toFixed(2)}, max ${link.measuredIdleRtt.maxMs.toFixed(2)})` : 'not measured'} |`,
    `| video | synthetic \`${s.media.ladder}\` ladder, ${s.media.durationS} s, rungs ${((result.config.media as { rungsKbps: number[] }).rungsKbps ?? []).join(', ')} kbps |`,
    `| player | buffer target ${s.player.maxBufferS} s for every arm; ${historyText(s.player)}; overrides ${JSON.stringify(s.player.config)} |`,
    `| server | ${[serverKindOf(s).setup, burstText(s)].filter(Boolean).join('; ')}, congestion control ${s.server.congestionControl} |`,
    `| session | ${s.session.playS} s of playback after the first frame |`,
    `| arms | ${arms.join(', ')} (order rotates per trial) |`,
    ...(s.player.kind === 'headless' ? ["| player kind | headless (src/headless/: the simulator's arm models over real HTTP, playback in real time) |"] : []),
    ...(codeOf(result) ? [`| code | ${codeText(codeOf(result)!)} |`] : []),
    '',
  );
  if (s.experiment) {
    // A design's sessions are its own (result.designRuns): no per-arm trial tables.
    const design = designReport(result);
    lines.push(...design.lines);
    if (failed.length > 0) lines.push('## Failed warm-up or trial sessions', '', ...failed.map((t) => `- trial ${t.trial} ${experimentName(t)} ${t.arm}: ${t.error}`), '');
    return { markdown: lines.join('\n'), files: design.files };
  }
  lines.push(
    '## Summary',
    '',
    `Video metrics come from ${result.trials.some((t) => t.neighbour === 'none') ? 'the experiment without a neighbour (the video on its own)' : 'every session (this run had no experiment without a neighbour)'}; each neighbour metric from its own experiment, over the window named.`,
    `Mean [95% CI] (n); the change is against control.${thesis ? ' Thesis = Spang 2023, section 2.6 (Sammy vs production).' : ''}`,
    '',
    `| metric | window | ${arms.map((a) => a).join(' | ')} | ${arms.filter((a) => a !== 'control').map((a) => `${a} vs control`).join(' | ')} |${thesis ? ' thesis (Sammy) |' : ''}`,
    `| --- | --- | ${arms.map(() => '---').join(' | ')} | ${arms.filter((a) => a !== 'control').map(() => '---').join(' | ')} |${thesis ? ' --- |' : ''}`,
  );
  for (const metric of Object.keys(METRIC_LABELS)) {
    const row = arms.map((a) => result.summary[a]?.[metric]);
    if (row.every((x) => !x || x.n === 0)) continue;
    const w = KIND_OF_METRIC[metric] ? windowText(s, KIND_OF_METRIC[metric]!) : 'whole session';
    const thesisPct = THESIS_LAB_CHANGE_PCT[metric];
    lines.push(
      `| ${METRIC_LABELS[metric]} | ${w} | ${row.map(cell).join(' | ')} | ${arms.filter((a) => a !== 'control').map((a) => pct(result.summary[a]?.[metric]?.changeVsControlPct)).join(' | ')} |${thesis ? ` ${thesisPct === undefined ? '' : pct(thesisPct)} |` : ''}`,
    );
  }
  lines.push(...pairedLines(result, arms));
  const files = figures(result, arms);
  lines.push('', '## Figures', '');
  for (const name of Object.keys(files)) lines.push(`![${name}](${name})`, '');
  lines.push('## Per experiment', '');
  lines.push(...experimentsLines(result, arms), ...windowLines(result, arms));
  for (const [name, summary] of Object.entries(result.summaryByNeighbour)) {
    lines.push(`### ${experimentTitle(s, name)}`, '', `| metric | ${arms.join(' | ')} |`, `| --- | ${arms.map(() => '---').join(' | ')} |`);
    for (const metric of Object.keys(METRIC_LABELS)) {
      const row = arms.map((a) => summary[a]?.[metric]);
      if (row.every((x) => !x || x.n === 0)) continue;
      lines.push(`| ${METRIC_LABELS[metric]} | ${row.map((x) => (x && x.n > 0 ? `${cell(x)} ${x.changeVsControlPct === null ? '' : pct(x.changeVsControlPct)}` : '–')).join(' | ')} |`);
    }
    lines.push('');
  }
  lines.push(...delayByCapacityLines(result, arms, extras.neighbourAlone));
  if (result.traceFidelity) lines.push(...fidelityLines(result.traceFidelity));
  lines.push(...cpuLines(result));
  if (result.delayLine) {
    const d = result.delayLine;
    lines.push(
      '## Delay line',
      '',
      '| direction | delay | packets | dropped (line full) | release lateness p50 / p99 / p99.9 / max |',
      '| --- | --- | --- | --- | --- |',
      ...(['down', 'up'] as const).map((k) => `| ${k} | ${d[k].delayMs} ms | ${d[k].packets} | ${d[k].dropsFull} | ${d[k].latenessUs.p50} / ${d[k].latenessUs.p99} / ${d[k].latenessUs.p999} / ${d[k].latenessUs.max} us |`),
      '',
    );
    const q = d.down.trace;
    if (q) {
      lines.push(
        `The downlink's bottleneck queue (trace link): limit ${q.queueLimitBytes} B, at most ${q.maxQueuedBytes} B queued, ${q.dropsQueue} packets dropped (queue full), ${q.servedBytes} B served at ${q.opportunities} delivery opportunities (${q.unusedOpportunities} found the queue empty), the trace restarted ${q.restarts} times.`,
        '',
      );
    }
  }
  if (failed.length > 0) {
    lines.push('## Failed sessions', '', ...failed.map((t) => `- trial ${t.trial} ${experimentName(t)} ${t.arm}: ${t.error}`), '');
  }
  return { markdown: lines.join('\n'), files };
}

/** Writes DIR/report.md and its figures; returns the names written. */
export function writeReport(result: LabResult, outDir: string, extras: ReportExtras = {}): string[] {
  const { markdown, files } = renderReport(result, extras);
  for (const [name, svg] of Object.entries(files)) writeFileSync(join(outDir, name), svg);
  writeFileSync(join(outDir, 'report.md'), markdown);
  return ['report.md', ...Object.keys(files)];
}

/** Where a lab result may be, in the order looked at: the runner writes the first; a committed result is the second. */
export const RESULT_FILES = ['result.json', 'result.json.gz'] as const;

/** The lab result in DIR (result.json, else result.json.gz). */
export function readResult(dir: string): LabResult {
  const file = RESULT_FILES.map((name) => join(dir, name)).find((path) => existsSync(path));
  if (file === undefined) throw new LabError('LAB_NO_RESULT', `no lab result in ${dir}: looked for ${RESULT_FILES.join(' and ')}`);
  let result: LabResult;
  try {
    const bytes = readFileSync(file);
    result = JSON.parse((file.endsWith('.gz') ? gunzipSync(bytes) : bytes).toString('utf8')) as LabResult;
  } catch (err) {
    throw new LabError('LAB_BAD_RESULT', `${file} is not a readable lab result: ${(err as Error).message}`);
  }
  if (typeof result?.config?.scenario !== 'object' || !Array.isArray(result.trials)) {
    throw new LabError('LAB_BAD_RESULT', `${file} is not a lab result: it has no config.scenario or no trials`);
  }
  // Results written before scenarios said whether they reproduce the thesis's lab: only thesis-2.6 did.
  result.config.scenario.thesisComparison ??= result.config.scenario.name === 'thesis-2.6';
  return result;
}
