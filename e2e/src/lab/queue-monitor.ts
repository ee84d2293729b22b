/**
 * Samples the bottleneck qdisc (`tc -s -j qdisc`) over time: backlog (the queue),
 * drops, and bytes sent (the link's throughput between samples).
 */
import { execFile } from 'node:child_process';
import type { QueueSample } from '../analysis/queue-samples.js';
import type { Managed } from './processes.js';

export interface QueueMonitor {
  stop(): QueueSample[];
}

export function parseTcQdisc(json: string): { backlogBytes: number; drops: number; sentBytes: number } | null {
  try {
    const list = JSON.parse(json) as Array<{ kind: string; root?: boolean; backlog?: number; drops?: number; bytes?: number }>;
    const root = list.find((q) => q.root) ?? list[0];
    if (!root) return null;
    return { backlogBytes: root.backlog ?? 0, drops: root.drops ?? 0, sentBytes: root.bytes ?? 0 };
  } catch {
    return null;
  }
}

export function startQueueMonitor(routerNs: string, dev: string, originMs: () => number, intervalMs = 100): QueueMonitor {
  const samples: QueueSample[] = [];
  let stopped = false;
  let timer: NodeJS.Timeout | null = null;
  const tick = () => {
    const t = Date.now();
    execFile('tc', ['-n', routerNs, '-s', '-j', 'qdisc', 'show', 'dev', dev], { timeout: 5000 }, (err, stdout) => {
      if (stopped) return;
      const q = err ? null : parseTcQdisc(stdout);
      if (q) samples.push([t - originMs(), q.backlogBytes, q.drops, q.sentBytes]);
      timer = setTimeout(tick, Math.max(0, intervalMs - (Date.now() - t)));
    });
  };
  tick();
  return {
    stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      return samples;
    },
  };
}

/** One "q" line of a trace-mode delay line (labtools.c): its downlink queue every 100 ms of trace time. */
export interface DelaySample {
  realtimeMs: number;
  /** Trace time: from the trace's start (a restart at T goes on from T). */
  traceUs: number;
  queuedBytes: number;
  drops: number;
  /** Bytes served at the bottleneck so far (IP packets). */
  servedBytes: number;
  /** How long the oldest queued packet has waited (0 when the queue is empty). */
  headAgeUs: number;
}

export function parseDelaySamples(text: string): DelaySample[] {
  const out: DelaySample[] = [];
  for (const m of text.matchAll(/^q (\d+) (\d+) (\d+) (\d+) (\d+) (\d+)$/gm)) {
    out.push({ realtimeMs: Number(m[1]), traceUs: Number(m[2]), queuedBytes: Number(m[3]), drops: Number(m[4]), servedBytes: Number(m[5]), headAgeUs: Number(m[6]) });
  }
  return out;
}

/**
 * On a trace link the bottleneck queue is the delay line's, not a qdisc: the same
 * samples, from the lines it prints while the session runs, plus the oldest queued
 * packet's wait.
 */
export function startDelayLineQueueMonitor(delayLine: Managed, originMs: () => number): QueueMonitor {
  const offset = delayLine.stdout().length;
  return {
    stop() {
      // A line cut at the offset cannot match: a sample line starts with "q ".
      return parseDelaySamples(delayLine.stdout().slice(offset)).map((q) => [q.realtimeMs - originMs(), q.queuedBytes, q.drops, q.servedBytes, q.headAgeUs / 1000]);
    },
  };
}
