/**
 * `switchback`: time is cut into intervals, each all-treatment or all-control (half of
 * each, in random order). Viewers arrive every playS / N seconds, so about N play at
 * once, and each plays the arm of the interval it starts in. A viewer that starts
 * within `washoutS` of a switch still plays (the load stays) but is not measured: the
 * previous interval's viewers are still on the link. Nor is one that would play past
 * its interval's end. The estimate compares the per-interval means of treatment and
 * control intervals; the trial also runs shares 0 and 1 of the A/B design for the TTE
 * beside it.
 */
import { abRun, emptyEstimates, armDevice, trialsOf, tteOf } from './common.js';
import { acrossTrials, biasPoints, seededRandom, shuffled } from './estimators.js';
import type { DesignSpec } from './spec.js';
import { DESIGN_METRICS, type DesignRun, type PlannedRun, type PlannedSession, type SwitchbackDesign, type DesignScenario } from './types.js';
import { mean } from '../stats.js';

/** Startup allowance: a measured viewer's play request, first frame and playS all fit in its interval. */
const STARTUP_ALLOWANCE_S = 2;

export function switchbackRun(d: SwitchbackDesign, s: DesignScenario, trial: number): PlannedRun {
  const half = Math.floor(d.intervals / 2);
  const arms = shuffled([...Array(d.intervals).keys()].map((i) => (i < half ? 'treatment' : 'control') as 'treatment' | 'control'), seededRandom(d.seed * 104_729 + trial));
  const spacingS = s.playS / d.sessions;
  const totalS = d.intervals * d.intervalS;
  const sessions: PlannedSession[] = [];
  for (let i = 0, startS = 0; startS + s.playS <= totalS + 1e-9; i++, startS = i * spacingS) {
    const interval = Math.min(d.intervals - 1, Math.floor(startS / d.intervalS + 1e-9));
    const role = arms[interval]!;
    const arm = role === 'treatment' ? d.treatment : d.control;
    const intoS = startS - interval * d.intervalS;
    const measured = intoS >= d.washoutS - 1e-9 && intoS + STARTUP_ALLOWANCE_S + s.playS <= d.intervalS + 1e-9;
    sessions.push({ id: `t${trial}-sb-s${i}`, arm, role, ...armDevice(s, arm), startS: Math.round(startS * 1000) / 1000, playS: s.playS, measured, interval });
  }
  return { label: 'switchback', trial, purpose: 'switchback', intervalArms: arms, sessions, flows: [], lengthS: totalS };
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
  plan: (d, s, trial) => [abRun(d, s, trial, 0), switchbackRun(d, s, trial), abRun(d, s, trial, 1)],
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
