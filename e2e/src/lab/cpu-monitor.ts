/**
 * The machine's CPU load while a session runs, from /proc/stat once a second: the lab
 * shares this machine's cores with Chromium and with other people's jobs, so a session
 * whose cores were saturated measured the CPU as much as the network (it is flagged).
 */
import { readFile } from 'node:fs/promises';

/** [ms since the session's origin, busy fraction of all cores, of which at nice > 0] over the second before. */
export type CpuSample = [number, number, number];

/** A session whose cores were at least this busy (mean, not counting niced work) is flagged CPU-bound. */
export const CPU_BOUND_PCT = 90;

export interface CpuTimes {
  total: number;
  /** Not idle and not waiting for I/O. */
  busy: number;
  /** Of `busy`, at nice > 0: it yields to the lab's processes, so it hardly competes with them. */
  nice: number;
}

/** The aggregate `cpu` line of /proc/stat (user nice system idle iowait irq softirq steal ...). */
export function parseProcStat(text: string): CpuTimes | null {
  const m = /^cpu\s+(.*)$/m.exec(text);
  if (!m) return null;
  const v = m[1]!.trim().split(/\s+/).map(Number).slice(0, 8);
  if (v.length < 5 || v.some((x) => !Number.isFinite(x))) return null;
  const total = v.reduce((a, b) => a + b, 0);
  return { total, busy: total - v[3]! - v[4]!, nice: v[1]! };
}

/** The share of the interval between two readings that was busy, and busy at nice > 0. */
export function cpuShare(a: CpuTimes, b: CpuTimes): { busy: number; nice: number } | null {
  const dt = b.total - a.total;
  if (dt <= 0) return null;
  return { busy: (b.busy - a.busy) / dt, nice: (b.nice - a.nice) / dt };
}

export interface CpuMonitor {
  stop(): CpuSample[];
}

export function startCpuMonitor(originMs: () => number, intervalMs = 1000): CpuMonitor {
  const samples: CpuSample[] = [];
  let last: CpuTimes | null = null;
  let stopped = false;
  const read = async () => {
    const text = await readFile('/proc/stat', 'utf8').catch(() => '');
    if (stopped) return;
    const now = parseProcStat(text);
    const share = last && now ? cpuShare(last, now) : null;
    if (share) samples.push([Date.now() - originMs(), Math.round(share.busy * 1000) / 1000, Math.round(share.nice * 1000) / 1000]);
    last = now;
  };
  void read();
  const timer = setInterval(() => void read(), intervalMs);
  return {
    stop() {
      stopped = true;
      clearInterval(timer);
      return samples;
    },
  };
}

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
