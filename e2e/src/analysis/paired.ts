/**
 * Paired comparisons: each arm's session against control's session of the same trial
 * and experiment. Where the trials differ by design (a trace link whose trials start at
 * different points of the trace, `link.traceStart: spread`), most of the spread between
 * trials is the network's, and an arm's mean against control's mean carries it twice;
 * the difference within each trial does not.
 */
import { experimentName, type TrialRecord } from './result.js';
import { ci95, mean } from './stats.js';

export interface PairedDifference {
  /** Mean over trials of (arm - control); null with no pair. */
  mean: number | null;
  /** 95% confidence interval of that mean (Student's t over the pairs); [mean, mean] with one pair. */
  ci95: [number, number] | null;
  /** Trials where both sessions have the metric. */
  n: number;
  /** Of those, where the arm's value was below control's, and above it. */
  lower: number;
  higher: number;
}

/** `metric` of `arm` minus control's, per trial of experiment `experiment`, over the sessions without an error. */
export function pairedDifference(trials: TrialRecord[], experiment: string, arm: string, metric: string, controlArm = 'control'): PairedDifference {
  return pairedDifferenceOf(trials, experiment, arm, (t) => (t.metrics as unknown as Record<string, number | null | undefined>)[metric], controlArm);
}

/** The same for any value of a session (`value`; null or not finite: the session has none). */
export function pairedDifferenceOf(trials: TrialRecord[], experiment: string, arm: string, value: (t: TrialRecord) => number | null | undefined, controlArm = 'control'): PairedDifference {
  const valueOf = (a: string, trial: number): number | null => {
    const t = trials.find((r) => r.trial === trial && r.arm === a && experimentName(r) === experiment && r.error === null);
    const v = t ? value(t) : null;
    return typeof v === 'number' && Number.isFinite(v) ? v : null;
  };
  const differences: number[] = [];
  for (const trial of [...new Set(trials.map((t) => t.trial))].sort((a, b) => a - b)) {
    const a = valueOf(arm, trial);
    const c = valueOf(controlArm, trial);
    if (a !== null && c !== null) differences.push(a - c);
  }
  return {
    mean: mean(differences), ci95: ci95(differences), n: differences.length,
    lower: differences.filter((d) => d < 0).length, higher: differences.filter((d) => d > 0).length,
  };
}
