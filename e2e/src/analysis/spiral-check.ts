/**
 * The records of `npm run spiral-check` (one JSON file per `--query` and protocol: the
 * session with the server's spiral guard off, then on) and their table, so the
 * committed figures in results/spiral-check/ re-render from the files by
 * `npm run spiral-check -w e2e -- --render FILE...`.
 */

export const SPIRAL_CHECK_PROTOCOLS = ['h1', 'h2'] as const;
export type SpiralCheckProtocol = (typeof SPIRAL_CHECK_PROTOCOLS)[number];

export interface GuardRun {
  guard: 'on' | 'off';
  avgBitrateKbps: number;
  switchCount: number;
  rebufferCount: number;
  playDelayS: number | null;
  /** Mean nominal bitrate of the video chunks requested in each 10 s window. */
  bitrateByWindowKbps: (number | null)[];
  pacedResponses: number;
  guardRaised: number;
  /** Over the paced video segment responses. */
  medianAppliedKbps: number | null;
  medianRequestedKbps: number | null;
  /** Video chunks the browser fetched over h2 (Resource Timing), of all video chunks (absent in records made before `--protocol`). */
  h2Chunks?: number;
  chunks?: number;
  /** Paced segment streams whose share ended with the connection capped above their own rate: another stream's share was beside it. */
  pacedWithCompanion?: number;
}

export interface SpiralCheckRecord {
  query: string;
  /** Absent in records made before `--protocol` (they were HTTP/1.1). */
  protocol?: SpiralCheckProtocol;
  seconds: number;
  topKbps: number;
  /** Guard off, then on. */
  runs: GuardRun[];
  /** When and under what load it ran (`/proc/loadavg`'s 1-minute figure before and after). */
  startedAt?: string;
  loadAverage1m?: { before: number; after: number };
}

/** A record read from JSON, checked enough that the table cannot silently show nonsense. */
export function parseSpiralCheckRecord(text: string, source: string): SpiralCheckRecord {
  const r = JSON.parse(text) as Partial<SpiralCheckRecord>;
  const guards = Array.isArray(r.runs) ? r.runs.map((run) => run?.guard).join(',') : '';
  if (typeof r.query !== 'string' || typeof r.topKbps !== 'number' || guards !== 'off,on') {
    throw new Error(`${source}: not a spiral-check record (needs query, topKbps, and runs with the guard off then on)`);
  }
  if (r.protocol !== undefined && !SPIRAL_CHECK_PROTOCOLS.includes(r.protocol)) throw new Error(`${source}: unknown protocol ${JSON.stringify(r.protocol)}`);
  return r as SpiralCheckRecord;
}

function cell(run: GuardRun): string {
  const windows = run.bitrateByWindowKbps.map((w) => (w === null ? '-' : String(w))).join(', ');
  const parts = [
    `**${run.avgBitrateKbps} kbit/s**: ${windows} per 10 s, ${run.switchCount} switches, ${run.rebufferCount} rebuffers`,
    `${run.guardRaised} of ${run.pacedResponses} raised`,
    `video rtp median ${run.medianRequestedKbps ?? '-'}, applied ${run.medianAppliedKbps ?? '-'}`,
  ];
  if (run.h2Chunks !== undefined && run.chunks !== undefined) parts.push(`${run.h2Chunks} of ${run.chunks} chunks over h2`);
  if (run.pacedWithCompanion !== undefined && run.pacedWithCompanion > 0) parts.push(`${run.pacedWithCompanion} paced streams ended beside another's share`);
  return parts.join('; ');
}

/** One markdown table row per record: the query, the protocol, the guard off and on. */
export function renderSpiralCheck(records: readonly SpiralCheckRecord[]): string {
  const lines = ['| `--query` | protocol | guard off | guard on |', '| --- | --- | --- | --- |'];
  for (const r of records) {
    const [off, on] = r.runs as [GuardRun, GuardRun];
    lines.push(`| \`${r.query}\` | ${r.protocol ?? 'h1'} | ${cell(off)} | ${cell(on)} |`);
  }
  return `${lines.join('\n')}\n`;
}
