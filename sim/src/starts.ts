/**
 * Sessions that start all along one pass of a trace. A lab session covers a short
 * stretch of a long trace (60 s of the 928 s UMTS trace), and which stretch decides
 * most of what it measures: a session that starts in an outage stalls whatever the
 * arm. Running every arm from every `everyS` seconds of the trace says how the arms
 * compare over the whole trace, and start by start (each arm's session against
 * control's from the same point: the same network, as the lab pairs its trials).
 */
import type { SegmentsSidecar } from '@sammy/encoder/sidecar';
import { armFactory, type ArmOptions, type SimArm } from './arms/index.js';
import { SimError } from './errors.js';
import { simulateSession } from './session.js';
import { mean } from './stats.js';
import { startTraceAt, type Trace } from './trace.js';

/** A session rebuffered more (or less) than control's from the same start when the two differ by more than this. */
export const STALL_TOLERANCE_S = 0.1;

/** The most starts one run takes (a session takes about a millisecond per arm; this is minutes). */
export const MAX_STARTS = 100_000;

/** What one session from one start measured. */
export interface StartSession {
  rebufferS: number;
  avgBitrateKbps: number;
  chunkThroughputKbps: number | null;
  switchCount: number;
  /** A neighbour's mean delay beside it, in full queues (session.ts `neighbourDelayQueues`). */
  neighbourDelayQueues: number;
}

export interface StartRow {
  startS: number;
  sessions: Partial<Record<SimArm, StartSession>>;
}

/** Each arm against control's session from the same start (absent without a control arm). */
export interface AgainstControl {
  /** Starts where the arm rebuffered more than control by over STALL_TOLERANCE_S, and less. */
  rebufferedMore: number;
  rebufferedLess: number;
  /** Starts where its time-average bitrate was below control's, and above it. */
  bitrateLower: number;
  bitrateHigher: number;
  /** Starts where a neighbour's delay beside it was below that beside control, and above it. */
  neighbourDelayLower: number;
  neighbourDelayHigher: number;
}

export interface ArmStartsSummary {
  arm: SimArm;
  /** Means over the starts. */
  rebufferS: number;
  avgBitrateKbps: number;
  /** Mean over the starts with playing-phase chunks; null with none. */
  chunkThroughputKbps: number | null;
  switchCount: number;
  neighbourDelayQueues: number;
  /** Starts whose session stalled at all. */
  stalledStarts: number;
  againstControl: AgainstControl | null;
}

export interface StartsResult {
  /** One pass of the trace: its period, or where its last (held) step begins. */
  passS: number;
  spacing: StartSpacing;
  rows: StartRow[];
  summary: ArmStartsSummary[];
}

/** Every so many seconds, or so many starts spread evenly over one pass. */
export type StartSpacing = { everyS: number } | { count: number };

export interface StartsOptions {
  trace: Trace;
  sidecar: SegmentsSidecar;
  arms: readonly SimArm[];
  armOptions: ArmOptions;
  durationS: number;
  spacing: StartSpacing;
}

/** One pass of the trace in seconds: a periodic trace's period, else where its last step (held forever) begins. */
export function tracePassS(trace: Trace): number {
  return trace.periodS ?? trace.stepStartS[trace.stepStartS.length - 1]!;
}

/**
 * Where the sessions start: 0, every, 2 x every, ... below one pass of the trace; or
 * `count` starts spread evenly over it (start k at k / count of the pass, as the lab's
 * `"traceStart": "spread"` places its trials). Rounded to the microsecond.
 */
export function startPointsS(trace: Trace, spacing: StartSpacing): number[] {
  const passS = tracePassS(trace);
  if (!(passS > 0)) throw new SimError('SIM_BAD_ARGS', `${trace.name} is one rate from its start: every start meets the same link`);
  const atUs = (s: number): number => Math.round(s * 1e6) / 1e6;
  const tooMany = (n: number): SimError => new SimError('SIM_BAD_ARGS', `that is ${n} starts over the trace's ${passS} s; at most ${MAX_STARTS}`);
  if ('count' in spacing) {
    if (!Number.isInteger(spacing.count) || spacing.count < 1) throw new SimError('SIM_BAD_ARGS', `--starts must be a positive whole number, got ${spacing.count}`);
    if (spacing.count > MAX_STARTS) throw tooMany(spacing.count);
    return Array.from({ length: spacing.count }, (_, k) => atUs((k * passS) / spacing.count));
  }
  const { everyS } = spacing;
  if (!(everyS > 0) || !Number.isFinite(everyS)) throw new SimError('SIM_BAD_ARGS', `--every-s must be a positive number of seconds, got ${everyS}`);
  const count = Math.ceil((passS - 1e-9) / everyS);
  if (count > MAX_STARTS) throw tooMany(count);
  const starts: number[] = [];
  // Integer steps, so 0.1 x 3 does not drift.
  for (let k = 0; k * everyS < passS - 1e-9; k++) starts.push(atUs(k * everyS));
  return starts;
}

export function runStarts(o: StartsOptions): StartsResult {
  if (o.arms.length === 0) throw new SimError('SIM_BAD_ARGS', '--arms must name at least one arm');
  const rows: StartRow[] = startPointsS(o.trace, o.spacing).map((startS) => {
    const trace = startTraceAt(o.trace, startS);
    const sessions: StartRow['sessions'] = {};
    for (const arm of o.arms) {
      const q = simulateSession({ trace, sidecar: o.sidecar, durationS: o.durationS, arm: armFactory(arm, o.armOptions) });
      sessions[arm] = { rebufferS: q.rebufferS, avgBitrateKbps: q.avgBitrateKbps, chunkThroughputKbps: q.chunkThroughputKbps, switchCount: q.switchCount, neighbourDelayQueues: q.sim.neighbourDelayQueues };
    }
    return { startS, sessions };
  });
  const summary = o.arms.map((arm): ArmStartsSummary => {
    const own = rows.map((r) => r.sessions[arm]!);
    const throughputs = own.map((s) => s.chunkThroughputKbps).filter((v): v is number => v !== null);
    const against = (): AgainstControl | null => {
      if (arm === 'control' || !o.arms.includes('control')) return null;
      const pairs = rows.map((r) => [r.sessions[arm]!, r.sessions.control!] as const);
      return {
        rebufferedMore: pairs.filter(([a, c]) => a.rebufferS > c.rebufferS + STALL_TOLERANCE_S).length,
        rebufferedLess: pairs.filter(([a, c]) => a.rebufferS < c.rebufferS - STALL_TOLERANCE_S).length,
        bitrateLower: pairs.filter(([a, c]) => a.avgBitrateKbps < c.avgBitrateKbps).length,
        bitrateHigher: pairs.filter(([a, c]) => a.avgBitrateKbps > c.avgBitrateKbps).length,
        neighbourDelayLower: pairs.filter(([a, c]) => a.neighbourDelayQueues < c.neighbourDelayQueues).length,
        neighbourDelayHigher: pairs.filter(([a, c]) => a.neighbourDelayQueues > c.neighbourDelayQueues).length,
      };
    };
    return {
      arm,
      rebufferS: mean(own.map((s) => s.rebufferS))!,
      avgBitrateKbps: mean(own.map((s) => s.avgBitrateKbps))!,
      chunkThroughputKbps: mean(throughputs),
      switchCount: mean(own.map((s) => s.switchCount))!,
      neighbourDelayQueues: mean(own.map((s) => s.neighbourDelayQueues))!,
      stalledStarts: own.filter((s) => s.rebufferS > 0).length,
      againstControl: against(),
    };
  });
  return { passS: tracePassS(o.trace), spacing: o.spacing, rows, summary };
}

const fixed = (v: number | null, digits: number): string => (v === null ? '–' : v.toFixed(digits));

/** The summary table, then one row per start. */
export function startsMarkdown(result: StartsResult, title: string): string {
  const control = result.summary.find((s) => s.arm === 'control');
  const ratio = (v: number, c: number | null | undefined): string => (c ? ` (${(v / c).toFixed(2)}x)` : '');
  const change = (v: number | null, c: number | null | undefined): string => (v !== null && c ? ` (${(((v - c) / c) * 100).toFixed(1)}%)` : '');
  const lines = [
    `# ${title}`,
    '',
    `${result.rows.length} sessions per arm, ${'count' in result.spacing ? 'spread evenly over' : `one from every ${result.spacing.everyS} s of`} the trace's ${result.passS.toFixed(1)} s pass. Means over the starts; against control: in how many starts the arm's session did worse or better than control's from the same start (rebuffering by more than ${STALL_TOLERANCE_S} s). Neighbour delay: the mean delay of a neighbour sending a ninth of the trace's mean rate, in full queues at that rate (src/neighbour.ts).`,
    '',
    '| arm | rebuffer time (s) | starts with a stall | time-average bitrate (kbps) | playing-phase chunk throughput (kbps) | switches | neighbour delay (full queues) | rebuffered more / less than control | bitrate lower / higher than control | neighbour delay lower / higher than control |',
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
    ...result.summary.map((s) => {
      const a = s.againstControl;
      return `| ${s.arm} | ${s.rebufferS.toFixed(2)} | ${s.stalledStarts} of ${result.rows.length} | ${s.avgBitrateKbps.toFixed(0)}${s.arm === 'control' ? '' : ratio(s.avgBitrateKbps, control?.avgBitrateKbps)} | ${fixed(s.chunkThroughputKbps, 0)}${s.arm === 'control' ? '' : change(s.chunkThroughputKbps, control?.chunkThroughputKbps)} | ${s.switchCount.toFixed(1)} | ${s.neighbourDelayQueues.toFixed(3)} | ${a ? `${a.rebufferedMore} / ${a.rebufferedLess}` : '–'} | ${a ? `${a.bitrateLower} / ${a.bitrateHigher}` : '–'} | ${a ? `${a.neighbourDelayLower} / ${a.neighbourDelayHigher}` : '–'} |`;
    }),
    '',
    `| start (s) | ${result.summary.map((s) => `${s.arm}: rebuffer s, kbps`).join(' | ')} |`,
    `| --- | ${result.summary.map(() => '---').join(' | ')} |`,
    ...result.rows.map((r) => `| ${r.startS} | ${result.summary.map((s) => { const x = r.sessions[s.arm]!; return `${x.rebufferS.toFixed(2)}, ${x.avgBitrateKbps.toFixed(0)}`; }).join(' | ')} |`),
    '',
  ];
  return lines.join('\n');
}
