/**
 * The lab network (README "Topology"):
 *
 *   server ns                  router ns                                   client ns
 *   video server      veth     rs ── policy route ─> TUN dl-down ─> rc      veth    Chromium
 *   neighbour senders ──────── rs <─ TUN dl-up <─ policy route ──── rc ─────────── neighbour sinks
 *   10.77.1.2/24               10.77.1.1          (delay line)   10.77.2.1         10.77.2.2/24
 *                                                  tbf R, limit Q on rc (server -> client)
 *
 * Everything the video and its neighbours send crosses the bottleneck in the same
 * direction, server -> client. This kernel has no netem, so propagation delay comes
 * from a user-space delay line (labtools delay): each direction is routed into its
 * own TUN device by input interface, held for half the RTT, and written back.
 */
import type { DelayLineStats } from '../analysis/records.js';
import { createNamespace, deleteNamespace, netnsExec, newStem } from './netns.js';
import { rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { run, start, stop, waitForOutput, type Managed } from './processes.js';

export interface LinkConfig {
  /** tbf's rate; null on a trace link. */
  rateMbps: number | null;
  /** A trace link: the delay line's opportunity schedule (a file written by the runner). */
  trace: { scheduleFile: string } | null;
  rttMs: number;
  queueBytes: number;
  /** Also shape client -> server (requests, ACKs) at the same rate and queue. */
  shapeUpstream: boolean;
  /** tbf bucket size: small, so the bottleneck releases at the line rate. */
  burstBytes: number;
  /** Congestion control of the server namespace (the video server, the HTTP neighbour). */
  serverCongestionControl: string;
}

export const ADDRESSES = {
  server: '10.77.1.2',
  routerServerSide: '10.77.1.1',
  client: '10.77.2.2',
  routerClientSide: '10.77.2.1',
} as const;

/** Interface names live inside each namespace, so they need not be unique on the host. */
const DEV = { server: 's0', routerToServer: 'rs', routerToClient: 'rc', client: 'c0', delayDown: 'dl-down', delayUp: 'dl-up' } as const;

export interface IdleRtt {
  minMs: number;
  avgMs: number;
  maxMs: number;
  mdevMs: number;
  count: number;
}

/** A trace link's delay line, and the file its restarts read their trace time from (`labtools delay --down-trace-start`). */
export interface TraceLine {
  process: Managed;
  startFile: string;
}

export interface Topology {
  ns: { server: string; router: string; client: string };
  link: LinkConfig;
  /** The device that holds the bottleneck qdisc (server -> client), in the router namespace; on a trace link the delay line holds the queue. */
  bottleneckDev: string;
  delayLine: Managed | null;
  /** A trace link: the delay line and the file its restarts read their trace time from. */
  traceLine: TraceLine | null;
}

async function inNs(ns: string, cmd: string, args: string[]): Promise<string> {
  const [c, a] = netnsExec(ns, cmd, args);
  return run(c, a);
}

async function sysctl(ns: string, settings: Record<string, string | number>): Promise<void> {
  await inNs(
    ns,
    'sysctl',
    ['-q', '-w', ...Object.entries(settings).map(([k, v]) => `${k}=${v}`)],
  );
}

export function tbfArgs(dev: string, link: LinkConfig): string[] {
  if (link.rateMbps === null) throw new Error('a trace link has no tbf');
  return ['qdisc', 'replace', 'dev', dev, 'root', 'tbf', 'rate', `${link.rateMbps}mbit`, 'burst', String(link.burstBytes), 'limit', String(link.queueBytes)];
}

/** Builds the three namespaces and the shaped, delayed link between them. */
export async function createTopology(link: LinkConfig, labtools: string): Promise<Topology> {
  const stem = newStem();
  const ns = { server: `${stem}-srv`, router: `${stem}-rtr`, client: `${stem}-cli` };
  const topo: Topology = { ns, link, bottleneckDev: DEV.routerToClient, delayLine: null, traceLine: null };
  // Where the runner writes the trace time of the next restart; the namespaces' stem keeps it apart from other runs'.
  const startFile = join(tmpdir(), `${stem}-trace-start`);
  try {
    for (const name of Object.values(ns)) await createNamespace(name);
    await run('ip', ['-n', ns.router, 'link', 'add', DEV.routerToServer, 'type', 'veth', 'peer', 'name', DEV.server, 'netns', ns.server]);
    await run('ip', ['-n', ns.router, 'link', 'add', DEV.routerToClient, 'type', 'veth', 'peer', 'name', DEV.client, 'netns', ns.client]);
    const common = { 'net.ipv6.conf.all.disable_ipv6': 1, 'net.ipv6.conf.default.disable_ipv6': 1 };
    // No cached ssthresh/RTT from the previous session's connection (tcp_metrics).
    const endpoint = { ...common, 'net.ipv4.tcp_no_metrics_save': 1 };
    await sysctl(ns.server, { ...endpoint, 'net.ipv4.tcp_congestion_control': link.serverCongestionControl });
    await sysctl(ns.client, endpoint);
    await sysctl(ns.router, { ...common, 'net.ipv4.ip_forward': 1, 'net.ipv4.conf.all.rp_filter': 0, 'net.ipv4.conf.default.rp_filter': 0 });
    const addr = async (n: string, dev: string, ip: string) => {
      await run('ip', ['-n', n, 'addr', 'add', `${ip}/24`, 'dev', dev]);
      await run('ip', ['-n', n, 'link', 'set', dev, 'up']);
    };
    await addr(ns.server, DEV.server, ADDRESSES.server);
    await addr(ns.router, DEV.routerToServer, ADDRESSES.routerServerSide);
    await addr(ns.router, DEV.routerToClient, ADDRESSES.routerClientSide);
    await addr(ns.client, DEV.client, ADDRESSES.client);
    for (const n of Object.values(ns)) await run('ip', ['-n', n, 'link', 'set', 'lo', 'up']);
    await run('ip', ['-n', ns.server, 'route', 'add', 'default', 'via', ADDRESSES.routerServerSide]);
    await run('ip', ['-n', ns.client, 'route', 'add', 'default', 'via', ADDRESSES.routerClientSide]);

    if (link.rttMs > 0 || link.trace) {
      const trace = link.trace ? ['--down-trace', link.trace.scheduleFile, '--down-queue-bytes', String(link.queueBytes), '--down-trace-start', startFile] : [];
      const [cmd, args] = netnsExec(ns.router, labtools, [
        'delay', '--down', DEV.delayDown, '--up', DEV.delayUp,
        '--down-ms', String(link.rttMs / 2), '--up-ms', String(link.rttMs / 2), ...trace, '--rt',
      ]);
      topo.delayLine = start('delay line', cmd, args);
      await waitForOutput(topo.delayLine, 'ready\n');
      if (link.trace) topo.traceLine = { process: topo.delayLine, startFile };
      for (const [dev, from, table] of [[DEV.delayDown, DEV.routerToServer, '100'], [DEV.delayUp, DEV.routerToClient, '101']] as const) {
        await run('ip', ['-n', ns.router, 'link', 'set', dev, 'up', 'txqueuelen', '10000']);
        await sysctl(ns.router, { [`net.ipv4.conf.${dev}.rp_filter`]: 0 });
        await run('ip', ['-n', ns.router, 'route', 'add', 'default', 'dev', dev, 'table', table]);
        await run('ip', ['-n', ns.router, 'rule', 'add', 'iif', from, 'lookup', table]);
      }
    }
    if (!link.trace) await run('tc', ['-n', ns.router, ...tbfArgs(DEV.routerToClient, link)]);
    if (link.shapeUpstream) await run('tc', ['-n', ns.router, ...tbfArgs(DEV.routerToServer, link)]);
    return topo;
  } catch (err) {
    await destroyTopology(topo);
    throw err;
  }
}

/** A constant link's droptail queue, changed between sessions (an experiment's own queue); and its rate (a fairness setting's). */
export async function setBottleneckQueue(topo: Topology, queueBytes: number, rateMbps: number | null = topo.link.rateMbps): Promise<void> {
  if (topo.link.trace) throw new Error("a trace link's queue is the delay line's, set when it starts");
  if (queueBytes === topo.link.queueBytes && rateMbps === topo.link.rateMbps) return;
  topo.link = { ...topo.link, queueBytes, rateMbps };
  await run('tc', ['-n', topo.ns.router, ...tbfArgs(DEV.routerToClient, topo.link)]);
  if (topo.link.shapeUpstream) await run('tc', ['-n', topo.ns.router, ...tbfArgs(DEV.routerToServer, topo.link)]);
}

/** The kernel's defaults: `tcp_min_tso_segs` 2, a veth's `gso_max_segs` 65535. */
const DEFAULT_TRAINS = { minTsoSegs: 2, gsoMaxSegs: 65535 } as const;

/**
 * The paced trains of the server namespace (server README, "Burst size"): with N,
 * every TSO/GSO packet the server's TCP builds is at most N segments and at least N
 * when it has them, so each paced train is N packets; null restores the kernel's
 * defaults. Set before the server starts: it reads the device's limits at start.
 */
export async function setServerTrains(topo: Topology, packets: number | null): Promise<void> {
  await sysctl(topo.ns.server, { 'net.ipv4.tcp_min_tso_segs': packets ?? DEFAULT_TRAINS.minTsoSegs });
  await run('ip', ['-n', topo.ns.server, 'link', 'set', 'dev', DEV.server, 'gso_max_segs', String(packets ?? DEFAULT_TRAINS.gsoMaxSegs)]);
}

/** Stops the delay line (returning its statistics) and deletes the namespaces. */
export async function destroyTopology(topo: Topology): Promise<DelayLineStats | null> {
  let stats: DelayLineStats | null = null;
  if (topo.delayLine) {
    await stop(topo.delayLine);
    const last = topo.delayLine.stdout().trim().split('\n').pop() ?? '';
    try {
      stats = last.startsWith('{') ? (JSON.parse(last) as DelayLineStats) : null;
    } catch {
      stats = null;
    }
    topo.delayLine = null;
  }
  if (topo.traceLine) rmSync(topo.traceLine.startFile, { force: true });
  topo.traceLine = null;
  for (const name of Object.values(topo.ns)) await deleteNamespace(name);
  return stats;
}

/** Idle RTT client -> server through the delay line, with ping (null without ping). */
export async function measureIdleRtt(topo: Topology, count = 40): Promise<IdleRtt | null> {
  const [cmd, args] = netnsExec(topo.ns.client, 'ping', ['-q', '-n', '-c', String(count), '-i', '0.05', ADDRESSES.server]);
  const out = await run(cmd, args, { allowFail: true, timeoutMs: 30_000 });
  return parsePingSummary(out);
}

export function parsePingSummary(out: string): IdleRtt | null {
  const m = /= ([\d.]+)\/([\d.]+)\/([\d.]+)\/([\d.]+) ms/.exec(out);
  const c = /(\d+) received/.exec(out);
  if (!m || !c) return null;
  return { minMs: Number(m[1]), avgMs: Number(m[2]), maxMs: Number(m[3]), mdevMs: Number(m[4]), count: Number(c[1]) };
}
