/**
 * The UDP neighbour's delay on a trace link, split by what the link could carry at
 * the time. Whenever the trace's capacity falls below the neighbour's own rate its
 * packets queue up whatever the video does, and those seconds (a UMTS trace's dead
 * stretches) can decide a session's mean delay. Each neighbour packet is put in the
 * class of the capacity the trace offered in the second before it was sent, so arms
 * can be compared where the video makes the difference. The same packets by when they
 * were sent (`udpDelayByTime`) show which part of a session the difference comes from.
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { SCENARIO_DIR } from '../paths.js';
import { trialTraceStartsS, type Scenario } from '../scenario/scenario.js';
import type { LabResult, TrialRecord } from './result.js';
import { summarize, type MetricSummary } from './stats.js';
import { capacityPerBin, opportunitySchedule, readTrace, type LinkTrace, type OpportunitySchedule, sha256Of, type TraceCapacity } from '../scenario/trace.js';

export const CAPACITY_BIN_S = 0.1;
/** A packet's class is the capacity of the trace over this long before it was sent. */
export const CAPACITY_LOOKBACK_S = 1;
/** Lower edges of the capacity classes (Mbit/s); the last class is open-ended. */
export const CAPACITY_CLASSES_MBPS = [0, 0.5, 1, 2, 3, 5] as const;

export function traceCapacity(schedule: OpportunitySchedule, untilS: number): TraceCapacity {
  const bins = Math.ceil(untilS / CAPACITY_BIN_S);
  return { binS: CAPACITY_BIN_S, bytesPerBin: capacityPerBin(schedule, CAPACITY_BIN_S * 1e6, bins) };
}

/** Mbit/s the trace offered over [traceS - lookbackS, traceS); null outside what `c` covers. */
export function capacityBeforeMbps(c: TraceCapacity, traceS: number, lookbackS = CAPACITY_LOOKBACK_S): number | null {
  const to = Math.floor(traceS / c.binS + 1e-9);
  const from = to - Math.round(lookbackS / c.binS);
  if (from < 0 || to > c.bytesPerBin.length) return null;
  let bytes = 0;
  for (let i = from; i < to; i++) bytes += c.bytesPerBin[i]!;
  return (bytes * 8) / (lookbackS * 1e6);
}

export function capacityClassLabel(i: number): string {
  const lo = CAPACITY_CLASSES_MBPS[i]!;
  const hi = CAPACITY_CLASSES_MBPS[i + 1];
  return hi === undefined ? `${lo} Mbit/s and more` : `${lo}-${hi} Mbit/s`;
}

function classOf(mbps: number): number {
  let i = 0;
  while (i + 1 < CAPACITY_CLASSES_MBPS.length && mbps >= CAPACITY_CLASSES_MBPS[i + 1]!) i++;
  return i;
}

export interface DelayByClass {
  /** Per class: each arm's mean of its sessions' mean one-way delays (ms). */
  byClass: Array<{ label: string; packetShare: number; arms: Record<string, MetricSummary> }>;
  packets: number;
}

/**
 * Every session with a UDP neighbour: its packets' one-way delays grouped by `classify`
 * (the packet's send time in s since playback start, and its session's trace time at
 * playback start; null leaves the packet out), a mean per session and class, then
 * summarised per arm over sessions. Null when no packet is classed.
 */
function udpDelayByClass(trials: TrialRecord[], labels: readonly string[], classify: (sincePlaybackS: number, traceAtPlaybackS: number | null) => number | null): DelayByClass | null {
  const perClass = labels.map(() => ({} as Record<string, Array<number | null>>));
  const counts = labels.map(() => 0);
  let packets = 0;
  for (const t of trials) {
    const raw = t.neighbourRaw;
    if (t.error || raw?.kind !== 'udp' || !t.window || t.playbackStartS === null) continue;
    const traceAtPlaybackS = typeof t.traceStartS === 'number' ? (t.traceFromS ?? 0) + t.playbackStartS - t.traceStartS : null;
    const sums = labels.map(() => ({ ms: 0, n: 0 }));
    for (const [sentMs, owdMs] of raw.packets) {
      const k = classify(t.window.startS + sentMs / 1000, traceAtPlaybackS);
      if (k === null) continue;
      sums[k]!.ms += owdMs;
      sums[k]!.n += 1;
      counts[k]! += 1;
      packets += 1;
    }
    sums.forEach((s, k) => (perClass[k]![t.arm] ??= []).push(s.n > 0 ? s.ms / s.n : null));
  }
  if (packets === 0) return null;
  return {
    packets,
    byClass: perClass.map((values, k) => ({
      label: labels[k]!,
      packetShare: counts[k]! / packets,
      arms: Object.fromEntries(Object.entries(summarize(Object.fromEntries(Object.entries(values).map(([arm, v]) => [arm, { owd: v }])))).map(([arm, m]) => [arm, m.owd!])),
    })),
  };
}

/**
 * Every session with a UDP neighbour and the trace's restart time: its packets' one-way
 * delays by capacity class (`capacityClassLabel`). Null when no session qualifies.
 */
export function udpDelayByCapacity(trials: TrialRecord[], c: TraceCapacity): DelayByClass | null {
  const labels = CAPACITY_CLASSES_MBPS.map((_, k) => capacityClassLabel(k));
  return udpDelayByClass(trials, labels, (sinceS, traceAtPlaybackS) => {
    if (traceAtPlaybackS === null) return null;
    const mbps = capacityBeforeMbps(c, traceAtPlaybackS + sinceS);
    return mbps === null ? null : classOf(mbps);
  });
}

/** Width of the time view's bins (s since playback start). */
export const TIME_BIN_S = 10;

/**
 * The same delays by when they were sent: bins of `binS` from playback start to `untilS`.
 * On a trace link that restarts at the play request every arm meets the same network at
 * the same time, so a bin compares arms where the trace is the same and the arms' states
 * (still filling, or full) differ.
 */
export function udpDelayByTime(trials: TrialRecord[], untilS: number, binS = TIME_BIN_S): DelayByClass | null {
  const bins = Math.max(1, Math.ceil(untilS / binS - 1e-9));
  const labels = Array.from({ length: bins }, (_, k) => `${k * binS}-${Math.min(untilS, (k + 1) * binS)} s`);
  return udpDelayByClass(trials, labels, (sinceS) => (sinceS >= 0 && sinceS < untilS ? Math.floor(sinceS / binS) : null));
}

/** The trace file a result ran on, if it is still there unchanged (its path as the scenario wrote it, else as the run resolved it); null on a constant link. */
export function traceFileOf(result: LabResult): string | null {
  const trace = result.config.scenario.link.trace as LinkTrace | null | undefined;
  if (!trace) return null;
  return [resolve(SCENARIO_DIR, trace.file), trace.path].find((path) => existsSync(path) && sha256Of(path) === trace.sha256) ?? null;
}

/** The capacity series of a result written before results carried one: from the trace file it names, if it is still there unchanged. */
export function traceCapacityOf(result: LabResult): TraceCapacity | null {
  if (result.traceCapacity) return result.traceCapacity;
  const path = traceFileOf(result);
  return path === null ? null : traceCapacity(opportunitySchedule(readTrace(path)), traceSpanS(result.config.scenario));
}

/**
 * How far into the trace a run's measurements can reach: a session's trace restarts at
 * its play request, before the first frame, at its trial's start point (`trialTraceStartsS`).
 */
export function traceSpanS(s: Pick<Scenario, 'link' | 'trials' | 'session'>): number {
  const lastStartS = Math.max(0, ...trialTraceStartsS(s));
  return lastStartS + s.session.startupTimeoutS + s.session.playS + 5;
}

/** One session's neighbour, replayed alone; both means over the datagrams that crossed in the session and alone. */
export interface AloneDelay {
  /** What the session measured for them (ms). */
  measuredOwdMs: number;
  /** What they waited alone (ms): the line's one-way delay plus the queue's wait. */
  owdMs: number;
  /** Datagrams the queue refused alone, of those replayed (%). */
  lossPct: number;
  /** Datagrams replayed: every send from the session's first received datagram to its last, lost ones included. */
  replayed: number;
  /** Of those, the ones both means are over. */
  common: number;
}

/** Per record of `result.trials` (same index): its neighbour alone, or null where there is none to replay. */
export type AloneDelays = Array<AloneDelay | null>;
