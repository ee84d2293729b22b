import { cpuBound, cpuMetrics } from '../../src/analysis/cpu-samples.js';
import { cpuShare, parseProcStat } from '../../src/lab/cpu-monitor.js';

describe('CPU load', () => {
  const before = 'cpu  1000 500 300 2000 100 0 50 0 0 0\ncpu0 1 2 3 4 5 6 7 8 0 0\nintr 1\n';
  const after = 'cpu  1400 900 400 2100 100 0 50 0 0 0\ncpu0 1 2 3 4 5 6 7 8 0 0\n';

  test('busy is everything but idle and iowait, nice counted apart, from the aggregate line', () => {
    expect(parseProcStat(before)).toEqual({ total: 3950, busy: 1850, nice: 500 });
    expect(parseProcStat('intr 1\n')).toBeNull();
    // 1000 ticks between the readings: 900 busy, 400 of them niced.
    expect(cpuShare(parseProcStat(before)!, parseProcStat(after)!)).toEqual({ busy: 0.9, nice: 0.4 });
    expect(cpuShare(parseProcStat(after)!, parseProcStat(after)!)).toBeNull();
  });

  test('a session is CPU-bound when its cores were at least 90% busy without niced work', () => {
    const light = cpuMetrics([[1000, 0.95, 0.6], [2000, 0.85, 0.5]]);
    expect(light.cpuBusyPct).toBeCloseTo(90, 9);
    expect(light.cpuBusyUnnicedPct).toBeCloseTo(35, 9);
    expect(cpuBound(light)).toBe(false);
    const heavy = cpuMetrics([[1000, 1, 0.05], [2000, 0.96, 0]]);
    expect(cpuBound(heavy)).toBe(true);
    expect(cpuMetrics([])).toEqual({ cpuBusyPct: null, cpuBusyUnnicedPct: null });
    expect(cpuBound({})).toBe(false);
  });
});
