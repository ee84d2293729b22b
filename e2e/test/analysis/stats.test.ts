import { ci95, mean, percentChange, quantile, stddev, summarize } from '../../src/analysis/stats.js';

describe('statistics', () => {
  test('mean and sample standard deviation', () => {
    expect(mean([])).toBeNull();
    expect(mean([1, 2, 3, 4])).toBe(2.5);
    expect(stddev([2, 4, 4, 4, 5, 5, 7, 9])).toBeCloseTo(2.138, 3);
    expect(stddev([1])).toBeNull();
  });

  test('95% CI from Student t', () => {
    // n = 10, mean 5, s = 1: half-width t(0.975, 9) x 1 / sqrt(10) = 2.2622 x 0.3162
    const values = [4, 6, 4, 6, 4, 6, 4, 6, 5, 5];
    const s = stddev(values)!;
    const [lo, hi] = ci95(values)!;
    expect((lo + hi) / 2).toBeCloseTo(5, 10);
    expect((hi - lo) / 2).toBeCloseTo((2.262157 * s) / Math.sqrt(10), 5);
    expect(ci95([3])).toEqual([3, 3]);
    expect(ci95([])).toBeNull();
  });

  test('two values: t(0.975, 1) = 12.706', () => {
    const [lo, hi] = ci95([0, 2])!;
    // mean 1, s = sqrt(2), so the half-width is t x sqrt(2) / sqrt(2)
    expect(hi).toBeCloseTo(1 + 12.7062, 3);
    expect(lo).toBeCloseTo(1 - 12.7062, 3);
  });

  test('percent change against a reference', () => {
    expect(percentChange(54, 100)).toBeCloseTo(-46);
    expect(percentChange(25, 20)).toBeCloseTo(25);
    expect(percentChange(1, 0)).toBeNull();
    expect(percentChange(null, 3)).toBeNull();
  });

  test('quantile interpolates', () => {
    expect(quantile([1, 2, 3, 4, 5], 0.5)).toBe(3);
    expect(quantile([1, 2], 0.5)).toBe(1.5);
    expect(quantile([], 0.5)).toBeNull();
  });

  test('summarize: n counts only numbers; change vs control', () => {
    const s = summarize({
      control: { x: [10, 12, null, undefined], y: [] },
      sammy: { x: [5, 6, NaN], y: [1] },
    });
    expect(s.control!.x).toMatchObject({ mean: 11, n: 2, changeVsControlPct: null });
    expect(s.sammy!.x!.mean).toBe(5.5);
    expect(s.sammy!.x!.changeVsControlPct).toBeCloseTo(-50);
    expect(s.sammy!.y).toEqual({ mean: 1, ci95: [1, 1], n: 1, changeVsControlPct: null });
    expect(s.control!.y).toEqual({ mean: null, ci95: null, n: 0, changeVsControlPct: null });
  });
});
