/**
 * The parameter sweep (thesis 2.5.3, Fig. 2.5): every grid point runs Sammy over every
 * trace; each trace also runs `control` (and `fixed4x`, the 2.5.4 baseline) with the
 * same buffer target. A point's chunk-throughput and quality changes are the mean over
 * traces of its per-trace change against control. The Pareto front is over (lower
 * throughput change, higher quality change) among points that rebuffer no more than
 * control over the same traces.
 */
import type { SegmentsSidecar } from '@sammy/encoder/sidecar';
import { armFactory, type ArmFactory } from '../arms/index.js';
import { barMisses } from '../corpus/compare.js';
import { DEFAULT_SAMMY_CONFIG, type SammyConfig } from '../core.js';
import { simulateSession, type SimSessionQoE } from '../session.js';
import type { Trace } from '../trace.js';

export interface TraceOutcome {
  trace: string;
  chunkThroughputKbps: number | null;
  avgQuality: number | null;
  avgBitrateKbps: number;
  rebufferCount: number;
  rebufferS: number;
  playDelayS: number | null;
  switchesPer10Min: number;
  linkFilledS: number;
  neighbourDelayQueues: number;
}

export interface SweepRow {
  arm: 'sammy' | 'control' | 'fixed4x';
  /** Sammy's swept parameters (the grid's fields); empty for the other arms. */
  params: Partial<SammyConfig>;
  /** Mean over traces of 100 (x / control - 1). */
  chunkThroughputChangePct: number;
  qualityChangePct: number;
  bitrateChangePct: number;
  /** Mean over traces of 100 (x / control - 1) of the seconds the video filled the link (session.ts `linkFilledS`). */
  linkFilledChangePct: number;
  /** Mean over traces of a neighbour's mean delay beside the video, in full queues (session.ts `neighbourDelayQueues`). */
  neighbourDelayQueues: number;
  rebufferCount: number;
  rebufferS: number;
  meanPlayDelayS: number;
  /** Mean over traces of the rung switches per 10 minutes. */
  meanSwitchesPer10Min: number;
  /** Traces on which this point misses the bar against control (compare.ts `barMisses`). */
  barMissTraces: number;
  /** Rebuffers no more (in seconds) than control on the same traces. */
  eligible: boolean;
  pareto: boolean;
  /** The thesis parameters (DEFAULT_SAMMY_CONFIG: 11x / 2.9x and the core's defaults). */
  isDefault: boolean;
  perTrace: TraceOutcome[];
}

export interface SweepOptions {
  traces: readonly Trace[];
  sidecar: SegmentsSidecar;
  points: readonly Partial<SammyConfig>[];
  durationS: number;
  maxBufferS?: number;
  onProgress?: (done: number, total: number) => void;
}

export interface SweepResult {
  rows: SweepRow[];
  /** The points that miss the bar on the fewest traces, then switch least, then keep the most quality (at most 10). */
  stablest: SweepRow[];
  /** The points that miss the bar on the fewest traces, then rebuffer least, then keep the most quality (at most 10). */
  safest: SweepRow[];
  /** The points that miss the bar on the fewest traces, then fill the link least, then keep the most quality (at most 10). */
  quietest: SweepRow[];
  control: SweepRow;
  fixed4x: SweepRow;
  /** Pareto rows, by throughput change. */
  front: SweepRow[];
  defaultRow: SweepRow;
}

function outcome(q: SimSessionQoE): TraceOutcome {
  return {
    trace: q.sim.trace,
    chunkThroughputKbps: q.chunkThroughputKbps,
    avgQuality: q.avgQuality,
    avgBitrateKbps: q.avgBitrateKbps,
    rebufferCount: q.rebufferCount,
    rebufferS: q.rebufferS,
    playDelayS: q.playDelayS,
    switchesPer10Min: (q.switchCount * 600) / q.sim.mediaS,
    linkFilledS: q.sim.linkFilledS,
    neighbourDelayQueues: q.sim.neighbourDelayQueues,
  };
}

function meanChangePct(rows: TraceOutcome[], control: TraceOutcome[], pick: (o: TraceOutcome) => number | null): number {
  const changes: number[] = [];
  rows.forEach((o, i) => {
    const x = pick(o);
    const c = pick(control[i]!);
    if (x !== null && c !== null && c > 0) changes.push(100 * (x / c - 1));
  });
  return changes.length === 0 ? 0 : changes.reduce((a, b) => a + b, 0) / changes.length;
}

function row(arm: SweepRow['arm'], params: Partial<SammyConfig>, perTrace: TraceOutcome[], control: TraceOutcome[]): SweepRow {
  const sum = (pick: (o: TraceOutcome) => number): number => perTrace.reduce((s, o) => s + pick(o), 0);
  const controlRebufferS = control.reduce((s, o) => s + o.rebufferS, 0);
  const delays = perTrace.map((o) => o.playDelayS).filter((d): d is number => d !== null);
  return {
    arm,
    params,
    chunkThroughputChangePct: meanChangePct(perTrace, control, (o) => o.chunkThroughputKbps),
    qualityChangePct: meanChangePct(perTrace, control, (o) => o.avgQuality),
    bitrateChangePct: meanChangePct(perTrace, control, (o) => o.avgBitrateKbps),
    linkFilledChangePct: meanChangePct(perTrace, control, (o) => o.linkFilledS),
    neighbourDelayQueues: sum((o) => o.neighbourDelayQueues) / Math.max(1, perTrace.length),
    rebufferCount: sum((o) => o.rebufferCount),
    rebufferS: sum((o) => o.rebufferS),
    meanPlayDelayS: delays.length === 0 ? 0 : delays.reduce((a, b) => a + b, 0) / delays.length,
    meanSwitchesPer10Min: sum((o) => o.switchesPer10Min) / Math.max(1, perTrace.length),
    barMissTraces: perTrace.filter((o, i) => barMisses(o, control[i]!).length > 0).length,
    eligible: sum((o) => o.rebufferS) <= controlRebufferS + 1e-9,
    pareto: false,
    isDefault: false,
    perTrace,
  };
}

/** Rows not dominated in (throughput change down, quality change up); marks them and returns them by throughput change. */
export function paretoFront(rows: SweepRow[]): SweepRow[] {
  const eps = 1e-9;
  const candidates = rows.filter((r) => r.eligible);
  const front = candidates.filter(
    (a) =>
      !candidates.some(
        (b) =>
          b !== a &&
          b.chunkThroughputChangePct <= a.chunkThroughputChangePct + eps &&
          b.qualityChangePct >= a.qualityChangePct - eps &&
          (b.chunkThroughputChangePct < a.chunkThroughputChangePct - eps || b.qualityChangePct > a.qualityChangePct + eps),
      ),
  );
  for (const r of front) r.pareto = true;
  return front.sort((a, b) => a.chunkThroughputChangePct - b.chunkThroughputChangePct);
}

function isDefaultPoint(params: Partial<SammyConfig>): boolean {
  return (Object.keys(params) as (keyof SammyConfig)[]).every((k) => params[k] === DEFAULT_SAMMY_CONFIG[k]);
}

export function runSweep(options: SweepOptions): SweepResult {
  const { traces, sidecar, durationS } = options;
  const buffer = options.maxBufferS === undefined ? {} : { maxBufferS: options.maxBufferS };
  const runAll = (factory: ArmFactory): TraceOutcome[] => traces.map((trace) => outcome(simulateSession({ trace, sidecar, arm: factory, durationS })));

  // The default point is always in the table, whatever the grid.
  const keys = [...new Set(options.points.flatMap((p) => Object.keys(p) as (keyof SammyConfig)[]))];
  const defaultParams = Object.fromEntries(keys.map((k) => [k, DEFAULT_SAMMY_CONFIG[k]])) as Partial<SammyConfig>;
  const points = options.points.some(isDefaultPoint) ? [...options.points] : [...options.points, defaultParams];

  const total = points.length + 2;
  const controlTraces = runAll(armFactory('control', buffer));
  const control = row('control', {}, controlTraces, controlTraces);
  const fixed4x = row('fixed4x', {}, runAll(armFactory('fixed4x', buffer)), controlTraces);
  options.onProgress?.(2, total);
  const rows = points.map((params, i) => {
    const r = row('sammy', params, runAll(armFactory('sammy', { ...buffer, sammy: params })), controlTraces);
    r.isDefault = isDefaultPoint(params);
    options.onProgress?.(i + 3, total);
    return r;
  });
  const front = paretoFront(rows);
  return { rows, stablest: stablest(rows), safest: safest(rows), quietest: quietest(rows), control, fixed4x, front, defaultRow: rows.find((r) => r.isDefault)! };
}

/** The ranking that chose the stability parameters: fewest traces missing the bar, fewest switches, most quality. */
export function stablest(rows: readonly SweepRow[], count = 10): SweepRow[] {
  return ranked(rows, count, (a, b) => a.meanSwitchesPer10Min - b.meanSwitchesPer10Min);
}

/** The ranking that chose the buffer reserve: fewest traces missing the bar, least rebuffer time, most quality. */
export function safest(rows: readonly SweepRow[], count = 10): SweepRow[] {
  return ranked(rows, count, (a, b) => a.rebufferS - b.rebufferS);
}

/** The ranking that chose the pace under the link: fewest traces missing the bar, least time filling the link, most quality. */
export function quietest(rows: readonly SweepRow[], count = 10): SweepRow[] {
  return ranked(rows, count, (a, b) => a.linkFilledChangePct - b.linkFilledChangePct);
}

function ranked(rows: readonly SweepRow[], count: number, then: (a: SweepRow, b: SweepRow) => number): SweepRow[] {
  return [...rows].sort((a, b) => a.barMissTraces - b.barMissTraces || then(a, b) || b.qualityChangePct - a.qualityChangePct).slice(0, count);
}
