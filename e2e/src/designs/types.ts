/**
 * The experiment designs' shared shapes: a scenario's `experiment` field once checked,
 * the runs a design plans, and what each run measured. One design per file
 * (`ab.ts`, `switchback.ts`, `history.ts`, `fairness.ts`), listed in `index.ts`.
 */
import type { SessionQoE } from '@sammy/player/abr';
import type { SimArm } from '@sammy/sim/arms';
import type { CpuSample } from '../analysis/cpu-samples.js';
import type { Neighbour, NeighbourRaw } from '../scenario/neighbour-kinds.js';
import type { QueueSample } from '../analysis/queue-samples.js';
import type { ResponseRow, VideoMetrics } from '../analysis/video-metrics.js';
import type { Estimate } from './estimators.js';

export type DesignName = 'ab' | 'switchback' | 'history' | 'fairness';

/** Fields every design has (sessions-based designs use all of them; fairness only `seed`). */
export interface DesignBase {
  design: DesignName;
  /** Viewers sharing the bottleneck at once. */
  sessions: number;
  treatment: SimArm;
  control: SimArm;
  /** Seconds between two sessions' starts (staggered arrivals). */
  staggerS: number;
  /** Seeds every random assignment, so a design is repeatable. */
  seed: number;
}

export interface AbDesign extends DesignBase {
  design: 'ab';
  /** Treatment shares; 0 and 1 (all control, all treatment) give the TTE. */
  shares: number[];
}

export interface SwitchbackDesign extends DesignBase {
  design: 'switchback';
  /** Length of one all-treatment or all-control interval. */
  intervalS: number;
  /** Intervals per trial: half of each arm, in random order. */
  intervals: number;
  /** Sessions that start this soon after a switch are played (to keep the load) but not measured. */
  washoutS: number;
}

export interface HistoryDesign extends DesignBase {
  design: 'history';
  /** Measured rounds: every viewer plays one session per round; histories carry over. */
  rounds: number;
  /** Unmeasured rounds of the control viewers first, to fill their history. */
  fillRounds: number;
  fillPlayS: number;
}

export interface FairnessSetting {
  rateMbps: number;
  /** As a scenario's queue: bandwidth-delay products or bytes. */
  queue: { bdp: number } | { bytes: number };
}

/** What the designs read of the scenario (they do not import it: the scenario check imports them). */
export interface DesignScenario {
  /** session.playS */
  playS: number;
  /** player.history: per-arm histories are shared by the arm's sessions; per-session ones reset. */
  history: 'per-arm' | 'per-session';
}

export interface FairnessDesign {
  design: 'fairness';
  /** Flow kinds (`fairness.ts` FLOW_KINDS); every pair of them runs, a kind with itself too. */
  flows: string[];
  settings: FairnessSetting[];
  /** A video's demand, for its fair share: its top bitrate times this. */
  videoDemandMultiplier: number;
  /** Throughput is measured from this long after the pair starts (slow start, startup) to the end. */
  measureFromS: number;
  seed: number;
}

export type ExperimentDesign = AbDesign | SwitchbackDesign | HistoryDesign | FairnessDesign;

/** One video session of a run. */
export interface PlannedSession {
  id: string;
  arm: SimArm;
  role: 'treatment' | 'control';
  /** The device whose history it uses and leaves (a viewer). */
  device: string;
  resetHistory: boolean;
  /** Start, after the run's start. */
  startS: number;
  playS: number;
  /** Counted by the estimators (switchback washout: played, not measured). */
  measured: boolean;
  /** History design: the round; switchback: the interval. */
  round?: number;
  interval?: number;
}

/** A process flow of a run (fairness: bulk TCP, the HTTP loop), from the neighbour registry. */
export interface PlannedFlow {
  id: string;
  /** The fairness flow kind it stands for. */
  kind: string;
  neighbour: Neighbour;
  startS: number;
  durationS: number;
}

export interface PlannedRun {
  /** Unique in the trial, e.g. `share-0.3`, `switchback`, `round-2`, `40mbit-1bdp-reno+sammy`. */
  label: string;
  trial: number;
  /** ab: the treatment share of this run. */
  share?: number;
  /** What the run is for; `fill` runs are not measured. */
  purpose: 'ab' | 'switchback' | 'history-fill' | 'history' | 'fairness';
  /** Fairness: the link of this run (else the scenario's). */
  setting?: FairnessSetting;
  /** Fairness: the two flow kinds. */
  pair?: [string, string];
  /** Switchback: each interval's arm. */
  intervalArms?: Array<'treatment' | 'control'>;
  sessions: PlannedSession[];
  flows: PlannedFlow[];
  /** From the run's start until its last session or flow ends. */
  lengthS: number;
}

/** What a session measured. */
export interface SessionOutcome extends Omit<PlannedSession, 'resetHistory'> {
  /** Its play request, s after the run's start. */
  originS: number | null;
  /** Its first frame, s after its play request. */
  playbackStartS: number | null;
  metrics: VideoMetrics & { initialBitrateKbps: number | null; throughputMbps?: number | null };
  qoe: SessionQoE | null;
  telemetry: ResponseRow[];
  error: string | null;
}

export interface FlowOutcome {
  id: string;
  kind: string;
  raw: NeighbourRaw | null;
  /** Mean throughput over the measured part of the run (Mbit/s). */
  throughputMbps: number | null;
  error: string | null;
}

export interface DesignRun extends Omit<PlannedRun, 'sessions' | 'flows'> {
  startedAt: string;
  sessions: SessionOutcome[];
  flows: FlowOutcome[];
  /** Bottleneck samples, ms since the run's start. */
  queue: QueueSample[];
  cpu: CpuSample[];
  error: string | null;
}

/** The metrics every sessions-based design estimates (result.json names). */
export const DESIGN_METRICS = ['chunkThroughputKbps', 'videoRttMs', 'retransPct', 'avgBitrateKbps', 'rebufferS', 'playDelayS'] as const;
export type DesignMetric = (typeof DESIGN_METRICS)[number];

export interface MetricEstimates {
  tte: Estimate | null;
  ab: Array<Estimate & { share: number; biasPoints: number | null }>;
  switchback: (Estimate & { biasPoints: number | null }) | null;
  history: Estimate | null;
}

/** `result.json`'s `experiment`. */
export interface ExperimentResult {
  design: DesignName;
  sessionsRun: number;
  metrics: Partial<Record<DesignMetric, MetricEstimates>>;
  /** History design: the initial-bitrate gap per round. */
  historyCurve?: Array<{ round: number; treatmentKbps: number | null; controlKbps: number | null } & Estimate>;
  fairness?: FairnessSummary;
  /** What the run could not do, and why (e.g. a congestion control the kernel lacks). */
  skipped: string[];
}

export interface FairnessCell {
  setting: string;
  flow: string;
  against: string;
  /** Mean over trials of throughput / max-min fair share. */
  shareOfFair: number | null;
  throughputMbps: number | null;
  fairMbps: number;
  n: number;
}

export interface FairnessSummary {
  settings: string[];
  flows: string[];
  cells: FairnessCell[];
  /** Each video flow's QoE per setting and pair (means over trials). */
  videoQoe: Array<{ setting: string; flow: string; against: string; playDelayS: number | null; rebufferS: number | null; avgBitrateKbps: number | null; chunkThroughputKbps: number | null; n: number }>;
}
