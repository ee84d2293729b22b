/**
 * The simulator's neighbour models against the lab, start by start (DESIGN: "models
 * agree with measurements before they choose"). Every lab session beside a UDP
 * neighbour is replayed in the simulator from the same point of the same trace (its
 * first media request), with the run's latency, buffer target, Sammy config, history,
 * media length and neighbour rate, and scored over the lab's measurement window. Per
 * trial the lab's Sammy - control difference in the neighbour's one-way delay is set
 * against the simulator's, for each model.
 */
import type { SegmentsSidecar } from '@sammy/encoder/sidecar';
import { armFactory, behindGuardFloor } from '../arms/index.js';
import { NEIGHBOUR_MODELS, neighbourDelayQueues, neighbourLink, type NeighbourModel } from '../neighbour.js';
import { sessionFlows, simulateSession } from '../session.js';
import { mean, pearson, spearman } from '../stats.js';
import { loadTrace, startTraceAt, type Trace } from '../trace.js';
import { PHASES, type LabRun, type LabSession, type Phase } from './lab.js';

export type ModelFigures = Record<NeighbourModel, number>;

export interface CheckedPair {
  trial: number;
  /** Trace time of each arm's first media request in the lab (where its simulated session starts). */
  traceStartS: { control: number; sammy: number };
  lab: { controlMs: number; sammyMs: number };
  /** The simulated neighbour delay over the lab's window, in full queues, per model. */
  sim: { control: ModelFigures; sammy: ModelFigures };
  /** The same per phase window the lab measured for both arms (each arm's own window). */
  phases: Partial<Record<Phase, { lab: { controlMs: number; sammyMs: number }; sim: { control: ModelFigures; sammy: ModelFigures } }>>;
}

/** How far the simulator's Sammy - control differences follow the lab's over a set of pairs. */
export interface Agreement {
  pairs: number;
  /** Pairs where the simulator's difference has the lab's sign. */
  signAgree: number;
  spearman: number | null;
  pearson: number | null;
  /** The mean difference, lab (ms) and simulator (full queues). */
  labMeanDiffMs: number;
  simMeanDiff: number;
  /** Every session's own level, lab against simulator (the trace's part as well as the arm's). */
  levelSpearman: number | null;
  levelPearson: number | null;
}

export interface CheckedRun {
  name: string;
  trace: string;
  rttMs: number;
  maxBufferS: number;
  mediaDurationS: number;
  neighbourKbps: number;
  /** The sammy arm's config as the simulator ran it (the recorded one without `droppedKeys`). */
  sammy: LabRun['sammy'];
  droppedKeys: string[];
  guardFloorKbps: number | null;
  guardRaised: { raised: number; paced: number };
  pairs: CheckedPair[];
  agreement: Record<NeighbourModel, Agreement>;
  /** Over the pairs with both arms' phase window, per phase. */
  phaseAgreement: Partial<Record<Phase, Record<NeighbourModel, Agreement>>>;
}

export interface ModelCheckResult {
  command: string;
  models: readonly NeighbourModel[];
  runs: CheckedRun[];
  /** Over the pairs of the runs the simulator replays as they ran (no dropped keys), and of those it does not. */
  pooled: { asRun: Record<NeighbourModel, Agreement>; withoutFadeHold: Record<NeighbourModel, Agreement> };
  /** The lab against itself: two runs of one config from the same starts, their differences pair by pair. */
  repeats: Array<{ runs: [string, string]; agreement: Agreement }>;
}

/** Two runs' trial starts are the same when every pair starts within this of the other's. */
export const SAME_START_S = 5;

/** Runs of the same trace, buffer target, neighbour and Sammy config whose trials start at the same points. */
function repeats(runs: readonly CheckedRun[]): ModelCheckResult['repeats'] {
  const config = (r: CheckedRun): string => JSON.stringify([r.trace, r.maxBufferS, r.neighbourKbps, r.sammy, r.droppedKeys, r.guardFloorKbps !== null]);
  const out: ModelCheckResult['repeats'] = [];
  runs.forEach((a, i) =>
    runs.slice(i + 1).forEach((b) => {
      const sameStarts = a.pairs.length === b.pairs.length && a.pairs.every((p, k) => Math.abs(p.traceStartS.control - b.pairs[k]!.traceStartS.control) <= SAME_START_S);
      if (config(a) !== config(b) || !sameStarts) return;
      const lab = (r: CheckedRun) => r.pairs.map((p) => [p.lab.controlMs, p.lab.sammyMs] as const);
      out.push({ runs: [a.name, b.name], agreement: agreement(lab(a), lab(b)) });
    }),
  );
  return out;
}

const sign = (x: number): number => (x > 0 ? 1 : x < 0 ? -1 : 0);

/** `lab` and `sim`: per pair, [control, sammy]. */
export function agreement(lab: ReadonlyArray<readonly [number, number]>, sim: ReadonlyArray<readonly [number, number]>): Agreement {
  const labDiffs = lab.map(([c, s]) => s - c);
  const simDiffs = sim.map(([c, s]) => s - c);
  return {
    pairs: lab.length,
    signAgree: labDiffs.filter((d, i) => sign(d) === sign(simDiffs[i]!)).length,
    spearman: spearman(labDiffs, simDiffs),
    pearson: pearson(labDiffs, simDiffs),
    labMeanDiffMs: mean(labDiffs) ?? 0,
    simMeanDiff: mean(simDiffs) ?? 0,
    levelSpearman: spearman(lab.flat(), sim.flat()),
    levelPearson: pearson(lab.flat(), sim.flat()),
  };
}

type Measured = Pick<CheckedPair, 'lab' | 'sim'>;

function agreementByModel(pairs: readonly Measured[]): Record<NeighbourModel, Agreement> {
  const lab = pairs.map((p) => [p.lab.controlMs, p.lab.sammyMs] as const);
  const byModel = {} as Record<NeighbourModel, Agreement>;
  for (const m of NEIGHBOUR_MODELS) byModel[m] = agreement(lab, pairs.map((p) => [p.sim.control[m], p.sim.sammy[m]] as const));
  return byModel;
}

function phaseAgreement(pairs: readonly CheckedPair[]): CheckedRun['phaseAgreement'] {
  const out: CheckedRun['phaseAgreement'] = {};
  for (const phase of PHASES) {
    const measured = pairs.flatMap((p) => (p.phases[phase] ? [p.phases[phase]] : []));
    if (measured.length > 0) out[phase] = agreementByModel(measured);
  }
  return out;
}

/** The session's neighbour delay over the lab's window, and over each phase window it has. */
function simulate(run: LabRun, trace: Trace, sidecar: SegmentsSidecar, s: LabSession): { whole: ModelFigures; phases: Partial<Record<Phase, ModelFigures>> } {
  const at = startTraceAt(trace, s.traceAtFirstRequestS);
  const base = armFactory(s.arm, { maxBufferS: run.maxBufferS, sammy: run.sammy, historyKbps: s.historyKbps });
  const arm = s.arm === 'sammy' && run.guardFloorKbps !== null ? behindGuardFloor(base, run.guardFloorKbps) : base;
  const q = simulateSession({ trace: at, sidecar, durationS: run.mediaDurationS, arm });
  const link = neighbourLink(at, run.neighbourKbps);
  const flows = sessionFlows(q.chunks);
  const over = (fromS: number, toS: number): ModelFigures => {
    const figures = {} as ModelFigures;
    for (const m of NEIGHBOUR_MODELS) figures[m] = neighbourDelayQueues(link, flows, fromS, toS, m);
    return figures;
  };
  const phases: Partial<Record<Phase, ModelFigures>> = {};
  for (const phase of PHASES) {
    const w = s.phases[phase];
    if (w) phases[phase] = over(w.fromS, w.toS);
  }
  return { whole: over(s.windowFromS, s.windowToS), phases };
}

export function checkRun(run: LabRun, sidecar: SegmentsSidecar): CheckedRun {
  const trace = loadTrace(run.traceFile, { defaultLatencyMs: run.rttMs });
  const pairs = run.pairs.map((p): CheckedPair => {
    const control = simulate(run, trace, sidecar, p.control);
    const sammy = simulate(run, trace, sidecar, p.sammy);
    const phases: CheckedPair['phases'] = {};
    for (const phase of PHASES) {
      const [c, s] = [p.control.phases[phase], p.sammy.phases[phase]];
      if (c && s) phases[phase] = { lab: { controlMs: c.udpOwdMs, sammyMs: s.udpOwdMs }, sim: { control: control.phases[phase]!, sammy: sammy.phases[phase]! } };
    }
    return {
      trial: p.control.trial,
      traceStartS: { control: p.control.traceAtFirstRequestS, sammy: p.sammy.traceAtFirstRequestS },
      lab: { controlMs: p.control.udpOwdMs, sammyMs: p.sammy.udpOwdMs },
      sim: { control: control.whole, sammy: sammy.whole },
      phases,
    };
  });
  const { pairs: _lab, traceFile: _file, ...rest } = run;
  return { ...rest, trace: trace.name, pairs, agreement: agreementByModel(pairs), phaseAgreement: phaseAgreement(pairs) };
}

export function checkAgainstLab(runs: readonly LabRun[], sidecar: SegmentsSidecar, command: string): ModelCheckResult {
  const checked = runs.map((r) => checkRun(r, sidecar));
  const pool = (keep: (r: CheckedRun) => boolean): Record<NeighbourModel, Agreement> => agreementByModel(checked.filter(keep).flatMap((r) => r.pairs));
  return {
    command,
    models: NEIGHBOUR_MODELS,
    runs: checked,
    pooled: { asRun: pool((r) => r.droppedKeys.length === 0), withoutFadeHold: pool((r) => r.droppedKeys.length > 0) },
    repeats: repeats(checked),
  };
}
