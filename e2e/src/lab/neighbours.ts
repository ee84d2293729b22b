/**
 * The neighbours of thesis section 2.6, each its own experiment. Senders live in the
 * server namespace and sinks in the client namespace, so their traffic crosses the
 * bottleneck in the video's direction (server -> client). Times are epoch
 * milliseconds; both ends share this machine's clock.
 */
import { join } from 'node:path';
import { netnsExec } from './netns.js';
import { E2E_DIR, REPO_DIR } from './paths.js';
import { start, stop, waitForOutput, type Managed } from './processes.js';
import type { Neighbour } from './scenario.js';
import { round } from './stats.js';
import { ADDRESSES, type Topology } from './topology.js';

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
}

export interface RunningNeighbour {
  /** Stops the neighbour and returns what it measured, relative to `window`. */
  finish(window: MeasurementWindow): Promise<NeighbourRaw>;
}

const UDP_PORT = 5201;
const TCP_PORT = 5202;

function inNs(topo: Topology, side: 'server' | 'client', name: string, cmd: string, args: string[]): Managed {
  const [c, a] = netnsExec(topo.ns[side], cmd, args);
  return start(name, c, a, { cwd: REPO_DIR });
}

function tsxScript(file: string, args: string[]): [string, string[]] {
  return [process.execPath, ['--import', 'tsx', join(E2E_DIR, 'src', 'lab', 'neighbours', file), ...args]];
}

/** Starts a network neighbour now, to run for `durationS` (UDP, TCP, HTTP). */
export async function startNeighbour(
  n: Exclude<Neighbour, { kind: 'none' } | { kind: 'video' }>,
  topo: Topology,
  labtools: string,
  durationS: number,
): Promise<RunningNeighbour> {
  const duration = durationS.toFixed(3);
  if (n.kind === 'udp') {
    const sink = inNs(topo, 'client', 'udp sink', labtools, ['udp-recv', '--port', String(UDP_PORT)]);
    await waitForOutput(sink, 'ready\n');
    const source = inNs(topo, 'server', 'udp source', labtools, [
      'udp-send', '--dst', ADDRESSES.client, '--port', String(UDP_PORT),
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
  if (n.kind === 'tcp') {
    const sink = inNs(topo, 'client', 'tcp sink', labtools, ['tcp-recv', '--port', String(TCP_PORT)]);
    await waitForOutput(sink, 'ready\n');
    const source = inNs(topo, 'server', 'tcp source', labtools, [
      'tcp-send', '--dst', ADDRESSES.client, '--port', String(TCP_PORT), '--cc', n.congestionControl, '--duration-s', duration,
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
  for (const line of text.split('\n')) {
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
function bytesAt(samples: Array<[number, number]>, t: number): number {
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

/** The neighbour's metric over the window (relative times: 0 = window start). */
export function neighbourMetrics(raw: NeighbourRaw, windowMs: number): NeighbourMetrics {
  if (raw.kind === 'udp') {
    const owd = raw.packets.filter(([t]) => t >= 0 && t <= windowMs).map(([, d]) => d);
    const sorted = [...owd].sort((a, b) => a - b);
    return {
      udpOwdMs: owd.length ? owd.reduce((a, b) => a + b, 0) / owd.length : undefined,
      udpOwdP95Ms: sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(0.95 * sorted.length))] : undefined,
      udpLossPct: raw.sent > 0 ? Math.max(0, (100 * (raw.sent - raw.packets.length)) / raw.sent) : undefined,
    };
  }
  if (raw.kind === 'tcp') {
    if (raw.samples.length === 0) return {};
    const bytes = bytesAt(raw.samples, windowMs) - bytesAt(raw.samples, 0);
    return { tcpThroughputMbps: (bytes * 8) / (windowMs / 1000) / 1e6 };
  }
  const done = raw.requests.filter(([t, ms]) => t >= 0 && t + ms <= windowMs).map(([, ms]) => ms);
  return { httpResponseMs: done.length ? done.reduce((a, b) => a + b, 0) / done.length : undefined, httpRequests: done.length };
}
