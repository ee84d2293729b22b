/**
 * What a lab run writes to DIR/result.json: the configuration, every session's raw
 * measurements and metrics, and the summaries (docs/lab-results.md). The runner fills
 * it; the report reads it. Neither imports the other.
 */
import type { Arm } from '@sammy/player/abr';
import { NEIGHBOUR_KINDS, type NeighbourKind, type NeighbourMetrics, type NeighbourRaw } from '../scenario/neighbour-kinds.js';
import type { CpuSample } from './cpu-samples.js';
import type { DesignRun, ExperimentResult } from '../designs/types.js';
import type { QueueSample } from './queue-samples.js';
import type { Scenario } from '../scenario/scenario.js';
import type { DelayLineStats, SessionResult } from './records.js';
import { summarize, type MetricSummary } from './stats.js';
import type { TraceCapacity, TraceFidelity } from '../scenario/trace.js';
import type { ResponseRow, VideoMetrics } from './video-metrics.js';
import { PHASE_WINDOWS, type PhaseWindowName, type PhaseWindows } from './windows.js';

export type TrialMetrics = VideoMetrics & NeighbourMetrics;

export interface TrialRecord {
  trial: number;
  neighbour: NeighbourKind;
  /** The experiment's name (its neighbour kind unless the scenario named it; absent in older results: the kind). */
  experiment?: string;
  arm: Arm;
  /** Position of this arm within its trial and experiment (0-based). */
  order: number;
  startedAt: string;
  originMs: number;
  /** The player history was reset just before this session (else it carries the arm's earlier sessions'). */
  historyReset: boolean;
  playbackStartS: number | null;
  /** Trace links: when the trace started again for this session, s after the origin (just before it); else null (absent in older results). */
  traceStartS?: number | null;
  /** Trace links: the trace time (s) that restart started at (scenario `link.traceStart`); absent in older results, which started at 0. */
  traceFromS?: number;
  /** The neighbour's measurement window, in s since playback start. */
  window: { startS: number; endS: number } | null;
  metrics: TrialMetrics;
  session: SessionResult | null;
  neighbourSession: SessionResult | null;
  telemetry: ResponseRow[];
  neighbourRaw: NeighbourRaw | null;
  queue: QueueSample[];
  /** The machine's CPU load, once a second (absent in older results). */
  cpu?: CpuSample[];
  /** Steady-state scenarios: the startup fill and the steady state, each with its metrics (absent otherwise). */
  windows?: PhaseWindows | null;
  error: string | null;
}

const neighbourMetricNames = Object.values(NEIGHBOUR_KINDS).map((k) => k.metrics.map((m) => m.name as string));

/** The headline metrics: the video's, then each neighbour kind's first. */
export const SUMMARY_METRICS: readonly string[] = [
  'chunkThroughputKbps', 'videoRttMs', 'retransPct', 'playDelayS', 'rebufferCount', 'rebufferS', 'avgBitrateKbps',
  ...neighbourMetricNames.flatMap((names) => names.slice(0, 1)),
];
/** The others: the video's, then each neighbour kind's further metrics. */
export const EXTRA_METRICS: readonly string[] = ['avgQuality', 'queueDelayMs', 'meanRtpKbps', 'mediaErrors', 'abandonedChunks', 'h2ChunkFraction', 'guardRaisedChunks', 'resumedAfterOutage', 'outageResumeS', 'cpuBusyPct', 'cpuBusyUnnicedPct', ...neighbourMetricNames.flatMap((names) => names.slice(1))];
const VIDEO_METRICS = new Set<string>(['chunkThroughputKbps', 'videoRttMs', 'retransPct', 'playDelayS', 'rebufferCount', 'rebufferS', 'avgBitrateKbps', 'avgQuality', 'queueDelayMs', 'meanRtpKbps', 'mediaErrors', 'abandonedChunks', 'h2ChunkFraction', 'guardRaisedChunks', 'resumedAfterOutage', 'outageResumeS', 'cpuBusyPct', 'cpuBusyUnnicedPct']);

export interface LabResult {
  config: Record<string, unknown> & { scenario: Scenario };
  trials: TrialRecord[];
  /** Video metrics from the experiment without a neighbour (if run), neighbour metrics from their own experiment. */
  summary: Record<string, Record<string, MetricSummary>>;
  /** Every metric, per experiment (by its name). */
  summaryByNeighbour: Record<string, Record<string, Record<string, MetricSummary>>>;
  /** Steady-state scenarios: per window (`fill`, `steady`), per experiment, per arm, every window metric (absent otherwise). */
  summaryByWindow?: Partial<Record<PhaseWindowName, Record<string, Record<string, Record<string, MetricSummary>>>>>;
  delayLine: DelayLineStats | null;
  /** Trace links: how closely the bottleneck followed the trace under a saturating flow, measured before the sessions (absent in older results). */
  traceFidelity?: TraceFidelity | null;
  /** Trace links: the trace's capacity per 0.1 s from its start, over as long as a session can reach (delay-by-capacity.ts; absent in older results). */
  traceCapacity?: TraceCapacity | null;
  /** The unmeasured sessions that built each arm's history after its reset. */
  warmups: Array<{ arm: Arm; playDelayS: number | null; initialThroughputKbps: number | null; error: string | null }>;
  startedAt: string;
  finishedAt: string | null;
  complete: boolean;
  /** An experiment design's runs: every session and flow of each (absent without a design). */
  designRuns?: DesignRun[];
  /** The design's estimates (docs/lab-results.md, "Experiment designs"). */
  experiment?: ExperimentResult;
  /** The headless player process: CPU time (user + system), how long it ran, sessions started (absent for the browser). */
  headlessPlayer?: { cpuS: number | null; wallS: number; sessions: number };
}

/** The experiment a session ran in: its name, or in older results its neighbour kind. */
export function experimentName(t: TrialRecord): string {
  return t.experiment ?? t.neighbour;
}

/** The summary of every metric per arm, overall and per experiment, from the sessions so far. */
export function summaries(trials: TrialRecord[], arms: Arm[]): Pick<LabResult, 'summary' | 'summaryByNeighbour' | 'summaryByWindow'> {
  const names = [...SUMMARY_METRICS, ...EXTRA_METRICS];
  type Values = Record<string, number | null | undefined>;
  const collect = (records: TrialRecord[], metricsOf: (r: TrialRecord) => Values | null = (r) => r.metrics as unknown as Values, metricNames = names) => {
    const values: Record<string, Record<string, Array<number | null | undefined>>> = {};
    for (const arm of arms) {
      values[arm] = {};
      const of = records.filter((r) => r.arm === arm).map(metricsOf).filter((m): m is Values => m !== null);
      for (const m of metricNames) values[arm]![m] = of.map((x) => x[m]);
    }
    return summarize(values);
  };
  const experiments = [...new Set(trials.map(experimentName))];
  const summaryByNeighbour: LabResult['summaryByNeighbour'] = {};
  for (const name of experiments) summaryByNeighbour[name] = collect(trials.filter((t) => experimentName(t) === name));
  const solo = trials.filter((t) => t.neighbour === 'none');
  const videoSource = solo.length > 0 ? solo : trials;
  const video = collect(videoSource);
  const all = collect(trials);
  const summary: LabResult['summary'] = {};
  for (const arm of arms) {
    summary[arm] = {};
    for (const m of names) summary[arm]![m] = VIDEO_METRICS.has(m) ? video[arm]![m]! : all[arm]![m]!;
  }
  if (!trials.some((t) => t.windows)) return { summary, summaryByNeighbour };
  const summaryByWindow: NonNullable<LabResult['summaryByWindow']> = {};
  for (const w of PHASE_WINDOWS) {
    summaryByWindow[w] = {};
    for (const name of experiments) {
      const of = trials.filter((t) => experimentName(t) === name);
      const metricNames = [...new Set(of.flatMap((t) => Object.keys(t.windows?.[w]?.metrics ?? {})))];
      summaryByWindow[w]![name] = collect(of, (t) => (t.windows?.[w]?.metrics as unknown as Values | undefined) ?? null, metricNames);
    }
  }
  return { summary, summaryByNeighbour, summaryByWindow };
}
