/**
 * The neighbours of thesis section 2.6, each its own experiment, and the one registry
 * of neighbour kinds (`NEIGHBOUR_KINDS`): per kind, its scenario fields with their
 * checks and defaults, what it measures, and how the report names it. How a kind
 * starts (processes in the lab's namespaces) is the lab's (`src/lab/neighbours.ts`),
 * so the scenario and the report read this without loading process code. A new kind
 * is one entry here plus its starter there (docs/lab-scenarios.md lists the kinds for
 * users). Times are milliseconds relative to the measurement window's start.
 */
import type { Arm, SessionQoE } from '@sammy/player/abr';
import { fixed } from '../analysis/stats.js';

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

/** The neighbour of one kind. */
export type NeighbourOf<K extends NeighbourKind> = Extract<Neighbour, { kind: K }>;

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
  /** A second video session's result (its QoE). */
  session: { qoe: SessionQoE | null } | null;
}

export interface NeighbourKindSpec<N extends Neighbour> {
  /** Scenario fields besides `kind` and `arms` (`startS`, `endS` follow when `windowed`), in the order written. */
  fields: readonly string[];
  /** Runs over a window `startS`..`endS` after playback start. */
  windowed: boolean;
  /** Checks `fields` and fills their defaults. */
  parse(o: Obj, path: string, check: FieldChecks): Omit<N, 'kind' | 'startS' | 'endS'>;
  /**
   * Started as processes in the namespaces (`NEIGHBOUR_STARTERS` in src/lab/neighbours.ts),
   * or: a second player session of this arm beside the main one, at its window's start.
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
export const NEIGHBOUR_KINDS: { readonly [K in NeighbourKind]: NeighbourKindSpec<NeighbourOf<K>> } = {
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
    measure: fromRaw('tcp', tcpMetrics),
    metrics: [{ name: 'tcpThroughputMbps', label: 'TCP neighbour throughput (Mbit/s)' }],
    thesisChangePct: 25,
    describe: (m) => `tcp ${fixed(m.tcpThroughputMbps)} Mbps`,
  },
  http: {
    fields: ['responseBytes', 'gapMs'],
    windowed: true,
    parse: (o, path, c) => ({ responseBytes: c.int(o, path, 'responseBytes', 1, 1e9, 3_000_000), gapMs: c.num(o, path, 'gapMs', 0, 60_000, 0) }),
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

/** The neighbour's metric over the window (relative times: 0 = window start). */
export function neighbourMetrics(raw: NeighbourRaw, windowMs: number): NeighbourMetrics {
  return neighbourKind(raw.kind).measure({ raw, windowMs, session: null });
}
