/**
 * The UDP neighbour's delay on a trace link, split by what the link could carry at
 * the time. Whenever the trace's capacity falls below the neighbour's own rate its
 * packets queue up whatever the video does, and those seconds (a UMTS trace's dead
 * stretches) can decide a session's mean delay. Each neighbour packet is put in the
 * class of the capacity the trace offered in the second before it was sent, so arms
 * can be compared where the video makes the difference.
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { SCENARIO_DIR } from './paths.js';
import type { LabResult, TrialRecord } from './result.js';
import { summarize, type MetricSummary } from './stats.js';
import { capacityPerBin, opportunitySchedule, readTrace, type LinkTrace, type OpportunitySchedule, sha256Of, type TraceCapacity } from './trace-link.js';

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

export interface DelayByCapacity {
  /** Per class (`capacityClassLabel`): each arm's mean of its sessions' mean one-way delays (ms). */
  byClass: Array<{ label: string; packetShare: number; arms: Record<string, MetricSummary> }>;
  packets: number;
}

/**
 * Every session with a UDP neighbour and the trace's restart time: its packets' one-way
 * delays by capacity class, a mean per session and class, then summarised per arm over
 * sessions. Null when no session qualifies.
 */
export function udpDelayByCapacity(trials: TrialRecord[], c: TraceCapacity): DelayByCapacity | null {
  const perClass = CAPACITY_CLASSES_MBPS.map(() => ({} as Record<string, Array<number | null>>));
  const counts = CAPACITY_CLASSES_MBPS.map(() => 0);
  let packets = 0;
  for (const t of trials) {
    const raw = t.neighbourRaw;
    if (t.error || raw?.kind !== 'udp' || !t.window || t.playbackStartS === null || typeof t.traceStartS !== 'number') continue;
    const windowStartTraceS = t.playbackStartS + t.window.startS - t.traceStartS;
    const sums = CAPACITY_CLASSES_MBPS.map(() => ({ ms: 0, n: 0 }));
    for (const [sentMs, owdMs] of raw.packets) {
      const mbps = capacityBeforeMbps(c, windowStartTraceS + sentMs / 1000);
      if (mbps === null) continue;
      const k = classOf(mbps);
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
      label: capacityClassLabel(k),
      packetShare: counts[k]! / packets,
      arms: Object.fromEntries(Object.entries(summarize(Object.fromEntries(Object.entries(values).map(([arm, v]) => [arm, { owd: v }])))).map(([arm, m]) => [arm, m.owd!])),
    })),
  };
}

/** The capacity series of a result written before results carried one: from the trace file it names, if it is still there unchanged. */
export function traceCapacityOf(result: LabResult): TraceCapacity | null {
  if (result.traceCapacity) return result.traceCapacity;
  const trace = result.config.scenario.link.trace as LinkTrace | null | undefined;
  if (!trace) return null;
  for (const path of [resolve(SCENARIO_DIR, trace.file), trace.path]) {
    if (!existsSync(path) || sha256Of(path) !== trace.sha256) continue;
    return traceCapacity(opportunitySchedule(readTrace(path)), sessionTraceSpanS(result.config.scenario.session));
  }
  return null;
}

/** How far into the trace a session's measurements can reach: the trace restarts at the play request, before the first frame. */
export function sessionTraceSpanS(session: { startupTimeoutS: number; playS: number }): number {
  return session.startupTimeoutS + session.playS + 5;
}
