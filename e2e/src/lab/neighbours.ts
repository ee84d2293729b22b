/**
 * How each neighbour kind of `NEIGHBOUR_KINDS` (src/scenario/neighbour-kinds.ts: its
 * fields, metrics and labels) starts in the lab: processes in the namespaces, or, for
 * `video`, a second player session the runner starts. Senders live in the server
 * namespace and sinks in the client namespace, so their traffic crosses the bottleneck
 * in the video's direction (server -> client). Times are epoch milliseconds; both ends
 * share this machine's clock.
 */
import { join } from 'node:path';
import { round } from '../analysis/stats.js';
import { E2E_DIR, REPO_DIR } from '../paths.js';
import type { Neighbour, NeighbourKind, NeighbourOf, NeighbourRaw } from '../scenario/neighbour-kinds.js';
import { netnsExec } from './netns.js';
import { start, stop, waitForOutput, type Managed } from './processes.js';
import { ADDRESSES, type Topology } from './topology.js';

/** The measurement window, absolute and relative to the main video's playback start. */
export interface MeasurementWindow {
  startMs: number;
  endMs: number;
  startS: number;
  endS: number;
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

/** Paced UDP from the server side; the sink stamps each datagram with the kernel's receive time. */
async function startUdp(n: NeighbourOf<'udp'>, topo: Topology, labtools: string, duration: string, slot: number): Promise<RunningNeighbour> {
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
async function startTcp(n: NeighbourOf<'tcp'>, topo: Topology, labtools: string, duration: string, slot: number): Promise<RunningNeighbour> {
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
async function startHttp(n: NeighbourOf<'http'>, topo: Topology, _labtools: string, duration: string, _slot: number): Promise<RunningNeighbour> {
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

/** How a kind starts, at its window's start, to run `duration` seconds. */
type Starter<N extends Neighbour> = (n: N, topo: Topology, labtools: string, duration: string, slot: number) => Promise<RunningNeighbour>;

/** The kinds started as processes in the namespaces. */
const NEIGHBOUR_STARTERS: { readonly [K in NeighbourKind]?: Starter<NeighbourOf<K>> } = { udp: startUdp, tcp: startTcp, http: startHttp };

/** Starts a process neighbour now, to run for `durationS` (UDP, TCP, HTTP); `slot` > 0 for a second flow of a kind at once (its own ports). */
export async function startNeighbour(n: Neighbour, topo: Topology, labtools: string, durationS: number, slot = 0): Promise<RunningNeighbour> {
  const starter = NEIGHBOUR_STARTERS[n.kind] as Starter<Neighbour> | undefined;
  if (!starter) throw new Error(`neighbour ${n.kind} is not started as processes`);
  return starter(n, topo, labtools, durationS.toFixed(3), slot);
}

