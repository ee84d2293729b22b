/**
 * DIR/report.md and its SVG figures from a lab result: the summary table beside the
 * thesis's lab numbers (section 2.6), the measurement windows, and time series
 * averaged over trials (like thesis Fig. 2.7) and neighbour metrics per arm (Fig. 2.8).
 * The report is built as a model (`reportModel`: sections of tables and sentences whose
 * slots hold the numbers) and written by report-markdown.ts, where the sentences live.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { NEIGHBOUR_KINDS, type NeighbourKind } from '../scenario/neighbour-kinds.js';
import { LabError } from '../lab-error.js';
import type { CodeVersion, DelayLineStats } from './records.js';
import { markdownOf, prose, type Block, type ReportModel, type Section } from './report-markdown.js';
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
  // Recorded by results from before the fade hold was removed from the core (2026-11-28); shown when a result has it.
  fadeHoldS: "requests held by Sammy's fade hold, session total (s of playback)",
  h2ChunkFraction: 'video chunks the browser fetched over HTTP/2 (fraction)',
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
  if (player.history === 'per-session') return prose('historyPerSession');
  const warmup = player.warmupSessions === 0 ? prose('noWarmup') : prose('warmup', { sessions: player.warmupSessions, playS: player.warmupPlayS });
  return prose('historyPerArm', { warmup });
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
  return trainsOf === null ? prose('burstPackets', { packets: s.server.burstPackets }) : prose('kernelTrainsOf', { server: trainsOf });
}

/** Kernel trains of `packets`, or the kernel's own (null). */
function trainsText(packets: number | null | undefined): string {
  return packets ? prose('trainsOf', { packets }) : prose('ownTrains');
}

/** An experiment's server and queue settings where they differ from the scenario's (older results have none). */
function settingsText(s: Scenario, e: Scenario['neighbours'][number]): string {
  const parts: string[] = [];
  if (e.server && e.server.burstPackets !== s.server.burstPackets) parts.push(prose('burstPackets', { packets: e.server.burstPackets }));
  if (e.server && e.server.trainPackets !== (s.server.trainPackets ?? null)) parts.push(trainsText(e.server.trainPackets));
  if (e.queue && JSON.stringify(e.queue) !== JSON.stringify(s.link.queue)) parts.push(`queue ${queueBytes(s.link, e.queue)} B (${'bdp' in e.queue ? `${e.queue.bdp} x BDP` : 'bytes'})`);
  return parts.join(', ');
}

/** Metrics side by side per experiment, when a scenario's experiments differ in their settings (e.g. burst size and queue). */
function experimentsSections(result: LabResult, arms: string[]): Section[] {
  const s = result.config.scenario;
  const varied = s.neighbours.filter((e) => settingsText(s, e) !== '');
  if (varied.length === 0) return [];
  const metrics = ['retransPct', 'videoRttMs', 'chunkThroughputKbps', 'queueDelayMs', ...new Set(s.neighbours.flatMap((e) => (NEIGHBOUR_METRIC[e.kind] ? [NEIGHBOUR_METRIC[e.kind]!] : [])))];
  const cells = { burst: burstText(s), trains: trainsText(s.server.trainPackets), queueBytes: queueBytes(s.link) };
  return [
    { key: 'experiments', heading: { level: 2, text: 'Experiments side by side' }, blocks: [{ lines: [{ prose: 'experimentsCells', slots: cells }] }] },
    ...arms.map((arm): Section => ({
      key: `experiments:${arm}`,
      heading: { level: 3, text: arm },
      blocks: [{
        table: {
          header: ['experiment', 'settings', ...metrics.map((m) => METRIC_LABELS[m]!)],
          rows: s.neighbours.flatMap((e) => {
            const summary = result.summaryByNeighbour[e.name ?? e.kind]?.[arm];
            return summary ? [[e.name ?? e.kind, settingsText(s, e) || "the scenario's", ...metrics.map((m) => cell(summary[m]))]] : [];
          }),
        },
      }],
    })),
  ];
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
function windowSections(result: LabResult, arms: string[]): Section[] {
  const byWindow = result.summaryByWindow;
  const fraction = result.config.scenario.session.steadyFromBufferFraction;
  if (!byWindow || !fraction) return [];
  const targetS = result.config.scenario.player.maxBufferS;
  const reached = arms.map((arm) => {
    const of = result.trials.filter((t) => t.arm === arm && t.windows !== undefined);
    const starts = of.flatMap((t) => (t.windows?.steady ? [t.windows.steady.fromS] : []));
    return [arm, `${starts.length} of ${of.length}`, starts.length ? `${num(mean(starts), 1)} (${num(Math.min(...starts), 1)}–${num(Math.max(...starts), 1)})` : '–'];
  });
  const sections: Section[] = [{
    key: 'windows',
    heading: { level: 2, text: 'Startup fill and steady state' },
    blocks: [
      { lines: [{ prose: 'windows', slots: { fraction, targetS, levelS: num(fraction * targetS, 1) } }] },
      { table: { header: ['arm', 'sessions that reached the steady state', 'its start, s after playback start (mean, range)'], rows: reached } },
    ],
  }];
  for (const [name, summary] of Object.entries(byWindow.steady ?? {})) {
    const fill = byWindow.fill?.[name];
    const rows = Object.entries(WINDOW_METRIC_LABELS).flatMap(([metric, label]) => {
      const values = [...arms.map((a) => fill?.[a]?.[metric]), ...arms.map((a) => summary[a]?.[metric])];
      return values.every((x) => !x || x.n === 0) ? [] : [[label, ...values.map(cell)]];
    });
    sections.push({
      key: `windows:${name}`,
      heading: { level: 3, text: experimentTitle(result.config.scenario, name) },
      blocks: [{ table: { header: ['metric', ...arms.map((a) => `fill: ${a}`), ...arms.map((a) => `steady: ${a}`)], rows } }],
    });
  }
  return sections;
}

/** The setup table's bottleneck row. */
function bottleneckText(s: Scenario, link: { queueBytes: number; bdpBytes: number }): string {
  const queue = prose('queue', { queueBytes: link.queueBytes, bdpMultiple: (link.queueBytes / link.bdpBytes).toFixed(2), bdpBytes: Math.round(link.bdpBytes) });
  const trace = s.link.trace;
  if (!trace) return prose('bottleneckTbf', { rateMbps: String(s.link.rateMbps), queue });
  return prose('bottleneckTrace', {
    file: trace.file, format: trace.format, meanRateMbps: trace.meanRateMbps.toFixed(2), queue,
    repeat: trace.periodS === null ? prose('traceHolds') : prose('traceRepeats', { periodS: trace.periodS }),
    restart: s.link.traceStart !== 'spread' ? prose('restartAtPlay') : prose('restartSpread', { trials: s.trials, startsS: trialTraceStartsS(s).map((t) => t.toFixed(1)).join(', ') }),
  });
}

/** The CPU load per session, and the sessions flagged CPU-bound. */
function cpuSections(result: LabResult): Section[] {
  const measured = result.trials.filter((t) => typeof t.metrics.cpuBusyPct === 'number');
  if (measured.length === 0) return [];
  const bound = measured.filter((t) => cpuBound(t.metrics));
  const cores = (result.config.host as { cpus?: number } | undefined)?.cpus;
  const load = {
    cores: cores ? ` (${cores})` : '',
    busyPct: num(mean(measured.map((t) => t.metrics.cpuBusyPct!)), 0),
    unnicedPct: num(mean(measured.map((t) => t.metrics.cpuBusyUnnicedPct ?? 0)), 0),
  };
  return [{
    key: 'cpu',
    heading: { level: 2, text: 'CPU load' },
    blocks: [
      { lines: [{ prose: 'cpuLoad', slots: load }] },
      {
        lines: [
          bound.length === 0 ? { prose: 'cpuNoneBound', slots: { boundPct: CPU_BOUND_PCT } } : { prose: 'cpuBound', slots: { bound: bound.length, measured: measured.length, boundPct: CPU_BOUND_PCT } },
          ...bound.map((t) => ({
            item: { prose: 'cpuBoundSession', slots: { trial: t.trial, experiment: experimentName(t), arm: t.arm, unnicedPct: num(t.metrics.cpuBusyUnnicedPct, 0), busyPct: num(t.metrics.cpuBusyPct, 0) } },
          }) as const),
        ],
      },
    ],
  }];
}

/** One row per class with packets: its share of them and each arm's mean [95% CI]. */
function delayClassTable(d: DelayByClass, firstColumn: string, arms: string[]): Block {
  return {
    table: {
      header: [firstColumn, 'share of packets', ...arms],
      rows: d.byClass.filter((c) => c.packetShare > 0).map((c) => [c.label, `${(100 * c.packetShare).toFixed(1)}%`, ...arms.map((a) => cell(c.arms[a]))]),
    },
  };
}

/** Trace links with a UDP neighbour: its delay by the capacity the trace offered, and by the time in the session (delay-by-capacity.ts). */
function delayByCapacitySections(result: LabResult, arms: string[], alone: ReportExtras['neighbourAlone']): Section[] {
  const s = result.config.scenario;
  if (!s.link.trace || !result.trials.some((t) => t.neighbourRaw?.kind === 'udp')) return [];
  const sections: Section[] = [];
  const capacity = traceCapacityOf(result);
  const byCapacity = capacity ? udpDelayByCapacity(result.trials, capacity) : null;
  const heading = { level: 2, text: "UDP neighbour delay by the link's capacity" } as const;
  if (!capacity) sections.push({ key: 'delayByCapacity', heading, blocks: [{ lines: [{ prose: 'notAvailable', slots: { reason: prose('noCapacity') } }] }] });
  else if (byCapacity) {
    sections.push({
      key: 'delayByCapacity',
      heading,
      blocks: [
        { lines: [{ prose: 'delayByCapacity', slots: { packets: byCapacity.packets, lookbackS: CAPACITY_LOOKBACK_S } }] },
        delayClassTable(byCapacity, 'capacity in the second before', arms),
      ],
    });
  }
  sections.push(...aloneSections(result, arms, alone));
  const byTime = udpDelayByTime(result.trials, s.session.playS);
  if (byTime) {
    sections.push({
      key: 'delayByTime',
      heading: { level: 2, text: 'UDP neighbour delay over the session' },
      blocks: [
        { lines: [{ prose: s.link.traceStart === 'spread' ? 'delayByTimeSpread' : 'delayByTime', slots: { binS: TIME_BIN_S } }] },
        delayClassTable(byTime, 's after playback start', arms),
      ],
    });
  }
  return sections;
}

/** The neighbour's measured delay against the same packets replayed through the queue without the video (the lab's neighbour-alone.ts). */
function aloneSections(result: LabResult, arms: string[], alone: ReportExtras['neighbourAlone']): Section[] {
  if (!alone) return [];
  const heading = { level: 3, text: "What the video added to the neighbour's delay" } as const;
  if ('unavailable' in alone) return [{ key: 'alone', heading, blocks: [{ lines: [{ prose: 'notAvailable', slots: { reason: alone.unavailable } }] }] }];
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
  const row = (label: string, key: string) => [label, ...arms.map((a) => cell(sums[a]?.[key]))];
  const blocks: Block[] = [
    { lines: [{ prose: 'neighbourAlone', slots: { lineDelayMs: result.delayLine?.down.delayMs ?? result.config.scenario.link.rttMs / 2 } }] },
    {
      table: {
        header: ['ms', ...arms],
        rows: [
          row('measured one-way delay (ms)', 'measured'),
          row('the neighbour alone, replayed (ms)', 'alone'),
          row('added by the video (ms)', 'added'),
          row('datagrams the queue refused with no video (%)', 'aloneLoss'),
        ],
      },
    },
  ];
  const others = arms.filter((a) => a !== 'control');
  if (result.config.scenario.link.traceStart === 'spread' && arms.includes('control') && others.length > 0) {
    const experiments = [...new Set(udp.map((t) => experimentName(t)))];
    blocks.push(
      { lines: [{ prose: 'addedPaired', slots: {} }] },
      {
        table: {
          header: ['experiment', ...others.map((a) => `${a} - control`)],
          rows: experiments.map((name) => [experimentTitle(result.config.scenario, name), ...others.map((a) => pairedCell(pairedDifferenceOf(result.trials, name, a, addedOf)))]),
        },
      },
    );
  }
  return [{ key: 'alone', heading, blocks }];
}

/** The video metrics a paired comparison shows; each experiment adds its neighbour's. */
const PAIRED_VIDEO_METRICS = ['chunkThroughputKbps', 'videoRttMs', 'retransPct', 'playDelayS', 'rebufferS', 'avgBitrateKbps', 'avgQuality', 'queueDelayMs'];

function pairedCell(c: PairedDifference): string {
  return c.n === 0 ? '–' : `${num(c.mean)}${c.ci95 && c.n > 1 ? ` [${num(c.ci95[0])}, ${num(c.ci95[1])}]` : ''} (n=${c.n}); lower ${c.lower}, higher ${c.higher}`;
}

/** Trace links whose trials start at different points of the trace: every arm against control within each trial (paired.ts). */
function pairedSections(result: LabResult, arms: string[]): Section[] {
  const s = result.config.scenario;
  if (s.link.traceStart !== 'spread') return [];
  const tables = pairedTables(s, result.trials, arms);
  if (tables.length === 0) return [];
  return [{ key: 'paired', heading: { level: 2, text: 'Paired by trial' }, blocks: [{ lines: [{ prose: 'pairedByTrial', slots: {} }] }] }, ...tables];
}

/** One section per experiment of `s`: every arm but control against control, trial by trial, on the video's and that neighbour's metrics. */
export function pairedTables(s: Scenario, trials: TrialRecord[], arms: string[]): Section[] {
  const others = arms.filter((a) => a !== 'control');
  if (!arms.includes('control') || others.length === 0) return [];
  const sections: Section[] = [];
  for (const e of s.neighbours) {
    const name = e.name ?? e.kind;
    const metrics = [...PAIRED_VIDEO_METRICS, ...(NEIGHBOUR_KINDS[e.kind]?.metrics.map((m) => m.name) ?? [])];
    const rows = metrics.flatMap((metric) => {
      const cells = others.map((arm) => pairedDifference(trials, name, arm, metric));
      return cells.every((c) => c.n === 0) ? [] : [[METRIC_LABELS[metric]!, ...cells.map(pairedCell)]];
    });
    if (rows.length === 0) continue;
    sections.push({ key: `paired:${name}`, heading: { level: 3, text: experimentTitle(s, name) }, blocks: [{ table: { header: ['metric', ...others.map((a) => `${a} - control`)], rows } }] });
  }
  return sections;
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
function fidelitySection(f: TraceFidelity): Section {
  const r = (v: number | null) => (v === null ? '–' : v.toFixed(3));
  const verdict = {
    tolerancePct: f.tolerance * 100,
    correlation: f.constantCapacity ? '' : prose('fidelityCorrelation', { minCorrelation: 1 - f.tolerance }),
  };
  return {
    key: 'fidelity',
    heading: { level: 2, text: 'Trace fidelity' },
    blocks: [
      { lines: [{ prose: 'fidelity', slots: { calibrationS: f.calibrationS, binS: f.binS, skippedS: f.skippedS } }] },
      {
        table: {
          header: ['', 'per-bin correlation', 'total / trace', 'per-bin error (sum of abs. differences / total)'],
          rows: [
            ['served at the bottleneck (IP bytes)', f.constantCapacity ? `${r(f.correlation)} (constant capacity: not judged)` : r(f.correlation), r(f.totalRatio), f.binErrorPct === null ? '–' : `${f.binErrorPct.toFixed(1)}%`],
            ['TCP payload received (headers excluded, about 3.5% below)', r(f.goodputCorrelation), r(f.goodputTotalRatio), ''],
          ],
        },
      },
      { lines: [{ prose: f.withinTolerance ? 'fidelityWithin' : 'fidelityNotWithin', slots: verdict }] },
    ],
  };
}

/** The delay line's statistics per direction, and on a trace link its bottleneck queue. */
function delayLineSection(d: DelayLineStats): Section {
  const blocks: Block[] = [{
    table: {
      header: ['direction', 'delay', 'packets', 'dropped (line full)', 'release lateness p50 / p99 / p99.9 / max'],
      rows: (['down', 'up'] as const).map((k) => [k, `${d[k].delayMs} ms`, String(d[k].packets), String(d[k].dropsFull), `${d[k].latenessUs.p50} / ${d[k].latenessUs.p99} / ${d[k].latenessUs.p999} / ${d[k].latenessUs.max} us`]),
    },
  }];
  const q = d.down.trace;
  if (q) {
    const slots = {
      limitBytes: q.queueLimitBytes, maxQueuedBytes: q.maxQueuedBytes, drops: q.dropsQueue, servedBytes: q.servedBytes,
      opportunities: q.opportunities, unused: q.unusedOpportunities, restarts: q.restarts,
    };
    blocks.push({ lines: [{ prose: 'traceQueue', slots }] });
  }
  return { key: 'delayLine', heading: { level: 2, text: 'Delay line' }, blocks };
}

/** Sessions that failed, one list item each. */
function failedBlock(failed: TrialRecord[]): Block {
  return { lines: failed.map((t) => ({ item: { prose: 'failedSession', slots: { trial: t.trial, experiment: experimentName(t), arm: t.arm, error: t.error! } } })) };
}

/** What a report needs beyond the result file, computed from it and the files it names (the lab's `reportExtras`). */
export interface ReportExtras {
  /** Trace links with a UDP neighbour: each session's neighbour replayed alone; null: not a trace link with one (the lab's neighbour-alone.ts). */
  neighbourAlone?: { delays: AloneDelays } | { unavailable: string } | null;
}

/** The report as a model: its sections, their sentences with the numbers in their slots, its tables; and its figures. */
export function reportModel(result: LabResult, extras: ReportExtras = {}): { model: ReportModel; files: Record<string, string> } {
  const s = result.config.scenario;
  const arms = s.arms;
  const link = result.config.link as { queueBytes: number; bdpBytes: number; measuredIdleRtt: { avgMs: number; minMs: number; maxMs: number } | null };
  const failed = result.trials.filter((t) => t.error !== null);
  const thesis = s.thesisComparison;
  const runs = result.designRuns ?? [];
  const opening: Block[] = [
    ...(s.description ? [{ lines: [s.description] }] : []),
    {
      lines: [
        { prose: result.complete ? 'started' : 'startedIncomplete', slots: { startedAt: result.startedAt, finishedAt: result.finishedAt ?? '(unfinished)' } },
        s.experiment
          ? { prose: 'designSessions', slots: { sessions: runs.reduce((a, r) => a + r.sessions.length, 0), design: s.experiment.design, runs: runs.length, trials: s.trials, warmups: result.warmups.length } }
          : { prose: 'sessions', slots: { sessions: result.trials.length, trials: s.trials, experiments: s.neighbours.length, arms: arms.length, failed: failed.length } },
      ],
    },
  ];
  const idle = link.measuredIdleRtt;
  const code = codeOf(result);
  const setup: string[][] = [
    ['bottleneck', bottleneckText(s, link)],
    ['propagation delay', `RTT ${s.link.rttMs} ms from the TUN delay line (no netem on this kernel); idle ping ${idle ? `${idle.avgMs.toFixed(2)} ms avg (min ${idle.minMs.toFixed(2)}, max ${idle.maxMs.toFixed(2)})` : 'not measured'}`],
    ['video', `synthetic \`${s.media.ladder}\` ladder, ${s.media.durationS} s, rungs ${((result.config.media as { rungsKbps: number[] }).rungsKbps ?? []).join(', ')} kbps`],
    ['player', `buffer target ${s.player.maxBufferS} s for every arm; ${historyText(s.player)}; overrides ${JSON.stringify(s.player.config)}`],
    ['server', `${[serverKindOf(s).setup, burstText(s)].filter(Boolean).join('; ')}, congestion control ${s.server.congestionControl}`],
    ['session', `${s.session.playS} s of playback after the first frame`],
    ['arms', `${arms.join(', ')} (order rotates per trial)`],
    ...(s.player.kind === 'headless' ? [['player kind', "headless (src/headless/: the simulator's arm models over real HTTP, playback in real time)"]] : []),
    ...(code ? [['code', codeText(code)]] : []),
  ];
  const sections: Section[] = [
    { key: 'opening', heading: null, blocks: opening },
    { key: 'setup', heading: { level: 2, text: 'Setup' }, blocks: [{ table: { header: ['', ''], rows: setup } }] },
  ];
  const title = `Lab report: ${s.name}`;
  if (s.experiment) {
    // A design's sessions are its own (result.designRuns): no per-arm trial tables.
    const design = designReport(result);
    sections.push(...design.sections);
    if (failed.length > 0) sections.push({ key: 'failed', heading: { level: 2, text: 'Failed warm-up or trial sessions' }, blocks: [failedBlock(failed)] });
    return { model: { title, sections }, files: design.files };
  }
  const others = arms.filter((a) => a !== 'control');
  const summaryRows = Object.keys(METRIC_LABELS).flatMap((metric) => {
    const row = arms.map((a) => result.summary[a]?.[metric]);
    if (row.every((x) => !x || x.n === 0)) return [];
    const w = KIND_OF_METRIC[metric] ? windowText(s, KIND_OF_METRIC[metric]!) : 'whole session';
    const thesisPct = THESIS_LAB_CHANGE_PCT[metric];
    return [[
      METRIC_LABELS[metric]!, w, ...row.map(cell), ...others.map((a) => pct(result.summary[a]?.[metric]?.changeVsControlPct)),
      ...(thesis ? [thesisPct === undefined ? '' : pct(thesisPct)] : []),
    ]];
  });
  sections.push({
    key: 'summary',
    heading: { level: 2, text: 'Summary' },
    blocks: [
      {
        lines: [
          { prose: result.trials.some((t) => t.neighbour === 'none') ? 'videoFromSolo' : 'videoFromAll', slots: {} },
          { prose: thesis ? 'summaryCellsThesis' : 'summaryCells', slots: {} },
        ],
      },
      { table: { header: ['metric', 'window', ...arms, ...others.map((a) => `${a} vs control`), ...(thesis ? ['thesis (Sammy)'] : [])], rows: summaryRows } },
    ],
  });
  sections.push(...pairedSections(result, arms));
  const files = figures(result, arms);
  sections.push(
    { key: 'figures', heading: { level: 2, text: 'Figures' }, blocks: Object.keys(files).map((figure) => ({ figure })) },
    { key: 'perExperiment', heading: { level: 2, text: 'Per experiment' }, blocks: [] },
    ...experimentsSections(result, arms),
    ...windowSections(result, arms),
  );
  for (const [name, summary] of Object.entries(result.summaryByNeighbour)) {
    const rows = Object.keys(METRIC_LABELS).flatMap((metric) => {
      const row = arms.map((a) => summary[a]?.[metric]);
      if (row.every((x) => !x || x.n === 0)) return [];
      return [[METRIC_LABELS[metric]!, ...row.map((x) => (x && x.n > 0 ? `${cell(x)} ${x.changeVsControlPct === null ? '' : pct(x.changeVsControlPct)}` : '–'))]];
    });
    sections.push({ key: `experiment:${name}`, heading: { level: 3, text: experimentTitle(s, name) }, blocks: [{ table: { header: ['metric', ...arms], rows } }] });
  }
  sections.push(...delayByCapacitySections(result, arms, extras.neighbourAlone));
  if (result.traceFidelity) sections.push(fidelitySection(result.traceFidelity));
  sections.push(...cpuSections(result));
  if (result.delayLine) sections.push(delayLineSection(result.delayLine));
  if (failed.length > 0) sections.push({ key: 'failed', heading: { level: 2, text: 'Failed sessions' }, blocks: [failedBlock(failed)] });
  return { model: { title, sections }, files };
}

export function renderReport(result: LabResult, extras: ReportExtras = {}): { markdown: string; files: Record<string, string> } {
  const { model, files } = reportModel(result, extras);
  return { markdown: markdownOf(model), files };
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
