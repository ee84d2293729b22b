/**
 * The neighbours of thesis section 2.6, each its own experiment, and the one registry
 * of neighbour kinds (`NEIGHBOUR_KINDS`): per kind, its scenario fields with their
 * checks and defaults, how it starts, what it measures, and how the report names it.
 * A new kind is one entry here plus its implementation (docs/lab-scenarios.md lists
 * the kinds for users). Senders live in the server namespace and sinks in the client
 * namespace, so their traffic crosses the bottleneck in the video's direction
 * (server -> client). Times are epoch milliseconds; both ends share this machine's clock.
 */
import { join } from 'node:path';
import type { Arm } from '@sammy/player/abr';
import { netnsExec } from './netns.js';
import { E2E_DIR, REPO_DIR } from './paths.js';
import { start, stop, waitForOutput, type Managed } from './processes.js';
import type { SessionResult } from './session.js';
import { fixed, round } from './stats.js';
import { ADDRESSES, type Topology } from './topology.js';

/** What shares the bottleneck with the video in one experiment (thesis section 2.6). */
export type Neighbour =
  | { kind: 'none' }
  /** Paced UDP; metric: one-way delay. */
  | { kind: 'udp'; rateKbps: number; packetBytes: number; startS: number; endS: number | null }
  /** A bulk TCP flow; metric: throughput. */
  | { kind: 'tcp'; congestionControl: string; startS: number; endS: number | null }
  /** Back-to-back GETs of `responseBytes`; metric: response time. */
  | { kind: 'http'; responseBytes: number; gapMs: number; startS: number; endS: number | null }
  /** A second video session; metric: its play delay. */
  | { kind: 'video'; arm: Arm; startS: number; endS: number | null };

export type NeighbourKind = Neighbour['kind'];

/** The measurement window, absolute and relative to the main video's playback start. */
export interface MeasurementWindow {
  startMs: number;
  endMs: number;
  startS: number;
  endS: number;
}

export interface UdpRaw {
  kind: 'udp';
  rateKbps: number;
  packetBytes: number;
  sent: number;
  /** [send time (ms since window start), one-way delay (ms)] per received datagram. */
  packets: Array<[number, number]>;
}
export interface TcpRaw {
  kind: 'tcp';
  congestionControl: string;
  sentBytes: number | null;
  /** [ms since window start, bytes received so far]. */
  samples: Array<[number, number]>;
}
export interface HttpRaw {
  kind: 'http';
  responseBytes: number;
  /** [request start (ms since window start), response time (ms), bytes]. */
  requests: Array<[number, number, number]>;
}
export type NeighbourRaw = UdpRaw | TcpRaw | HttpRaw;

export interface NeighbourMetrics {
  udpOwdMs?: number;
  udpOwdP95Ms?: number;
  udpLossPct?: number;
  tcpThroughputMbps?: number;
  httpResponseMs?: number;
  httpRequests?: number;
  neighborPlayDelayS?: number | null;
}

export interface RunningNeighbour {
  /** Stops the neighbour and returns what it measured, relative to `window`. */
  finish(window: MeasurementWindow): Promise<NeighbourRaw>;
}

const UDP_PORT = 5201;
const TCP_PORT = 5202;
/** Several flows of one kind at once (the fairness design's pairs) each take their own port: slot k adds k x this. */
const PORT_STRIDE = 10;

function inNs(topo: Topology, side: 'server' | 'client', name: string, cmd: string, args: string[]): Managed {
  const [c, a] = netnsExec(topo.ns[side], cmd, args);
  return start(name, c, a, { cwd: REPO_DIR });
}

function tsxScript(file: string, args: string[]): [string, string[]] {
  return [process.execPath, ['--import', 'tsx', join(E2E_DIR, 'src', 'lab', 'neighbours', file), ...args]];
}

type Of<K extends NeighbourKind> = Extract<Neighbour, { kind: K }>;

/** Paced UDP from the server side; the sink stamps each datagram with the kernel's receive time. */
async function startUdp(n: Of<'udp'>, topo: Topology, labtools: string, duration: string, slot: number): Promise<RunningNeighbour> {
  const port = String(UDP_PORT + PORT_STRIDE * slot);
  const sink = inNs(topo, 'client', 'udp sink', labtools, ['udp-recv', '--port', port]);
  await waitForOutput(sink, 'ready\n');
  const source = inNs(topo, 'server', 'udp source', labtools, [
    'udp-send', '--dst', ADDRESSES.client, '--port', port,
    '--rate-kbps', String(n.rateKbps), '--bytes', String(n.packetBytes), '--duration-s', duration, '--rt',
  ]);
  return {
    async finish(w) {
      await stop(source);
      await new Promise((r) => setTimeout(r, 300)); // the last datagrams are still in the queue
      await stop(sink);
      const sent = Number(/"sent":(\d+)/.exec(source.stdout())?.[1] ?? 0);
      return { kind: 'udp', rateKbps: n.rateKbps, packetBytes: n.packetBytes, sent, packets: parseUdpLines(sink.stdout(), w.startMs) };
    },
  };
}

/** One bulk TCP flow with its own congestion control; the sink counts bytes received. */
async function startTcp(n: Of<'tcp'>, topo: Topology, labtools: string, duration: string, slot: number): Promise<RunningNeighbour> {
  const port = String(TCP_PORT + PORT_STRIDE * slot);
  const sink = inNs(topo, 'client', 'tcp sink', labtools, ['tcp-recv', '--port', port]);
  await waitForOutput(sink, 'ready\n');
  const source = inNs(topo, 'server', 'tcp source', labtools, [
    'tcp-send', '--dst', ADDRESSES.client, '--port', port, '--cc', n.congestionControl, '--duration-s', duration,
  ]);
  return {
    async finish(w) {
      await stop(source);
      await stop(sink);
      const sentBytes = /"sent":(\d+)/.exec(source.stdout());
      return { kind: 'tcp', congestionControl: n.congestionControl, sentBytes: sentBytes ? Number(sentBytes[1]) : null, samples: parseTcpLines(sink.stdout(), w.startMs) };
    },
  };
}

/** An HTTP server of fixed-size bodies, and a client that fetches them back to back. */
async function startHttp(n: Of<'http'>, topo: Topology, _labtools: string, duration: string, _slot: number): Promise<RunningNeighbour> {
  const [serverCmd, serverArgs] = tsxScript('http-server.ts', ['--bytes', String(n.responseBytes), '--port', '0']);
  const server = inNs(topo, 'server', 'http server', serverCmd, serverArgs);
  await waitForOutput(server, /listening \d+\n/);
  const port = /listening (\d+)/.exec(server.stdout())![1]!;
  const [loadCmd, loadArgs] = tsxScript('http-load.ts', ['--url', `http://${ADDRESSES.server}:${port}/blob`, '--duration-s', duration, '--gap-ms', String(n.gapMs)]);
  const load = inNs(topo, 'client', 'http load', loadCmd, loadArgs);
  return {
    async finish(w) {
      await stop(load);
      await stop(server);
      return { kind: 'http', responseBytes: n.responseBytes, requests: parseHttpLines(load.stdout(), w.startMs) };
    },
  };
}

export function parseUdpLines(text: string, originMs: number): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  for (const line of text.split('\n')) {
    const m = /^(\d+) (\d+) (\d+)$/.exec(line);
    if (!m) continue;
    const sendMs = Number(m[2]) / 1e6;
    const recvMs = Number(m[3]) / 1e6;
    out.push([round(sendMs - originMs, 2), round(recvMs - sendMs, 3)]);
  }
  return out;
}

export function parseTcpLines(text: string, originMs: number): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  // Whole lines only: a sink killed mid-write leaves a cut last line ("... 564" of 56431456).
  for (const line of text.split('\n').slice(0, -1)) {
    const m = /^(\d+) (\d+)$/.exec(line);
    if (m) out.push([Number(m[1]) - originMs, Number(m[2])]);
  }
  return out;
}

export function parseHttpLines(text: string, originMs: number): Array<[number, number, number]> {
  const out: Array<[number, number, number]> = [];
  for (const line of text.split('\n')) {
    if (!line.startsWith('{')) continue;
    const r = JSON.parse(line) as { startMs: number; endMs: number; bytes: number; status: number };
    if (r.status === 200) out.push([r.startMs - originMs, r.endMs - r.startMs, r.bytes]);
  }
  return out;
}

/** Cumulative bytes at `t` by linear interpolation between samples. */
function bytesAt(samples: ReadonlyArray<[number, number]>, t: number): number {
  let prev: [number, number] = [0, 0];
  for (const s of samples) {
    if (s[0] >= t) {
      if (s[0] === prev[0]) return s[1];
      return prev[1] + ((s[1] - prev[1]) * (t - prev[0])) / (s[0] - prev[0]);
    }
    prev = s;
  }
  return prev[1];
}

function udpMetrics(raw: UdpRaw, fromMs: number, toMs: number, whole: boolean): NeighbourMetrics {
  const owd = raw.packets.filter(([t]) => t >= fromMs && t <= toMs).map(([, d]) => d);
  const sorted = [...owd].sort((a, b) => a - b);
  return {
    udpOwdMs: owd.length ? owd.reduce((a, b) => a + b, 0) / owd.length : undefined,
    udpOwdP95Ms: sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(0.95 * sorted.length))] : undefined,
    // Loss over the whole window only: the sender reports its total, not when each datagram left.
    udpLossPct: raw.sent > 0 && whole ? Math.max(0, (100 * (raw.sent - raw.packets.length)) / raw.sent) : undefined,
  };
}

/**
 * Mean Mbit/s a bulk TCP flow's sink received in [fromMs, toMs] of its samples' clock.
 * The byte counter never falls, so a record stops at its first lower sample (results
 * written before parseTcpLines dropped a cut last line hold one); a record that stops
 * before toMs (its sink was killed) counts up to its last sample. Null when no sample
 * falls after fromMs.
 */
export function tcpThroughputMbps(samples: ReadonlyArray<[number, number]>, fromMs: number, toMs: number): number | null {
  const kept: Array<[number, number]> = [];
  for (const x of samples) {
    if (kept.length > 0 && x[1] < kept[kept.length - 1]![1]) break;
    kept.push(x);
  }
  const endMs = Math.min(toMs, kept.at(-1)?.[0] ?? -Infinity);
  if (!(endMs > fromMs)) return null;
  return ((bytesAt(kept, endMs) - bytesAt(kept, fromMs)) * 8) / ((endMs - fromMs) / 1000) / 1e6;
}

function tcpMetrics(raw: TcpRaw, fromMs: number, toMs: number): NeighbourMetrics {
  const mbps = tcpThroughputMbps(raw.samples, fromMs, toMs);
  return mbps === null ? {} : { tcpThroughputMbps: mbps };
}

function httpMetrics(raw: HttpRaw, fromMs: number, toMs: number): NeighbourMetrics {
  const done = raw.requests.filter(([t, ms]) => t >= fromMs && t + ms <= toMs).map(([, ms]) => ms);
  return { httpResponseMs: done.length ? done.reduce((a, b) => a + b, 0) / done.length : undefined, httpRequests: done.length };
}

type Obj = Record<string, unknown>;

/** The scenario's field checks (scenario.ts passes its own, so every field error reads alike). */
export interface FieldChecks {
  num(o: Obj, path: string, key: string, min: number, max: number, fallback?: number): number;
  int(o: Obj, path: string, key: string, min: number, max: number, fallback?: number): number;
  str(o: Obj, path: string, key: string, fallback?: string): string;
  arm(path: string, value: unknown): Arm;
}

/** What one session beside the neighbour left to measure it by. */
export interface NeighbourOutcome {
  /** A process neighbour's measurements (relative to its window). */
  raw: NeighbourRaw | null;
  /** The window's length; null when the session failed before it. */
  windowMs: number | null;
  /** Measure only a part of the window, in ms after its start (default: all of it). */
  part?: { fromMs: number; toMs: number };
  /** A second video session's result. */
  session: SessionResult | null;
}

export interface NeighbourKindSpec<N extends Neighbour> {
  /** Scenario fields besides `kind` and `arms` (`startS`, `endS` follow when `windowed`), in the order written. */
  fields: readonly string[];
  /** Runs over a window `startS`..`endS` after playback start. */
  windowed: boolean;
  /** Checks `fields` and fills their defaults. */
  parse(o: Obj, path: string, check: FieldChecks): Omit<N, 'kind' | 'startS' | 'endS'>;
  /** How it starts, at its window's start, to run `duration` seconds: processes in the namespaces. */
  start?(n: N, topo: Topology, labtools: string, duration: string, slot: number): Promise<RunningNeighbour>;
  /**
   * Or: a second player session of this arm beside the main one, at its window's start.
   * The runner starts it, from a second server, in a Chromium process of its own.
   */
  playerSession?(n: N): { arm: Arm };
  /** Its metrics from what the session left (empty when it measured nothing). */
  measure(outcome: NeighbourOutcome): NeighbourMetrics;
  /** What it measures, headline first; the headline gets the report's bar chart and the thesis's number. */
  metrics: ReadonlyArray<{ name: keyof NeighbourMetrics; label: string }>;
  /** Thesis section 2.6's change of the headline metric, Sammy vs control (%). */
  thesisChangePct?: number;
  /** The headline metric in the run's progress line. */
  describe?(m: NeighbourMetrics): string;
}

function fromRaw<R extends NeighbourRaw>(kind: R['kind'], metrics: (raw: R, fromMs: number, toMs: number, whole: boolean) => NeighbourMetrics) {
  return (o: NeighbourOutcome): NeighbourMetrics => {
    if (o.raw?.kind !== kind || o.windowMs === null) return {};
    const fromMs = Math.max(0, o.part?.fromMs ?? 0);
    const toMs = Math.min(o.windowMs, o.part?.toMs ?? o.windowMs);
    return toMs > fromMs ? metrics(o.raw as R, fromMs, toMs, o.part === undefined) : {};
  };
}

/** Every neighbour kind; the order is the order of the report's rows and of the summary. */
export const NEIGHBOUR_KINDS: { readonly [K in NeighbourKind]: NeighbourKindSpec<Of<K>> } = {
  none: {
    fields: [],
    windowed: false,
    parse: () => ({}),
    measure: () => ({}),
    metrics: [],
  },
  udp: {
    fields: ['rateKbps', 'packetBytes'],
    windowed: true,
    parse: (o, path, c) => ({ rateKbps: c.num(o, path, 'rateKbps', 1, 1e6, 5000), packetBytes: c.int(o, path, 'packetBytes', 64, 1472, 1200) }),
    start: startUdp,
    measure: fromRaw('udp', udpMetrics),
    metrics: [
      { name: 'udpOwdMs', label: 'UDP neighbour one-way delay (ms)' },
      { name: 'udpOwdP95Ms', label: 'UDP neighbour one-way delay, p95 (ms)' },
      { name: 'udpLossPct', label: 'UDP neighbour loss (%)' },
    ],
    thesisChangePct: -48,
    describe: (m) => `udp owd ${fixed(m.udpOwdMs, 2)} ms`,
  },
  tcp: {
    fields: ['congestionControl'],
    windowed: true,
    parse: (o, path, c) => ({ congestionControl: c.str(o, path, 'congestionControl', 'reno') }),
    start: startTcp,
    measure: fromRaw('tcp', tcpMetrics),
    metrics: [{ name: 'tcpThroughputMbps', label: 'TCP neighbour throughput (Mbit/s)' }],
    thesisChangePct: 25,
    describe: (m) => `tcp ${fixed(m.tcpThroughputMbps)} Mbps`,
  },
  http: {
    fields: ['responseBytes', 'gapMs'],
    windowed: true,
    parse: (o, path, c) => ({ responseBytes: c.int(o, path, 'responseBytes', 1, 1e9, 3_000_000), gapMs: c.num(o, path, 'gapMs', 0, 60_000, 0) }),
    start: startHttp,
    measure: fromRaw('http', httpMetrics),
    metrics: [
      { name: 'httpResponseMs', label: 'HTTP neighbour response time (ms)' },
      { name: 'httpRequests', label: 'HTTP neighbour requests completed' },
    ],
    thesisChangePct: -18,
    describe: (m) => `http ${fixed(m.httpResponseMs, 0)} ms (${m.httpRequests})`,
  },
  video: {
    fields: ['arm'],
    windowed: true,
    parse: (o, path, c) => ({ arm: c.arm(`${path}.arm`, o.arm ?? 'control') }),
    playerSession: (n) => ({ arm: n.arm }),
    measure: (o) => ({ neighborPlayDelayS: o.session?.qoe?.playDelayS ?? null }),
    metrics: [{ name: 'neighborPlayDelayS', label: 'neighbour video play delay (s)' }],
    thesisChangePct: -5,
    describe: (m) => `neighbour play ${fixed(m.neighborPlayDelayS, 2)} s`,
  },
};

/** A kind's entry, for code that holds a neighbour of any kind. */
export function neighbourKind(kind: NeighbourKind): NeighbourKindSpec<Neighbour> {
  return NEIGHBOUR_KINDS[kind] as unknown as NeighbourKindSpec<Neighbour>;
}

/** Starts a process neighbour now, to run for `durationS` (UDP, TCP, HTTP); `slot` > 0 for a second flow of a kind at once (its own ports). */
export async function startNeighbour(n: Neighbour, topo: Topology, labtools: string, durationS: number, slot = 0): Promise<RunningNeighbour> {
  const spec = neighbourKind(n.kind);
  if (!spec.start) throw new Error(`neighbour ${n.kind} is not started as processes`);
  return spec.start(n, topo, labtools, durationS.toFixed(3), slot);
}

/** The neighbour's metric over the window (relative times: 0 = window start). */
export function neighbourMetrics(raw: NeighbourRaw, windowMs: number): NeighbourMetrics {
  return neighbourKind(raw.kind).measure({ raw, windowMs, session: null });
}
