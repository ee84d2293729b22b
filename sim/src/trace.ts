/**
 * Network traces: the available bandwidth and the request latency over time, as
 * piecewise-constant steps. Three input formats (README "Traces"):
 *
 * - `constant:KBPS` — one step that holds forever;
 * - a JSON file of steps `[{"durationS": 30, "bandwidthKbps": 40000, "latencyMs": 5}, ...]`
 *   whose last step holds forever;
 * - a mahimahi packet-delivery file (one millisecond timestamp per line, one
 *   1500-byte delivery opportunity each) that repeats with the period of its last
 *   timestamp, as mahimahi replays it. Opportunities are averaged over bins
 *   (`binMs`, default 100 ms) into steps.
 *
 * Pure apart from {@link loadTrace}, which reads the file.
 */
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { SimError } from './errors.js';

export type TraceFormat = 'constant' | 'steps' | 'mahimahi';

export interface Trace {
  name: string;
  format: TraceFormat;
  /** Start of each step in seconds; `stepStartS[0]` is 0 and the starts strictly increase. */
  stepStartS: Float64Array;
  bandwidthKbps: Float64Array;
  /** Request-to-first-byte latency (one round trip) of a request issued during the step. */
  latencyS: Float64Array;
  /** `null`: the last step holds forever. Otherwise the steps repeat with this period. */
  periodS: number | null;
}

export interface TraceOptions {
  /** Latency for formats that carry none (`constant:`, mahimahi) and steps without `latencyMs`. */
  defaultLatencyMs?: number;
  /** Bin width for mahimahi delivery opportunities. */
  mahimahiBinMs?: number;
}

export const DEFAULT_LATENCY_MS = 5;
export const DEFAULT_MAHIMAHI_BIN_MS = 100;
/** mahimahi delivers one MTU-sized packet per opportunity. */
export const MAHIMAHI_PACKET_BYTES = 1500;

function nonNegative(value: unknown, what: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
    throw new SimError('SIM_BAD_TRACE', `${what} must be a non-negative number, got ${JSON.stringify(value)}`);
  }
  return value;
}

function build(name: string, format: TraceFormat, steps: { durationS: number; bandwidthKbps: number; latencyMs: number }[], periodS: number | null): Trace {
  const n = steps.length;
  const trace: Trace = {
    name,
    format,
    stepStartS: new Float64Array(n),
    bandwidthKbps: new Float64Array(n),
    latencyS: new Float64Array(n),
    periodS,
  };
  let startS = 0;
  steps.forEach((step, i) => {
    trace.stepStartS[i] = startS;
    trace.bandwidthKbps[i] = step.bandwidthKbps;
    trace.latencyS[i] = step.latencyMs / 1000;
    startS += step.durationS;
  });
  return trace;
}

export function constantTrace(bandwidthKbps: number, latencyMs = DEFAULT_LATENCY_MS): Trace {
  if (!(bandwidthKbps > 0) || !Number.isFinite(bandwidthKbps)) {
    throw new SimError('SIM_BAD_TRACE', `constant trace bandwidth must be a positive number of kbps, got ${bandwidthKbps}`);
  }
  return build(`constant:${bandwidthKbps}`, 'constant', [{ durationS: 1, bandwidthKbps, latencyMs }], null);
}

const STEP_KEYS = new Set(['durationS', 'bandwidthKbps', 'latencyMs']);

/** Validates parsed JSON as a list of steps; the last step must have bandwidth, since it holds forever. */
export function parseStepsTrace(json: unknown, name: string, options: TraceOptions = {}): Trace {
  const defaultLatencyMs = options.defaultLatencyMs ?? DEFAULT_LATENCY_MS;
  if (!Array.isArray(json) || json.length === 0) {
    throw new SimError('SIM_BAD_TRACE', `${name}: a steps trace must be a non-empty JSON array of {durationS, bandwidthKbps, latencyMs}`);
  }
  const steps = json.map((raw: unknown, i: number) => {
    const where = `${name}: step ${i}`;
    if (typeof raw !== 'object' || raw === null) throw new SimError('SIM_BAD_TRACE', `${where} must be an object`);
    const step = raw as Record<string, unknown>;
    const unknown = Object.keys(step).filter((key) => !STEP_KEYS.has(key));
    if (unknown.length > 0) {
      throw new SimError('SIM_BAD_TRACE', `${where} has unknown field ${JSON.stringify(unknown[0])} (accepted: durationS, bandwidthKbps, latencyMs)`);
    }
    const durationS = nonNegative(step.durationS, `${where} durationS`);
    if (durationS === 0) throw new SimError('SIM_BAD_TRACE', `${where} durationS must be positive`);
    return {
      durationS,
      bandwidthKbps: nonNegative(step.bandwidthKbps, `${where} bandwidthKbps`),
      latencyMs: step.latencyMs === undefined ? defaultLatencyMs : nonNegative(step.latencyMs, `${where} latencyMs`),
    };
  });
  if (steps[steps.length - 1]!.bandwidthKbps <= 0) {
    throw new SimError('SIM_BAD_TRACE', `${name}: the last step holds forever, so its bandwidthKbps must be positive`);
  }
  return build(name, 'steps', steps, null);
}

/**
 * mahimahi's format: one integer millisecond timestamp per line, non-decreasing, each
 * an opportunity to deliver one 1500-byte packet; the file repeats after its last
 * timestamp. Opportunities are counted per `binMs` bin into a bandwidth step.
 */
export function parseMahimahiTrace(text: string, name: string, options: TraceOptions = {}): Trace {
  const binMs = options.mahimahiBinMs ?? DEFAULT_MAHIMAHI_BIN_MS;
  const latencyMs = options.defaultLatencyMs ?? DEFAULT_LATENCY_MS;
  if (!(binMs > 0)) throw new SimError('SIM_BAD_TRACE', `mahimahi bin must be a positive number of ms, got ${binMs}`);
  const timestamps: number[] = [];
  text.split('\n').forEach((line, i) => {
    const trimmed = line.trim();
    if (trimmed === '') return;
    if (!/^\d+$/.test(trimmed)) {
      throw new SimError('SIM_BAD_TRACE', `${name}:${i + 1}: a mahimahi trace holds one integer millisecond timestamp per line, got ${JSON.stringify(trimmed)}`);
    }
    const ms = Number(trimmed);
    if (timestamps.length > 0 && ms < timestamps[timestamps.length - 1]!) {
      throw new SimError('SIM_BAD_TRACE', `${name}:${i + 1}: timestamps must not decrease (${ms} after ${timestamps[timestamps.length - 1]})`);
    }
    timestamps.push(ms);
  });
  const periodMs = timestamps[timestamps.length - 1];
  if (periodMs === undefined || periodMs <= 0) {
    throw new SimError('SIM_BAD_TRACE', `${name}: a mahimahi trace needs at least one timestamp and a positive last timestamp (its period)`);
  }
  const binCount = Math.ceil(periodMs / binMs);
  const counts = new Array<number>(binCount).fill(0);
  // An opportunity at the period itself is the first of the next repetition.
  for (const ms of timestamps) counts[Math.floor((ms % periodMs) / binMs)]! += 1;
  const steps = counts.map((count, k) => {
    const durationMs = Math.min(binMs, periodMs - k * binMs);
    // bits per millisecond are kbps.
    return { durationS: durationMs / 1000, bandwidthKbps: (count * MAHIMAHI_PACKET_BYTES * 8) / durationMs, latencyMs };
  });
  return build(name, 'mahimahi', steps, periodMs / 1000);
}

/**
 * `constant:KBPS`, or the path of a JSON steps file or a mahimahi file (told apart by
 * content: JSON starts with `[`).
 */
export function loadTrace(spec: string, options: TraceOptions = {}): Trace {
  const constant = /^constant:(.+)$/.exec(spec);
  if (constant) {
    const kbps = Number(constant[1]);
    if (!(kbps > 0)) throw new SimError('SIM_BAD_TRACE', `constant:KBPS needs a positive number, got ${JSON.stringify(constant[1])}`);
    return constantTrace(kbps, options.defaultLatencyMs ?? DEFAULT_LATENCY_MS);
  }
  let text: string;
  try {
    text = readFileSync(spec, 'utf8');
  } catch (err) {
    throw new SimError('SIM_BAD_TRACE', `cannot read trace ${JSON.stringify(spec)} (${(err as Error).message}); give constant:KBPS, a JSON steps file or a mahimahi file`);
  }
  const name = basename(spec);
  if (text.trimStart().startsWith('[')) {
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch (err) {
      throw new SimError('SIM_BAD_TRACE', `${name}: invalid JSON (${(err as Error).message})`);
    }
    return parseStepsTrace(json, name, options);
  }
  return parseMahimahiTrace(text, name, options);
}

/**
 * The same link, joined `offsetS` seconds into its trace: time 0 of the result is
 * `offsetS` of `trace`. A periodic trace keeps its period (its steps rotated, the one
 * in force split); a non-periodic one loses what lies before (its last step still
 * holds forever). The lab's trace links start at the page request, seconds before the
 * player's first request (the page loads over the link), so a session simulated from
 * the trace's start meets the network earlier than the lab's player does.
 */
export function startTraceAt(trace: Trace, offsetS: number): Trace {
  if (!Number.isFinite(offsetS) || offsetS < 0) throw new SimError('SIM_BAD_TRACE', `a trace offset must be a non-negative number of seconds, got ${offsetS}`);
  if (offsetS === 0) return trace;
  const n = trace.stepStartS.length;
  const endS = (i: number): number => (i + 1 < n ? trace.stepStartS[i + 1]! : (trace.periodS ?? Infinity));
  const step = (i: number, fromS: number, toS: number): { durationS: number; bandwidthKbps: number; latencyMs: number } => ({
    durationS: toS - fromS,
    bandwidthKbps: trace.bandwidthKbps[i]!,
    latencyMs: trace.latencyS[i]! * 1000,
  });
  const localS = trace.periodS === null ? offsetS : offsetS % trace.periodS;
  const at = stepIndex(trace, localS);
  const steps = [step(at, localS, endS(at))];
  for (let i = at + 1; i < n; i++) steps.push(step(i, trace.stepStartS[i]!, endS(i)));
  if (trace.periodS !== null) {
    for (let i = 0; i < at; i++) steps.push(step(i, trace.stepStartS[i]!, endS(i)));
    if (localS > trace.stepStartS[at]!) steps.push(step(at, trace.stepStartS[at]!, localS));
  }
  return build(trace.name, trace.format, steps, trace.periodS);
}

/** Index of the step in force at `localS` (0 <= localS, within one period for periodic traces). */
function stepIndex(trace: Trace, localS: number): number {
  const starts = trace.stepStartS;
  let lo = 0;
  let hi = starts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (starts[mid]! <= localS) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/** Where time `t` falls: the step index and the absolute start of its period (0 for non-periodic traces). */
function locate(trace: Trace, t: number): { index: number; baseS: number } {
  if (trace.periodS === null) return { index: stepIndex(trace, t), baseS: 0 };
  const baseS = Math.floor(t / trace.periodS) * trace.periodS;
  return { index: stepIndex(trace, Math.max(0, t - baseS)), baseS };
}

export function latencyAtS(trace: Trace, t: number): number {
  return trace.latencyS[locate(trace, t).index]!;
}

export function bandwidthAtKbps(trace: Trace, t: number): number {
  return trace.bandwidthKbps[locate(trace, t).index]!;
}

/**
 * The time at which `kbits` have crossed the link when they start flowing at `startS`
 * at min(cap, available bandwidth), integrating over the steps. `capKbps` null: no cap.
 */
export function transferEndS(trace: Trace, startS: number, kbits: number, capKbps: number | null): number {
  if (kbits <= 0) return startS;
  const starts = trace.stepStartS;
  const bandwidth = trace.bandwidthKbps;
  const last = starts.length - 1;
  let { index, baseS } = locate(trace, startS);
  let t = startS;
  let remaining = kbits;
  // Walk step by step with explicit indices (never re-locating), so float error at a
  // boundary cannot stall the walk. A hold trace's last step has positive bandwidth,
  // a periodic trace has some, so the loop ends.
  for (;;) {
    const endS = index < last ? baseS + starts[index + 1]! : trace.periodS === null ? Infinity : baseS + trace.periodS;
    const rate = capKbps === null ? bandwidth[index]! : Math.min(capKbps, bandwidth[index]!);
    if (rate > 0) {
      const deliverable = rate * (endS - t);
      if (deliverable >= remaining) return t + remaining / rate;
      remaining -= deliverable;
    }
    t = endS;
    if (index < last) {
      index += 1;
    } else {
      index = 0;
      baseS += trace.periodS!;
    }
  }
}

/** Calls `visit` with each step's bandwidth, the seconds of it within [fromS, toS) and where they start. */
export function walkSteps(trace: Trace, fromS: number, toS: number, visit: (bandwidthKbps: number, seconds: number, atS: number) => void): void {
  const starts = trace.stepStartS;
  const last = starts.length - 1;
  let { index, baseS } = locate(trace, fromS);
  let t = fromS;
  while (t < toS) {
    const endS = Math.min(toS, index < last ? baseS + starts[index + 1]! : trace.periodS === null ? Infinity : baseS + trace.periodS);
    visit(trace.bandwidthKbps[index]!, endS - t, t);
    t = endS;
    if (index < last) {
      index += 1;
    } else {
      index = 0;
      baseS += trace.periodS ?? 0;
    }
  }
}

/** Kbits the link can carry in [fromS, toS) at min(cap, available bandwidth). */
export function capacityKbits(trace: Trace, fromS: number, toS: number, capKbps: number | null = null): number {
  let kbits = 0;
  walkSteps(trace, fromS, toS, (bandwidth, seconds) => {
    kbits += (capKbps === null ? bandwidth : Math.min(capKbps, bandwidth)) * seconds;
  });
  return kbits;
}

/**
 * Seconds of [fromS, toS) in which a download paced at `capKbps` (null: unpaced) runs
 * at the link's full capacity: the available bandwidth is at most the cap. In front of
 * a real link these are the times a download keeps the bottleneck's queue filling, and
 * every flow sharing it waits; under the cap, the queue drains.
 */
export function linkFilledS(trace: Trace, fromS: number, toS: number, capKbps: number | null): number {
  let seconds = 0;
  walkSteps(trace, fromS, toS, (bandwidth, s) => {
    if (capKbps === null || bandwidth <= capKbps) seconds += s;
  });
  return seconds;
}

/** Mean available bandwidth over [0, horizonS) (default: one period, or up to the last step plus 1 s). */
export function meanBandwidthKbps(trace: Trace, horizonS?: number): number {
  const endS = horizonS ?? trace.periodS ?? trace.stepStartS[trace.stepStartS.length - 1]! + 1;
  return capacityKbits(trace, 0, endS) / endS;
}

/**
 * The link as a chunk download sees it: every step's bandwidth times `efficiency`, in
 * (0, 1]. The fluid link carries a download at the trace's full capacity after one
 * request latency; a real TCP connection carries less of it (a shallow queue's losses
 * and the congestion window's recovery from them, slow start after a gap). At 1 the
 * trace is returned as it is; otherwise its name says the efficiency (`NAME@0.85`), so
 * a corpus can hold the same trace at several.
 */
export function atLinkEfficiency(trace: Trace, efficiency: number): Trace {
  if (!(efficiency > 0 && efficiency <= 1)) throw new SimError('SIM_BAD_ARGS', `a link efficiency must be in (0, 1], got ${efficiency}`);
  if (efficiency === 1) return trace;
  return { ...trace, name: `${trace.name}@${efficiency}`, bandwidthKbps: trace.bandwidthKbps.map((kbps) => kbps * efficiency) };
}
