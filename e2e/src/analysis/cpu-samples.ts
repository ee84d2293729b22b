/**
 * The machine's CPU load over a session, as its record holds it (the lab's
 * cpu-monitor.ts samples /proc/stat), and when that load flags the session CPU-bound.
 */

/** [ms since the session's origin, busy fraction of all cores, of which at nice > 0] over the second before. */
export type CpuSample = [number, number, number];

/** A session whose cores were at least this busy (mean, not counting niced work) is flagged CPU-bound. */
export const CPU_BOUND_PCT = 90;

/** Mean busy % of all cores over the session, and the same without niced work (what competes with the lab). */
export function cpuMetrics(samples: CpuSample[]): { cpuBusyPct: number | null; cpuBusyUnnicedPct: number | null } {
  if (samples.length === 0) return { cpuBusyPct: null, cpuBusyUnnicedPct: null };
  const mean = (f: (s: CpuSample) => number) => (100 * samples.reduce((a, s) => a + f(s), 0)) / samples.length;
  return { cpuBusyPct: mean((s) => s[1]), cpuBusyUnnicedPct: mean((s) => s[1] - s[2]) };
}

/** Whether a session's measured load makes it CPU-bound. */
export function cpuBound(m: { cpuBusyUnnicedPct?: number | null }): boolean {
  return typeof m.cpuBusyUnnicedPct === 'number' && m.cpuBusyUnnicedPct >= CPU_BOUND_PCT;
}
