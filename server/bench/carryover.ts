// Bench section `carryover` (npm run bench -w @sammy/server -- --only carryover):
// on one keep-alive connection across the veth pair, how long the response after a
// paced one waits, against the same response on a new connection; and pipelined
// requests, each with its own rate, bytes and telemetry line.
//
// Why a response can wait: Linux paces by departure time (EDT). Each skb sent under
// SO_MAX_PACING_RATE pushes the socket's next departure time len / rate ahead, and
// removing the cap does not move a departure time already computed; nor does it
// raise the socket's pacing rate before the next ACK. So the next response's first
// packet leaves no earlier than the last paced skb's length at the old rate after
// it (up to 64 KB per skb on a veth pair with microsecond RTTs). The server bounds
// that to one burst (README "Keep-alive carry-over"). nginx with the Sammy module is
// measured with its tail held (`sammy_tail_hold on`: the same bound) and without
// (`off`: the cap is lifted when nginx logs the request, which un-paces what is still
// queued in the socket), for each the next response and whether the paced one kept
// its rate to its end.
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ResponseTelemetry } from '../src/telemetry.js';
import { kbpsToBytesPerS } from '../src/units.js';
import type { CarryoverJob, CarryoverResult, FreshResult, PipelineResult } from './carryover-client.js';
import { fmt, median, type BenchKit, type BenchServer } from './kit.js';

const CLIENT = 'bench/carryover-client.ts';
const MSS_BYTES = 1448;
const BURST_PACKETS = 4;
const ROUNDS = 8;
/** Old rates: the thesis's lowest rungs' pace (the worst carry-over) and a mid-ladder one. */
const PACED_RATES_KBPS = [500, 4000];
/** Seconds of data in each paced response (at its rate). */
const PACED_SECONDS = 1.5;
/** The next response (23 KB), and a 1 MB one whose later packets show a pacing rate left at the old cap. */
const NEXT_FILES = { 'carry-next-23k.m4s': 23_000, 'carry-next-1m.m4s': 1_000_000 } as const;
const PIPELINE = [
  { file: 'pipe-a.m4s', bytes: 3_000_000, rtpKbps: 16_000 },
  { file: 'pipe-b.m4s', bytes: 2_000_000, rtpKbps: 32_000 },
  { file: 'pipe-c.m4s', bytes: 1_000_000, rtpKbps: null },
] as const;
const MODULE_PORT = 18_110;

/** A server the section measures: how to start it (null: nginx is not installed). */
interface CarryoverServer {
  id: string;
  label: string;
  start: () => Promise<BenchServer | null>;
}

function servers(kit: BenchKit, serverArgs: string[]): CarryoverServer[] {
  const sammy = (id: string, label: string, args: string[]): CarryoverServer => ({
    id,
    label,
    start: () => kit.startSammy(`carry-${id}`, ['--workers', '1', '--burst-packets', String(BURST_PACKETS), ...args, ...serverArgs]),
  });
  const out = [
    sammy('default', `server default (auto, N=${BURST_PACKETS})`, []),
    sammy('kernel', '--burst-mode kernel', ['--burst-mode', 'kernel']),
  ];
  if (kit.nginxModuleUnavailable !== null) {
    kit.say(`No rows for nginx with the Sammy module: ${kit.nginxModuleUnavailable}`);
    return out;
  }
  for (const tailHold of [true, false]) {
    const id = `nginx-module-tail-hold-${tailHold ? 'on' : 'off'}`;
    out.push({
      id,
      label: `nginx + Sammy module, sammy_tail_hold ${tailHold ? 'on' : 'off'}`,
      start: () => kit.startNginx(`carry-${id}`, MODULE_PORT, { limitRateBytesPerS: null, sammy: { pacing: true, tailHold } }),
    });
  }
  return out;
}

export interface CarryoverRow {
  config: string;
  rtpKbps: number;
  nextPath: string;
  nextBytes: number;
  /** N x MSS at the old rate: the most the next response may wait. */
  oneBurstAtOldRateMs: number;
  firstByteMs: number[];
  lastByteMs: number[];
  /** The paced response before it: its last byte, and its body bytes over that time against the applied rate. */
  pacedLastByteMs: number[];
  /** Its size at its rate (PACED_SECONDS): what its last byte should take if it kept its rate to the end. */
  pacedSizeOverRateMs: number;
  freshFirstByteMs: number[];
  freshLastByteMs: number[];
}

export interface PipelineRow {
  config: string;
  path: string;
  rtpKbps: number | null;
  bodyBytesReceived: number;
  telemetryBytes: number | null;
  pacing: string | null;
  /** The server's achieved / applied rate (telemetry). */
  serverRatio: number | null;
  /** Body bytes over first-to-last byte at the receiver, over the applied rate. */
  receiverRatio: number | null;
  /** Milliseconds from the requests' write to this response's first and last byte. */
  firstByteMs: number;
  lastByteMs: number;
}

const pacedBytes = (kbps: number): number => Math.round(kbpsToBytesPerS(kbps) * PACED_SECONDS);

function writeMedia(kit: BenchKit): void {
  for (const kbps of PACED_RATES_KBPS) writeFileSync(join(kit.mediaDir, `carry-paced-${kbps}.m4s`), randomBytes(pacedBytes(kbps)));
  for (const [file, bytes] of Object.entries(NEXT_FILES)) writeFileSync(join(kit.mediaDir, file), randomBytes(bytes));
  for (const p of PIPELINE) writeFileSync(join(kit.mediaDir, p.file), randomBytes(p.bytes));
}

async function waitForLines(kit: BenchKit, server: BenchServer, match: (t: ResponseTelemetry) => boolean, count: number): Promise<ResponseTelemetry[]> {
  for (let i = 0; i < 100; i++) {
    const lines = kit.telemetry(server).filter(match);
    if (lines.length >= count) return lines;
    await new Promise((r) => setTimeout(r, 50));
  }
  return kit.telemetry(server).filter(match);
}

const stat = (values: number[]): string => `${fmt(median(values), 1)} / ${fmt(Math.max(...values), 1)}`;

export async function carryover(kit: BenchKit, serverArgs: string[] = []): Promise<{ carryover: CarryoverRow[]; pipelining: PipelineRow[] }> {
  kit.say(`## Keep-alive carry-over: the unpaced response right after a paced one on the same connection (${ROUNDS} rounds each)`);
  kit.say();
  writeMedia(kit);
  const rows: CarryoverRow[] = [];
  const pipeRows: PipelineRow[] = [];
  const host = kit.net.serverIp;
  for (const config of servers(kit, serverArgs)) {
    const server = await config.start();
    if (server === null) continue;
    try {
      const base = { host, port: server.port, tls: false };
      const fresh = await kit.runClient<FreshResult>(CLIENT, { kind: 'fresh', ...base, paths: Object.keys(NEXT_FILES).map((f) => `/media/${f}`), rounds: ROUNDS } satisfies CarryoverJob);
      for (const rtpKbps of PACED_RATES_KBPS) {
        const r = await kit.runClient<CarryoverResult>(CLIENT, {
          kind: 'carryover',
          ...base,
          pacedPath: `/media/carry-paced-${rtpKbps}.m4s`,
          rtpKbps,
          nextPaths: Object.keys(NEXT_FILES).map((f) => `/media/${f}`),
          rounds: ROUNDS,
        } satisfies CarryoverJob);
        for (const [file, bytes] of Object.entries(NEXT_FILES)) {
          const path = `/media/${file}`;
          const samples = r.samples.filter((s) => s.path === path);
          if (samples.some((s) => s.next.bodyBytes !== bytes || s.next.status !== 200)) throw new Error(`carry-over: a short or failed ${path}`);
          const freshSamples = fresh.samples.filter((s) => s.path === path).map((s) => s.response);
          rows.push({
            config: config.label,
            rtpKbps,
            nextPath: path,
            nextBytes: bytes,
            oneBurstAtOldRateMs: ((BURST_PACKETS * MSS_BYTES) / kbpsToBytesPerS(rtpKbps)) * 1000,
            firstByteMs: samples.map((s) => s.next.firstByteMs),
            lastByteMs: samples.map((s) => s.next.lastByteMs),
            pacedLastByteMs: samples.map((s) => s.paced.lastByteMs),
            pacedSizeOverRateMs: (pacedBytes(rtpKbps) / kbpsToBytesPerS(rtpKbps)) * 1000,
            freshFirstByteMs: freshSamples.map((s) => s.firstByteMs),
            freshLastByteMs: freshSamples.map((s) => s.lastByteMs),
          });
        }
      }
      const piped = await kit.runClient<PipelineResult>(CLIENT, {
        kind: 'pipeline',
        ...base,
        requests: PIPELINE.map((p) => ({ path: `/media/${p.file}`, rtpKbps: p.rtpKbps })),
      } satisfies CarryoverJob);
      const lines = await waitForLines(kit, server, (t) => t.remotePort === piped.localPort, PIPELINE.length);
      PIPELINE.forEach((p, i) => {
        const res = piped.responses[i]!;
        const line = lines.find((t) => t.path === `/media/${p.file}`);
        const spanS = (res.lastByteAtMs - res.firstByteAtMs) / 1000;
        pipeRows.push({
          config: config.label,
          path: `/media/${p.file}`,
          rtpKbps: p.rtpKbps,
          bodyBytesReceived: res.bodyBytes,
          telemetryBytes: line?.bytes ?? null,
          pacing: line?.pacing ?? null,
          serverRatio: line?.achievedRateKbps != null && line.appliedRateKbps != null ? line.achievedRateKbps / line.appliedRateKbps : null,
          receiverRatio: p.rtpKbps === null || spanS <= 0 ? null : res.bodyBytes / spanS / kbpsToBytesPerS(p.rtpKbps),
          firstByteMs: res.firstByteMs,
          lastByteMs: res.lastByteMs,
        });
      });
    } finally {
      await kit.stop(server);
    }
  }
  kit.table(
    [
      'server',
      'old rate kbit/s',
      'paced response: last byte ms (median / max)',
      'its last byte / (size / rate) (median / min)',
      'next response',
      'one burst at old rate ms',
      'next: first byte ms (median / max)',
      'next: last byte ms (median / max)',
      'new connection: first / last byte ms (median)',
    ],
    rows.map((r) => [
      r.config,
      String(r.rtpKbps),
      stat(r.pacedLastByteMs),
      `${fmt(median(r.pacedLastByteMs) / r.pacedSizeOverRateMs, 3)} / ${fmt(Math.min(...r.pacedLastByteMs) / r.pacedSizeOverRateMs, 3)}`,
      `${r.nextBytes / 1000} KB`,
      fmt(r.oneBurstAtOldRateMs, 1),
      stat(r.firstByteMs),
      stat(r.lastByteMs),
      `${fmt(median(r.freshFirstByteMs), 1)} / ${fmt(median(r.freshLastByteMs), 1)}`,
    ]),
  );
  kit.say();
  kit.say('## Pipelining: three requests in one write (3 MB at 16 Mbit/s, 2 MB at 32 Mbit/s, 1 MB unpaced)');
  kit.say();
  kit.table(
    ['server', 'response', 'rtp kbit/s', 'bytes received', 'telemetry bytes', 'pacing', 'server achieved / applied', 'receiver rate / applied', 'first / last byte ms'],
    pipeRows.map((r) => [
      r.config,
      r.path,
      r.rtpKbps === null ? '-' : String(r.rtpKbps),
      String(r.bodyBytesReceived),
      String(r.telemetryBytes ?? '-'),
      r.pacing ?? '-',
      r.serverRatio === null ? '-' : fmt(r.serverRatio, 3),
      r.receiverRatio === null ? '-' : fmt(r.receiverRatio, 3),
      `${fmt(r.firstByteMs, 0)} / ${fmt(r.lastByteMs, 0)}`,
    ]),
  );
  kit.say();
  return { carryover: rows, pipelining: pipeRows };
}
