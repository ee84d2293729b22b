/**
 * `switchback`: time is cut into intervals, each all-treatment or all-control (half of
 * each, in random order). Viewers arrive every playS / N seconds, so about N play at
 * once, and each plays the arm of the interval it starts in. A viewer that starts
 * within `washoutS` of a switch still plays (the load stays) but is not measured: the
 * previous interval's viewers are still on the link. Nor is one that would play past
 * its interval's end. The estimate compares the per-interval means of treatment and
 * control intervals. Beside it each trial measures the TTE under the same arrivals: one
 * interval with everyone on control and one with everyone on the treatment, the
 * viewers that start after the washout measured (the ramp-up from an empty link stands
 * in for the switch), arrivals going on until the last of them finishes. (A/B-style
 * runs, ten viewers arriving together, would give the TTE of another load: with viewers
 * arriving all the time, some are always in their unpaced start.)
 */
import { emptyEstimates, armDevice, trialsOf, tteOf } from './common.js';
import { acrossTrials, biasPoints, seededRandom, shuffled } from './estimators.js';
import type { DesignSpec } from './spec.js';
import { DESIGN_METRICS, type DesignRun, type PlannedRun, type PlannedSession, type SwitchbackDesign, type DesignScenario } from './types.js';
import { mean } from '../analysis/stats.js';

/** Startup allowance: a measured viewer's play request, first frame and playS all fit in its interval. */
const STARTUP_ALLOWANCE_S = 2;

type Role = 'treatment' | 'control';

/** Viewers arriving every playS / N seconds through `arms.length` intervals (and `tailS` more, unmeasured), each on its interval's arm. */
function arrivals(d: SwitchbackDesign, s: DesignScenario, trial: number, arms: readonly Role[], idPart: string, tailS: number): PlannedSession[] {
  const spacingS = s.playS / d.sessions;
  const totalS = arms.length * d.intervalS + tailS;
  const sessions: PlannedSession[] = [];
  for (let i = 0, startS = 0; startS + s.playS <= totalS + 1e-9; i++, startS = i * spacingS) {
    const interval = Math.min(arms.length - 1, Math.floor(startS / d.intervalS + 1e-9));
    const role = arms[interval]!;
    const arm = role === 'treatment' ? d.treatment : d.control;
    const intoS = startS - interval * d.intervalS;
    const measured = intoS >= d.washoutS - 1e-9 && intoS + STARTUP_ALLOWANCE_S + s.playS <= d.intervalS + 1e-9;
    sessions.push({ id: `t${trial}-${idPart}-s${i}`, arm, role, ...armDevice(s, arm), startS: Math.round(startS * 1000) / 1000, playS: s.playS, measured, interval });
  }
  return sessions;
}

export function switchbackRun(d: SwitchbackDesign, s: DesignScenario, trial: number): PlannedRun {
  const half = Math.floor(d.intervals / 2);
  const arms = shuffled([...Array(d.intervals).keys()].map((i) => (i < half ? 'treatment' : 'control') as Role), seededRandom(d.seed * 104_729 + trial));
  return { label: 'switchback', trial, purpose: 'switchback', intervalArms: arms, sessions: arrivals(d, s, trial, arms, 'sb', 0), flows: [], lengthS: d.intervals * d.intervalS };
}

/**
 * The TTE's side for `share` 0 (everyone on control) or 1 (everyone on the treatment):
 * one interval of the switchback's arrivals, which go on for playS more so that the
 * last measured viewer plays among as many as in the switchback.
 */
export function switchbackTteRun(d: SwitchbackDesign, s: DesignScenario, trial: number, share: 0 | 1): PlannedRun {
  const sessions = arrivals(d, s, trial, [share === 1 ? 'treatment' : 'control'], `p${share}`, s.playS).map(({ interval: _, ...x }) => x);
  return { label: `share-${share}`, trial, share, purpose: 'ab', sessions, flows: [], lengthS: d.intervalS + s.playS };
}

/** Per trial: the mean of each measured interval, treatment intervals against control intervals. */
export function switchbackEstimate(runs: readonly DesignRun[], metric: (typeof DESIGN_METRICS)[number]) {
  return acrossTrials(
    trialsOf(runs).flatMap((trial) => {
      const run = runs.find((r) => r.trial === trial && r.purpose === 'switchback');
      if (!run) return [];
      const byInterval = new Map<number, number[]>();
      for (const x of run.sessions) {
        const v = x.metrics[metric];
        if (!x.measured || x.error !== null || typeof v !== 'number' || !Number.isFinite(v)) continue;
        byInterval.set(x.interval!, [...(byInterval.get(x.interval!) ?? []), v]);
      }
      const side = (role: 'treatment' | 'control') => [...byInterval.entries()].filter(([i]) => run.intervalArms![i] === role).map(([, v]) => mean(v));
      return [{ treatment: side('treatment'), control: side('control') }];
    }),
  );
}

export const SWITCHBACK_DESIGN: DesignSpec<SwitchbackDesign> = {
  description: 'random all-treatment / all-control intervals with a washout after each switch, beside the TTE',
  fields: ['intervalS', 'intervals', 'washoutS'],
  sessionsBased: true,
  parse(o, path, c, ctx, base) {
    const washoutS = c.num(o, path, 'washoutS', 0, 3600, ctx.playS);
    const intervalS = c.num(o, path, 'intervalS', 1, 36_000, 3 * ctx.playS);
    if (intervalS < washoutS + ctx.playS + STARTUP_ALLOWANCE_S) c.bad(`${path}.intervalS`, intervalS, `at least washoutS + session.playS + ${STARTUP_ALLOWANCE_S} (${washoutS + ctx.playS + STARTUP_ALLOWANCE_S}) so some viewers of each interval are measured`);
    return { ...base, design: 'switchback', intervalS, intervals: c.int(o, path, 'intervals', 2, 1000, 8), washoutS };
  },
  plan: (d, s, trial) => [switchbackTteRun(d, s, trial, 0), switchbackRun(d, s, trial), switchbackTteRun(d, s, trial, 1)],
  summarize(_d, runs) {
    const out: ReturnType<DesignSpec<SwitchbackDesign>['summarize']>['metrics'] = {};
    const empty = emptyEstimates();
    for (const m of DESIGN_METRICS) {
      const tte = tteOf(runs, m);
      const sb = switchbackEstimate(runs, m);
      out[m] = { ...empty[m], tte, switchback: { ...sb, biasPoints: tte ? biasPoints(sb, tte) : null } };
    }
    return { metrics: out };
  },
};
