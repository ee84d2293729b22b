/**
 * The estimators of the experiment designs (Spang et al., "Unbiased Experiments in
 * Congested Networks", IMC 2021): pure functions of per-session (or per-interval)
 * values, so a design's numbers can be checked by hand. Every estimate is a percent
 * change, treatment against control: 100 (mean_T / mean_C - 1).
 */
import tQuantile from '@stdlib/stats-base-dists-t-quantile';
import { xoroshiro128plus } from 'pure-rand';
import { mean } from '../analysis/stats.js';

export interface Estimate {
  /** 100 (mean_T / mean_C - 1); null without values on both sides or with a control mean of 0. */
  pct: number | null;
  /** 95% confidence interval of pct; null when it cannot be computed (fewer than 2 values on a side, or 2 trials' worth). */
  ci95: [number, number] | null;
  /** Units on each side (sessions, intervals or trials, as the estimator says). */
  n: { treatment: number; control: number };
}

function variance(values: number[]): number | null {
  const m = mean(values);
  if (m === null || values.length < 2) return null;
  return values.reduce((a, v) => a + (v - m) ** 2, 0) / (values.length - 1);
}

const finite = (values: ReadonlyArray<number | null | undefined>): number[] => values.filter((v): v is number => typeof v === 'number' && Number.isFinite(v));

/**
 * The ratio of two independent sample means as a percent change, with a delta-method
 * 95% interval: Var(mT/mC) ~ r^2 (vT / (nT mT^2) + vC / (nC mC^2)), the t quantile at the
 * Welch-Satterthwaite degrees of freedom of the two relative variances.
 */
export function ratioOfMeans(treatment: ReadonlyArray<number | null | undefined>, control: ReadonlyArray<number | null | undefined>): Estimate {
  const t = finite(treatment);
  const c = finite(control);
  const n = { treatment: t.length, control: c.length };
  const mT = mean(t);
  const mC = mean(c);
  if (mT === null || mC === null || mC === 0) return { pct: null, ci95: null, n };
  const r = mT / mC;
  const pct = 100 * (r - 1);
  const vT = variance(t);
  const vC = variance(c);
  if (vT === null || vC === null) return { pct, ci95: null, n };
  // Relative variance of each mean; a side whose mean is 0 has an undefined relative variance.
  if (mT === 0) return { pct, ci95: null, n };
  const a = vT / (t.length * mT * mT);
  const b = vC / (c.length * mC * mC);
  const se = 100 * Math.abs(r) * Math.sqrt(a + b);
  if (se === 0) return { pct, ci95: [pct, pct], n };
  const df = (a + b) ** 2 / (a * a / (t.length - 1) + b * b / (c.length - 1));
  const q = tQuantile(0.975, df);
  return { pct, ci95: [pct - q * se, pct + q * se], n };
}

/**
 * Repeated trials: each trial's own estimate (treatment vs control within the trial),
 * then their mean with a Student-t interval over trials. The trials are the independent
 * units: sessions that share a bottleneck in one run are not independent of each other.
 * With fewer than two trials that give an estimate, the sessions of all trials are
 * pooled into one `ratioOfMeans` (its interval then treats them as independent).
 */
export function acrossTrials(groups: ReadonlyArray<{ treatment: ReadonlyArray<number | null | undefined>; control: ReadonlyArray<number | null | undefined> }>): Estimate {
  const per = groups.map((g) => ratioOfMeans(g.treatment, g.control).pct).filter((p): p is number => p !== null);
  const n = { treatment: per.length, control: per.length };
  if (per.length < 2) return ratioOfMeans(groups.flatMap((g) => [...g.treatment]), groups.flatMap((g) => [...g.control]));
  const m = mean(per)!;
  const sd = Math.sqrt(variance(per)!);
  const half = tQuantile(0.975, per.length - 1) * (sd / Math.sqrt(per.length));
  return { pct: m, ci95: [m - half, m + half], n };
}

/** The bias of an estimate against the TTE, in percentage points; null when either is missing. */
export function biasPoints(estimate: Estimate, tte: Estimate): number | null {
  return estimate.pct === null || tte.pct === null ? null : estimate.pct - tte.pct;
}

/**
 * Max-min fair shares of `capacity` among flows with demands (a flow that wants less
 * than an equal split gets what it wants; the rest is split again among the others):
 * water-filling. Demands of Infinity are bulk flows.
 */
export function maxMinFair(capacity: number, demands: readonly number[]): number[] {
  const share = demands.map(() => 0);
  let left = capacity;
  let open = demands.map((_, i) => i);
  while (open.length > 0 && left > 1e-12) {
    const equal = left / open.length;
    const satisfied = open.filter((i) => demands[i]! - share[i]! <= equal);
    if (satisfied.length === 0) {
      for (const i of open) share[i] = share[i]! + equal;
      left = 0;
      break;
    }
    for (const i of satisfied) {
      left -= demands[i]! - share[i]!;
      share[i] = demands[i]!;
    }
    open = open.filter((i) => !satisfied.includes(i));
  }
  return share;
}

/** SplitMix32's finaliser: spreads a small seed over all 32 bits. */
function mix32(x: number): number {
  let z = (x + 0x9e3779b9) | 0;
  z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
  z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
  return (z ^ (z >>> 16)) >>> 0;
}

/** Draws thrown away after seeding, so the state has left its seed's pattern behind. */
const WARM_UP_DRAWS = 16;

/**
 * Uniform in [0, 1) from pure-rand's xoroshiro128+ (as the simulator's trace
 * generator): the same seed gives the same assignment. xoroshiro128+ seeded with a
 * small integer starts from a state of mostly ones and zeros, and its first draws then
 * sit near 1.0 (seeds 1-1000 gave 0.99+ as the first draw), which kept the last item of
 * every Fisher-Yates shuffle in place; so the seed is hashed first and the first
 * draws are discarded.
 */
export function seededRandom(seed: number): () => number {
  const generator = xoroshiro128plus(mix32(seed));
  for (let i = 0; i < WARM_UP_DRAWS; i++) generator.unsafeNext();
  return () => (generator.unsafeNext() >>> 0) / 4294967296;
}

/** Fisher-Yates with `random`. */
export function shuffled<T>(items: readonly T[], random: () => number): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}
