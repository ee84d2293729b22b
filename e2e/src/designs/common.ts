/** Pieces the session-based designs share: a staggered population, per-metric values, initial bitrate. */
import type { SessionQoE } from '@sammy/player/abr';
import { tcpThroughputMbps } from '../scenario/neighbour-kinds.js';
import { acrossTrials, seededRandom, shuffled, type Estimate } from './estimators.js';
import { DESIGN_METRICS, type AbDesign, type DesignBase, type DesignMetric, type DesignRun, type FlowOutcome, type PlannedRun, type PlannedSession, type SessionOutcome, type DesignScenario } from './types.js';

/**
 * Media seconds whose bitrate is the "initial bitrate": the thesis measures initial
 * quality over the first twenty seconds of playback (section 2.5.2).
 */
export const INITIAL_MEDIA_S = 20;

/** Mean bitrate of the segments covering the first `mediaS` of the video (the last download of each index), or null. */
export function initialBitrateKbps(qoe: Pick<SessionQoE, 'chunks'> | null, segmentS: number, mediaS = INITIAL_MEDIA_S): number | null {
  if (!qoe) return null;
  const last = new Map<number, number>();
  for (const c of qoe.chunks) if (c.index * segmentS < mediaS) last.set(c.index, c.bitrateKbps);
  if (last.size === 0) return null;
  return [...last.values()].reduce((a, b) => a + b, 0) / last.size;
}

/** The device a session of `arm` uses: one per arm, as the lab's per-arm history (or reset every session). */
export function armDevice(s: DesignScenario, arm: string): { device: string; resetHistory: boolean } {
  return { device: `arm-${arm}`, resetHistory: s.history === 'per-session' };
}

/** An A/B run: `sessions` viewers starting `staggerS` apart, round(share x N) of them on the treatment, at random positions. */
export function abRun(d: DesignBase, s: DesignScenario, trial: number, share: number): PlannedRun {
  const k = Math.round(share * d.sessions);
  const random = seededRandom(d.seed * 1_000_003 + trial * 1009 + Math.round(share * 1000));
  const treated = new Set(shuffled([...Array(d.sessions).keys()], random).slice(0, k));
  const sessions: PlannedSession[] = [...Array(d.sessions).keys()].map((i) => {
    const role = treated.has(i) ? 'treatment' : 'control';
    const arm = role === 'treatment' ? d.treatment : d.control;
    return { id: `t${trial}-p${share}-s${i}`, arm, role, ...armDevice(s, arm), startS: i * d.staggerS, playS: s.playS, measured: true };
  });
  return { label: `share-${share}`, trial, share, purpose: 'ab', sessions, flows: [], lengthS: (d.sessions - 1) * d.staggerS + s.playS };
}

/** The shares of a trial in a random order (a share never always runs first, or last). */
export function shareOrder(d: AbDesign | { shares: number[]; seed: number }, trial: number): number[] {
  return shuffled(d.shares, seededRandom(d.seed * 7919 + trial));
}

/**
 * Why a session counts as failed, or null: the player's own error, no QoE record, or
 * no first frame. A session that never started playing has no rebuffering or bitrate
 * to average (its record says 0 of both), so it is left out of every estimate and
 * listed with the failures instead.
 */
export function sessionError(error: string | null | undefined, qoe: Pick<SessionQoE, 'playDelayS'> | null): string | null {
  if (error) return error;
  if (qoe === null) return 'no QoE record';
  return qoe.playDelayS === null ? 'no first frame' : null;
}

type Values = ReadonlyArray<number | null | undefined>;

export function valuesOf(sessions: readonly SessionOutcome[], metric: DesignMetric): Values {
  return sessions.filter((x) => x.measured && x.error === null).map((x) => x.metrics[metric]);
}

export function trialsOf(runs: readonly DesignRun[]): number[] {
  return [...new Set(runs.map((r) => r.trial))].sort((a, b) => a - b);
}

/** Treatment vs control sessions within the runs that `pick` selects in each trial. */
export function withinRuns(runs: readonly DesignRun[], pick: (r: DesignRun) => boolean, metric: DesignMetric): Estimate {
  return acrossTrials(
    trialsOf(runs).map((trial) => {
      const sessions = runs.filter((r) => r.trial === trial && pick(r)).flatMap((r) => r.sessions);
      return { treatment: valuesOf(sessions.filter((x) => x.role === 'treatment'), metric), control: valuesOf(sessions.filter((x) => x.role === 'control'), metric) };
    }),
  );
}

/** The total treatment effect: the all-treatment run against the all-control run of each trial. */
export function tteOf(runs: readonly DesignRun[], metric: DesignMetric): Estimate | null {
  const groups = trialsOf(runs).flatMap((trial) => {
    const all = runs.find((r) => r.trial === trial && r.purpose === 'ab' && r.share === 1);
    const none = runs.find((r) => r.trial === trial && r.purpose === 'ab' && r.share === 0);
    return all && none ? [{ treatment: valuesOf(all.sessions, metric), control: valuesOf(none.sessions, metric) }] : [];
  });
  return groups.length === 0 ? null : acrossTrials(groups);
}

export function emptyEstimates(): Record<DesignMetric, { tte: null; ab: []; switchback: null; history: null }> {
  return Object.fromEntries(DESIGN_METRICS.map((m) => [m, { tte: null, ab: [], switchback: null, history: null }])) as never;
}

/**
 * A bulk flow's mean Mbit/s over [fromMs, windowMs] of its run, from its raw record. The
 * HTTP loop counts the completed responses' bytes pro rata over the window (one still in
 * flight at the end is not seen); with none completed in the window it is null (unknown,
 * not zero).
 */
export function flowThroughputMbps(raw: FlowOutcome['raw'], windowMs: number, fromMs: number): number | null {
  if (!raw) return null;
  if (raw.kind === 'tcp') return tcpThroughputMbps(raw.samples, fromMs, windowMs);
  if (raw.kind === 'http') {
    let bytes = 0;
    let seen = false;
    for (const [startMs, ms, size] of raw.requests) {
      const overlap = Math.min(startMs + ms, windowMs) - Math.max(startMs, fromMs);
      if (overlap > 0) {
        bytes += (size * overlap) / Math.max(ms, 1e-3);
        seen = true;
      }
    }
    return seen ? (bytes * 8) / ((windowMs - fromMs) / 1000) / 1e6 : null;
  }
  return null;
}

/** The runs with each flow's throughput derived again from its raw record (a result re-rendered uses today's rules). */
export function withFlowThroughput(runs: readonly DesignRun[], measureFromS: number): DesignRun[] {
  return runs.map((r) => ({ ...r, flows: r.flows.map((f) => ({ ...f, throughputMbps: f.error === null ? flowThroughputMbps(f.raw, r.lengthS * 1000, measureFromS * 1000) : null })) }));
}
