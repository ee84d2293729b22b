/**
 * The machine's CPU load while a session runs, from /proc/stat once a second: the lab
 * shares this machine's cores with Chromium and with other people's jobs, so a session
 * whose cores were saturated measured the CPU as much as the network (it is flagged:
 * src/analysis/cpu-samples.ts).
 */
import { readFile } from 'node:fs/promises';
import type { CpuSample } from '../analysis/cpu-samples.js';

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
