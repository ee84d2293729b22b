/**
 * Trace-driven bottlenecks (docs/lab-scenarios.md, "Trace links"). A scenario's
 * `link.trace` is a mahimahi file or the simulator's JSON steps, read with the
 * simulator's own parser (`@sammy/sim/trace`). Here it becomes the schedule of
 * delivery opportunities at which the delay line serves its downlink queue
 * (`labtools delay --down-trace`), one 1500-byte MTU each, and here a calibration's
 * bins become the link's fidelity to the trace. Pure: the lab's trace-link.ts
 * restarts the trace and runs the calibration; the report reads what this computes.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { loadTrace, MAHIMAHI_PACKET_BYTES, meanBandwidthKbps, type Trace } from '@sammy/sim/trace';
import { LabError } from '../lab-error.js';

/** Bytes one delivery opportunity may carry (mahimahi's MTU). */
export const OPPORTUNITY_BYTES = MAHIMAHI_PACKET_BYTES;

/** The trace as the scenario names it and as it was read. */
export interface LinkTrace {
  /** As written in the scenario, relative to the scenario file. */
  file: string;
  /** Resolved. */
  path: string;
  format: Trace['format'];
  /** Mean capacity over one period (mahimahi) or up to the last step plus 1 s (steps), as the simulator computes it. */
  meanRateMbps: number;
  /** mahimahi traces repeat with this period; a steps trace (null) holds its last step. */
  periodS: number | null;
  /** One pass of the trace: its period (mahimahi), or up to its last step plus 1 s (steps), as the mean is taken. */
  lengthS: number;
  sha256: string;
}

/** The trace's capacity from its start (repetitions included), in bins; stored in result.json as `traceCapacity` (delay-by-capacity.ts). */
export interface TraceCapacity {
  binS: number;
  bytesPerBin: number[];
}

/** The opportunities of a trace: offsets in us from its start; [loopFromUs, periodUs) repeats for ever. */
export interface OpportunitySchedule {
  offsetsUs: number[];
  periodUs: number;
  loopFromUs: number;
}

/** Reads a trace with the simulator's parser; mahimahi at 1 ms bins, so no opportunity moves by more than 1 ms. */
export function readTrace(path: string): Trace {
  return loadTrace(path, { mahimahiBinMs: 1 });
}

export function describeTrace(file: string, path: string): LinkTrace {
  const trace = readTrace(path);
  return {
    file, path, format: trace.format, meanRateMbps: meanBandwidthKbps(trace) / 1000, periodS: trace.periodS,
    lengthS: trace.periodS ?? trace.stepStartS[trace.stepStartS.length - 1]! + 1,
    sha256: sha256Of(path),
  };
}

/** The hex SHA-256 of a file's bytes (a trace's identity in a result's config). */
export function sha256Of(path: string): string {
  return createHash('sha256').update(readFileSync(path)).digest('hex');
}

/**
 * The opportunity schedule of a trace: opportunity n comes when the trace's capacity
 * since its start first exceeds n MTUs. A mahimahi trace read at 1 ms bins gives back
 * its own opportunities (several in one millisecond are spread evenly over it). A
 * steps trace holds its last step: that step repeats in whole opportunities, about a
 * second's worth at a time.
 */
export function opportunitySchedule(trace: Trace): OpportunitySchedule {
  const n = trace.stepStartS.length;
  const startUs = (i: number) => Math.round(trace.stepStartS[i]! * 1e6);
  const bytesPerUs = (i: number) => trace.bandwidthKbps[i]! / 8000;
  const offsets: number[] = [];
  let cumulative = 0;
  let periodUs: number;
  let loopFromUs: number;
  const emit = (fromUs: number, toUs: number, rate: number) => {
    if (rate <= 0) return;
    const end = cumulative + rate * (toUs - fromUs);
    for (let k = Math.ceil(cumulative / OPPORTUNITY_BYTES); k * OPPORTUNITY_BYTES < end; k++) {
      offsets.push(fromUs + (k * OPPORTUNITY_BYTES - cumulative) / rate);
    }
    cumulative = end;
  };
  if (trace.periodS !== null) {
    periodUs = Math.round(trace.periodS * 1e6);
    loopFromUs = 0;
    for (let i = 0; i < n; i++) emit(startUs(i), i + 1 < n ? startUs(i + 1) : periodUs, bytesPerUs(i));
  } else {
    for (let i = 0; i + 1 < n; i++) emit(startUs(i), startUs(i + 1), bytesPerUs(i));
    loopFromUs = startUs(n - 1);
    const rate = bytesPerUs(n - 1);
    const spacingUs = OPPORTUNITY_BYTES / rate;
    const count = Math.max(1, Math.ceil(1e6 / spacingUs));
    emit(loopFromUs, loopFromUs + count * spacingUs, rate);
    periodUs = Math.round(loopFromUs + count * spacingUs);
  }
  if (!offsets.some((t) => t >= loopFromUs)) {
    throw new LabError('LAB_BAD_TRACE', `trace ${trace.name} has no capacity in the part that repeats, so the link would never deliver again`);
  }
  return { offsetsUs: offsets.map((t) => Math.min(periodUs - 1, Math.round(t))), periodUs, loopFromUs };
}

/** The schedule file `labtools delay --down-trace` reads. */
export function scheduleText(s: OpportunitySchedule, name: string): string {
  return `# delivery opportunities of ${name}, us from the trace's start\nperiod_us ${s.periodUs}\nloop_from_us ${s.loopFromUs}\n${s.offsetsUs.join('\n')}\n`;
}

/** Every opportunity's time (us from the trace's start, repetitions included) before `endUs`, in order. */
export function* opportunityTimes(s: OpportunitySchedule, endUs: number): Generator<number> {
  const loopIndex = s.offsetsUs.findIndex((t) => t >= s.loopFromUs);
  let shiftUs = 0;
  for (let i = 0; ; ) {
    const t = s.offsetsUs[i]! + shiftUs;
    if (t >= endUs) return;
    yield t;
    if (++i === s.offsetsUs.length) {
      i = loopIndex;
      shiftUs += s.periodUs - s.loopFromUs;
    }
  }
}

/** Bytes the trace can carry in each of `bins` bins of `binUs` from its start (repetitions included). */
export function capacityPerBin(s: OpportunitySchedule, binUs: number, bins: number): number[] {
  const out = new Array<number>(bins).fill(0);
  for (const t of opportunityTimes(s, binUs * bins)) out[Math.floor(t / binUs)]! += OPPORTUNITY_BYTES;
  return out;
}

/** An outage: no opportunity from `startS` (the last one before) to `endS` (the next one), in s from the trace's start. */
export interface Outage {
  startS: number;
  endS: number;
}

/** The outages of at least `minS` that end before `untilS`. */
export function outages(s: OpportunitySchedule, untilS: number, minS = 1): Outage[] {
  const out: Outage[] = [];
  let last = 0;
  for (const t of opportunityTimes(s, untilS * 1e6)) {
    if (t - last >= minS * 1e6) out.push({ startS: last / 1e6, endS: t / 1e6 });
    last = t;
  }
  return out;
}

/**
 * The longest outage of at least `minS` a session met: its trace ran from trace time
 * `fromS` to `untilS`. An outage it began in counts from `fromS`. Null when there was none.
 */
export function longestOutage(s: OpportunitySchedule, fromS: number, untilS: number, minS = 1): Outage | null {
  let longest: Outage | null = null;
  // Clipping only shortens an outage, so one under `minS` before it cannot count after it.
  for (const o of outages(s, untilS, minS)) {
    const met = { startS: Math.max(o.startS, fromS), endS: o.endS };
    if (met.endS <= fromS || met.endS - met.startS < minS) continue;
    if (!longest || met.endS - met.startS > longest.endS - longest.startS) longest = met;
  }
  return longest;
}

/**
 * Did playback go on after the outage ended, and how soon? From the page's buffer
 * samples ([s since origin, buffer s, playhead s], every 0.5 s): the first sample at or
 * after `endS` (s since origin) from which the playhead moves on. The delay is 0 when
 * it never stopped, and is known to the sampling period.
 */
export function resumeAfterOutage(buffer: Array<[number, number, number]>, endS: number): { resumed: boolean; resumeS: number | null } {
  for (let i = 0; i + 1 < buffer.length; i++) {
    const [t, , playhead] = buffer[i]!;
    if (t < endS - 0.5) continue;
    if (buffer[i + 1]![2] > playhead + 0.05) return { resumed: true, resumeS: Math.max(0, t - endS) };
  }
  return { resumed: false, resumeS: null };
}

/** Pearson's correlation; null when either side does not vary. */
export function correlation(x: number[], y: number[]): number | null {
  const n = Math.min(x.length, y.length);
  if (n < 2) return null;
  const mx = x.slice(0, n).reduce((a, b) => a + b, 0) / n;
  const my = y.slice(0, n).reduce((a, b) => a + b, 0) / n;
  let sxy = 0;
  let sxx = 0;
  let syy = 0;
  for (let i = 0; i < n; i++) {
    sxy += (x[i]! - mx) * (y[i]! - my);
    sxx += (x[i]! - mx) ** 2;
    syy += (y[i]! - my) ** 2;
  }
  return sxx === 0 || syy === 0 ? null : sxy / Math.sqrt(sxx * syy);
}

/** Cumulative counts [t, total] sampled over time, read at `t` by linear interpolation. */
export function cumulativeAt(samples: Array<[number, number]>, t: number): number | null {
  if (samples.length === 0 || t < samples[0]![0] || t > samples[samples.length - 1]![0]) return null;
  let i = 1;
  while (i < samples.length && samples[i]![0] < t) i++;
  if (i === samples.length) return samples[samples.length - 1]![1];
  const [t0, v0] = samples[i - 1]!;
  const [t1, v1] = samples[i]!;
  return t1 === t0 ? v1 : v0 + ((v1 - v0) * (t - t0)) / (t1 - t0);
}

/** The bar a trace link must meet: per-second correlation and total both within 10%. */
export const FIDELITY_TOLERANCE = 0.1;

export interface TraceFidelity {
  trace: string;
  /** How long the saturating flow ran, from the trace's restart. */
  calibrationS: number;
  /** Seconds left out at the start (the flow's slow start). */
  skippedS: number;
  binS: number;
  /** Per bin from `skippedS`: [trace capacity, bytes served at the bottleneck (IP), TCP payload bytes received]. */
  bins: Array<[number, number | null, number | null]>;
  /** The capacity varies by at most the tolerance around its mean: the correlation says nothing, and only the total is judged. */
  constantCapacity: boolean;
  /** Served bytes against capacity, per bin. */
  correlation: number | null;
  /** Total served / total capacity over the bins. */
  totalRatio: number | null;
  /** Sum over bins of |served - capacity| / total capacity, in %. */
  binErrorPct: number | null;
  /** The same for the receiver's TCP payload (below the served bytes by the headers, about 3.5%). */
  goodputCorrelation: number | null;
  goodputTotalRatio: number | null;
  tolerance: number;
  /** |totalRatio - 1| <= tolerance and, unless the capacity is constant, correlation >= 1 - tolerance. */
  withinTolerance: boolean;
}

/** The fidelity figures from per-bin capacity, served and received bytes. */
export function traceFidelity(o: { trace: string; calibrationS: number; skippedS: number; binS: number; capacity: number[]; served: Array<number | null>; received: Array<number | null> }): TraceFidelity {
  const pairs = (values: Array<number | null>) => o.capacity.map((c, i) => [c, values[i]] as const).filter((p): p is readonly [number, number] => typeof p[1] === 'number');
  const figures = (values: Array<number | null>) => {
    const p = pairs(values);
    const capacity = p.reduce((a, [c]) => a + c, 0);
    const sum = p.reduce((a, [, v]) => a + v, 0);
    const l1 = p.reduce((a, [c, v]) => a + Math.abs(v - c), 0);
    return { r: correlation(p.map(([c]) => c), p.map(([, v]) => v)), ratio: capacity > 0 ? sum / capacity : null, errorPct: capacity > 0 ? (100 * l1) / capacity : null };
  };
  const served = figures(o.served);
  const received = figures(o.received);
  const total = o.capacity.reduce((a, b) => a + b, 0);
  const constant = o.capacity.length > 0 && Math.max(...o.capacity) - Math.min(...o.capacity) <= (FIDELITY_TOLERANCE * total) / o.capacity.length;
  const withinTolerance = served.ratio !== null && Math.abs(served.ratio - 1) <= FIDELITY_TOLERANCE && (constant || (served.r !== null && served.r >= 1 - FIDELITY_TOLERANCE));
  return {
    trace: o.trace, calibrationS: o.calibrationS, skippedS: o.skippedS, binS: o.binS,
    bins: o.capacity.map((c, i) => [c, o.served[i] ?? null, o.received[i] ?? null]),
    constantCapacity: constant, correlation: served.r, totalRatio: served.ratio, binErrorPct: served.errorPct, goodputCorrelation: received.r, goodputTotalRatio: received.ratio,
    tolerance: FIDELITY_TOLERANCE, withinTolerance,
  };
}
