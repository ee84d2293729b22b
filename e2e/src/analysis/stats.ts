/**
 * The summary statistics of a lab run: mean, a 95% confidence interval from
 * Student's t (trials are few), and the change against the control arm.
 */
import tQuantile from '@stdlib/stats-base-dists-t-quantile';

export interface MetricSummary {
  mean: number | null;
  /** 95% confidence interval of the mean; [mean, mean] with one value, null with none. */
  ci95: [number, number] | null;
  n: number;
  /** (mean - control mean) / control mean x 100; null for control itself or without a control value. */
  changeVsControlPct: number | null;
}

export function round(v: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(v * f) / f;
}

/** A number with `digits` decimals for a log line, or '-' when there is none. */
export function fixed(v: number | null | undefined, digits = 1): string {
  return typeof v === 'number' ? v.toFixed(digits) : '-';
}

export function mean(values: number[]): number | null {
  return values.length === 0 ? null : values.reduce((a, b) => a + b, 0) / values.length;
}

/** Sample standard deviation (n - 1). */
export function stddev(values: number[]): number | null {
  const m = mean(values);
  if (m === null || values.length < 2) return null;
  return Math.sqrt(values.reduce((a, v) => a + (v - m) ** 2, 0) / (values.length - 1));
}

export function ci95(values: number[]): [number, number] | null {
  const m = mean(values);
  if (m === null) return null;
  const s = stddev(values);
  if (s === null) return [m, m];
  const half = tQuantile(0.975, values.length - 1) * (s / Math.sqrt(values.length));
  return [m - half, m + half];
}

export function percentChange(value: number | null, reference: number | null): number | null {
  if (value === null || reference === null || reference === 0) return null;
  return ((value - reference) / Math.abs(reference)) * 100;
}

export function quantile(values: number[], q: number): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const pos = (sorted.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return sorted[lo]! + (sorted[hi]! - sorted[lo]!) * (pos - lo);
}

/**
 * `values[arm][metric]` -> `summary[arm][metric]`; missing (null/undefined) values are
 * left out of n. The control arm is `control` when present.
 */
export function summarize(values: Record<string, Record<string, Array<number | null | undefined>>>, controlArm = 'control'): Record<string, Record<string, MetricSummary>> {
  const out: Record<string, Record<string, MetricSummary>> = {};
  const clean = (list: Array<number | null | undefined> | undefined) => (list ?? []).filter((v): v is number => typeof v === 'number' && Number.isFinite(v));
  for (const [arm, metrics] of Object.entries(values)) {
    out[arm] = {};
    for (const [metric, list] of Object.entries(metrics)) {
      const vals = clean(list);
      const m = mean(vals);
      const control = arm === controlArm ? null : mean(clean(values[controlArm]?.[metric]));
      out[arm]![metric] = { mean: m, ci95: ci95(vals), n: vals.length, changeVsControlPct: percentChange(m, control) };
    }
  }
  return out;
}
