/**
 * On a trace link, how much of the UDP neighbour's delay is the trace's own: the
 * neighbour's packets, sent when they were, replayed through the delay line's queue with
 * no video (`labtools trace-sim`: the same queue and delivery-opportunity code the
 * downlink ran, on a simulated clock, from the session's point of the trace). Where the
 * trace carries less than the neighbour sends, its packets wait whatever the video does;
 * the rest of the delay the session measured is what the video added, and only that
 * part can an arm change.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildLabtools, gccUnavailableReason, traceSim } from './native.js';
import type { UdpRaw } from '../scenario/neighbour-kinds.js';
import { traceFileOf, type AloneDelay, type AloneDelays } from '../analysis/delay-by-capacity.js';
import type { LabResult, TrialRecord } from '../analysis/result.js';
import { queueBytes } from '../scenario/scenario.js';
import { opportunitySchedule, readTrace, scheduleText } from '../scenario/trace.js';

/** IPv4 and UDP headers: what a datagram of `packetBytes` occupies in the delay line's queue beyond its payload. */
export const UDP_IP_HEADER_BYTES = 28;

/**
 * The send times (ms since the window start) of every datagram from the first received
 * to the last: the neighbour sends one every packetBytes x 8 / rateKbps ms, so the
 * datagrams lost on the way fall on that grid between the received ones.
 */
export function udpSendGrid(raw: UdpRaw): { firstMs: number; stepMs: number; count: number } | null {
  if (raw.packets.length === 0) return null;
  const stepMs = (raw.packetBytes * 8) / raw.rateKbps;
  // A loop, not Math.min(...): a fast neighbour's long window holds more datagrams than a call takes arguments.
  let firstMs = Infinity;
  let lastMs = -Infinity;
  for (const [t] of raw.packets) {
    firstMs = Math.min(firstMs, t);
    lastMs = Math.max(lastMs, t);
  }
  return { firstMs, stepMs, count: Math.round((lastMs - firstMs) / stepMs) + 1 };
}

/** One session's replay; null without a UDP neighbour, a trace restart or packets. */
function replay(t: TrialRecord, labtools: string, scheduleFile: string, queueLimitBytes: number, lineDelayMs: number): AloneDelay | null {
  const raw = t.neighbourRaw;
  if (t.error || raw?.kind !== 'udp' || !t.window || t.playbackStartS === null || typeof t.traceStartS !== 'number') return null;
  const grid = udpSendGrid(raw);
  if (grid === null) return null;
  const fromS = t.traceFromS ?? 0;
  // Trace time of the window's start: the trace restarted at `fromS` when the session's play request went out.
  const windowTraceS = fromS + t.playbackStartS - t.traceStartS + t.window.startS;
  const startUs = Math.round(fromS * 1e6);
  const arrivalsUs = Array.from({ length: grid.count }, (_, k) => Math.max(startUs, Math.round((windowTraceS + (grid.firstMs + k * grid.stepMs) / 1000) * 1e6)));
  const lines = traceSim(labtools, scheduleFile, queueLimitBytes, arrivalsUs.map((us) => [us, raw.packetBytes + UDP_IP_HEADER_BYTES]), startUs);
  const dropped = new Set(lines.filter((l) => l.startsWith('drop ')).map((l) => Number(l.slice(5))));
  const served = lines.filter((l) => l.startsWith('served ')).map((l) => Number(l.slice(7)));
  // trace-sim prints the served packets in order, skipping the dropped ones.
  const aloneMs: Array<number | null> = [];
  let next = 0;
  arrivalsUs.forEach((us, k) => aloneMs.push(dropped.has(k) ? null : lineDelayMs + (served[next++]! - us) / 1000));
  let measured = 0;
  let alone = 0;
  let common = 0;
  for (const [sentMs, owdMs] of raw.packets) {
    const a = aloneMs[Math.round((sentMs - grid.firstMs) / grid.stepMs)];
    if (a === null || a === undefined) continue;
    measured += owdMs;
    alone += a;
    common += 1;
  }
  if (common === 0) return null;
  return { measuredOwdMs: measured / common, owdMs: alone / common, lossPct: (100 * dropped.size) / grid.count, replayed: grid.count, common };
}

/**
 * Every session's UDP neighbour replayed alone (`AloneDelays`), or why not: a constant
 * link, no UDP neighbour, the trace file missing or changed, no compiler for labtools.
 */
export async function neighbourAloneDelays(result: LabResult): Promise<{ delays: AloneDelays } | { unavailable: string } | null> {
  const s = result.config.scenario;
  if (!s.link.trace || !result.trials.some((t) => t.neighbourRaw?.kind === 'udp')) return null;
  const traceFile = traceFileOf(result);
  if (traceFile === null) return { unavailable: 'its trace file was not found unchanged' };
  const noGcc = gccUnavailableReason();
  if (noGcc) return { unavailable: `labtools cannot be built here (${noGcc})` };
  const labtools = await buildLabtools();
  const dir = mkdtempSync(join(tmpdir(), 'sammy-alone-'));
  try {
    const scheduleFile = join(dir, 'schedule.txt');
    writeFileSync(scheduleFile, scheduleText(opportunitySchedule(readTrace(traceFile)), s.link.trace.file));
    const lineDelayMs = result.delayLine?.down.delayMs ?? s.link.rttMs / 2;
    const limit = result.delayLine?.down.trace?.queueLimitBytes ?? queueBytes(s.link);
    return { delays: result.trials.map((t) => replay(t, labtools, scheduleFile, limit, lineDelayMs)) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
