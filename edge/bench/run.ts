// npm run bench -w @sammy/edge [-- --json FILE] [--only cpu,trains]
//
// The Traffic Server edge beside the Node server and Debian's nginx, measured in
// one run across the server bench's veth pair between two namespaces (created and
// removed here, as the server bench does, with its helpers):
//   1. CPU per GB served, 16 keep-alive clients fetching 16 x 1 MB segments: nginx
//      (sendfile), the Node server unpaced and paced (kernel trains), the edge
//      unpaced and paced (from its cache, warmed first; the origin's CPU is shown),
//      each server after the server bench's unmeasured warm-up (unpaced, then paced);
//   2. the trains the edge sends (tcpdump on the sender): the kernel's own, and with
//      the namespace mechanism (tcp_min_tso_segs + gso_max_segs = 4), beside the Node
//      server's default plan (application-timed 4-packet bursts).
// Needs root (namespaces, tcpdump) and Traffic Server. Not part of `npm test`.
import { readFileSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { EDGE_APT_PACKAGES, ensureAptPackages } from '../../scripts/setup.mjs';
import type { LoadResult } from '@sammy/server/bench/client';
import { inBenchNet } from '@sammy/server/bench/harness';
import type { BenchNet } from '@sammy/server/bench/netns';
import {
  bucketCells, buildPacePreload, captureTrains, cpuSeconds, ensurePackage, fmt, inServer, measureCpu, pct, runClient, say, startNginx, startSammy, table, warmUpForCpu, type Server,
} from '@sammy/server/bench/run';
import { TRAIN_BUCKETS, type TrainSummary } from '@sammy/server/bench/trains';
import { startServer, stop } from '@sammy/server/process';
import { EDGE_CLI } from '../src/edge.js';

const MB = 1_000_000;
/** The server bench's CPU workload (its measureCpu fetches /media/seg-0..15.m4s). */
const CPU_FILES = 16;
const PACE_BYTES_PER_S = 2 * MB;
const TRAIN_RATES_BYTES_PER_S = [2 * MB, 8 * MB];
const TRAIN_N = 4;

/** The server bench's CPU row, and for the edge's rows the origin's CPU seconds during it. */
type CpuRowOut = Awaited<ReturnType<typeof measureCpu>> & { originCpuS?: number };

const loadLine = (): string => `load average ${loadavg().map((x) => x.toFixed(2)).join(' ')}`;

/** Traffic Server's pid: the edge command line's child (its CPU is the edge's; the command line only waits). */
function trafficServerPid(cliPid: number): number {
  for (const child of readFileSync(`/proc/${cliPid}/task/${cliPid}/children`, 'utf8').trim().split(/\s+/).map(Number)) {
    if (readFileSync(`/proc/${child}/cmdline`, 'utf8').includes('traffic_server')) return child;
  }
  throw new Error(`no traffic_server under pid ${cliPid}`);
}

async function startEdgeIn(net: BenchNet, work: string, originPort: number): Promise<Server> {
  const logFile = join(work, 'edge.jsonl');
  const edge = await startServer({
    name: 'edge',
    cli: EDGE_CLI,
    args: ['--origin', `http://${net.serverIp}:${originPort}`, '--host', net.serverIp, '--port', '0', '--log', logFile],
    wrap: inServer(net),
    timeoutMs: 120_000,
  });
  return { name: 'edge', process: edge.process, pid: trafficServerPid(edge.process.child.pid!), port: edge.port, logFile };
}

async function cpu(net: BenchNet, work: string, mediaDir: string, withNginx: boolean, origin: Server, edge: Server): Promise<CpuRowOut[]> {
  say(`## 1. CPU per GB served: 16 keep-alive clients fetching ${CPU_FILES} x 1 MB segments in a loop (paced: rtp=${(PACE_BYTES_PER_S * 8) / 1000})`);
  say();
  say(`before: ${loadLine()}`);
  const rows: CpuRowOut[] = [];
  if (withNginx) {
    // One nginx row: started, warmed up, measured, stopped.
    const nginxRow = async (name: string, port: number, o: Parameters<typeof startNginx>[5], paced: boolean, id: CpuRowOut['id'], config: string): Promise<void> => {
      const nginx = await startNginx(net, work, mediaDir, name, port, o);
      try {
        await warmUpForCpu(net, nginx);
        rows.push(await measureCpu(net, nginx, paced, id, config));
      } finally {
        await stop(nginx.process, { signal: 'SIGQUIT', graceMs: 5000 });
      }
    };
    await nginxRow('nginx', 18_080, { limitRateBytesPerS: null }, false, 'nginx', 'nginx (sendfile), no pacing');
    // nginx paced the way the edge paces: every connection capped by the kernel (the server bench's reference).
    const pacing = buildPacePreload(work);
    if ('unavailable' in pacing) say(`No kernel-paced nginx row: ${pacing.unavailable}`);
    else {
      const kernelPace = { preload: pacing.preload, bytesPerS: PACE_BYTES_PER_S };
      await nginxRow('nginx-paced', 18_082, { limitRateBytesPerS: null, kernelPace }, true, 'nginxPaced', `nginx, every connection capped at ${PACE_BYTES_PER_S / MB} MB/s by the kernel`);
    }
  }
  const node = await startSammy(net, work, mediaDir, 'node', ['--burst-mode', 'kernel']);
  try {
    await warmUpForCpu(net, node);
    rows.push(await measureCpu(net, node, false, 'unpaced', 'Node server unpaced'));
    rows.push(await measureCpu(net, node, true, 'pacedKernel', `Node server paced ${PACE_BYTES_PER_S / MB} MB/s, kernel trains`));
  } finally {
    await stop(node.process, { graceMs: 5000 });
  }
  await warmUpForCpu(net, edge);
  for (const [paced, id, config] of [
    [false, 'edgeUnpaced', 'edge (Traffic Server + plugin) unpaced, cache hits'],
    [true, 'edgePaced', `edge paced ${PACE_BYTES_PER_S / MB} MB/s, cache hits`],
  ] as const) {
    const originBefore = cpuSeconds(origin.pid);
    const row = await measureCpu(net, edge, paced, id, config);
    rows.push({ ...row, originCpuS: cpuSeconds(origin.pid) - originBefore });
  }
  say(`after: ${loadLine()}`);
  say();
  const nginxPerGB = rows.find((r) => r.id === 'nginx')?.cpuSPerGB;
  table(
    ['configuration', 'GB served', 'seconds', 'CPU s', 'CPU s per GB', 'x nginx', 'machine CPU s per GB', 'origin CPU s'],
    rows.map((r) => [
      r.config,
      fmt(r.bytes / 1e9, 3),
      fmt(r.elapsedS, 1),
      fmt(r.cpuS, 2),
      fmt(r.cpuSPerGB, 2),
      nginxPerGB ? fmt(r.cpuSPerGB / nginxPerGB) : '-',
      fmt(r.machineCpuSPerGB, 2),
      r.originCpuS === undefined ? '-' : fmt(r.originCpuS, 2),
    ]),
  );
  say();
  const row = (id: CpuRowOut['id']): CpuRowOut | undefined => rows.find((r) => r.id === id);
  const perGB = (id: CpuRowOut['id']): number => row(id)!.cpuSPerGB;
  say(`CPU per GB, edge paced / edge unpaced: ${fmt(perGB('edgePaced') / perGB('edgeUnpaced'))}x; Node paced / Node unpaced: ${fmt(perGB('pacedKernel') / perGB('unpaced'))}x`);
  say(`CPU per GB, edge / Node server: unpaced ${fmt(perGB('edgeUnpaced') / perGB('unpaced'))}x, paced ${fmt(perGB('edgePaced') / perGB('pacedKernel'))}x`);
  const nginxPaced = row('nginxPaced');
  if (nginxPaced !== undefined) {
    const machine = (id: CpuRowOut['id']): number => row(id)!.machineCpuSPerGB / nginxPaced.machineCpuSPerGB;
    say(`CPU per GB against nginx paced the same way: edge ${fmt(perGB('edgePaced') / nginxPaced.cpuSPerGB)}x, Node server ${fmt(perGB('pacedKernel') / nginxPaced.cpuSPerGB)}x; the machine's: edge ${fmt(machine('edgePaced'))}x, Node server ${fmt(machine('pacedKernel'))}x`);
  }
  say();
  return rows;
}

async function trains(net: BenchNet, work: string, mediaDir: string, edge: Server): Promise<unknown[]> {
  say(`## 2. Trains on the wire (tcpdump on the sender veth; packets < 50 us apart; first 10 packets skipped); N = ${TRAIN_N}`);
  say();
  const header = ['rate', 'sender', 'kernel settings', ...TRAIN_BUCKETS.map(([lo, hi]) => (lo === hi ? `${lo}` : hi === Infinity ? `${lo}+` : `${lo}-${hi}`)), 'max', `in trains <= ${TRAIN_N}`, 'achieved/requested'];
  const rows: string[][] = [];
  const results: unknown[] = [];
  const record = (rate: number, sender: string, settings: string, s: TrainSummary & { achievedRatio: number }): void => {
    rows.push([`${rate / MB} MB/s`, sender, settings, ...bucketCells(s), String(s.maxPackets), pct(s.packetsInTrainsAtMostN), fmt(s.achievedRatio, 3)]);
    results.push({ rateBytesPerS: rate, sender, settings, ...s });
  };
  for (const cap of [null, TRAIN_N]) {
    // The edge needs no restart: the kernel reads both settings per connection.
    net.setTrainCap(cap);
    const settings = cap === null ? 'defaults' : `tcp_min_tso_segs=${cap} gso_max_segs=${cap}`;
    try {
      for (const rate of TRAIN_RATES_BYTES_PER_S) record(rate, 'edge', settings, await captureTrains(net, work, edge, `burst-${rate / MB}.m4s`, rate, TRAIN_N));
    } finally {
      net.setTrainCap(null);
    }
  }
  const node = await startSammy(net, work, mediaDir, 'trains-node', ['--burst-packets', String(TRAIN_N)]);
  try {
    for (const rate of TRAIN_RATES_BYTES_PER_S) record(rate, `Node server, --burst-packets ${TRAIN_N}`, 'defaults', await captureTrains(net, work, node, `burst-${rate / MB}.m4s`, rate, TRAIN_N));
  } finally {
    await stop(node.process, { graceMs: 5000 });
  }
  table(header, rows);
  say();
  return results;
}

async function main(): Promise<number> {
  const { values } = parseArgs({ options: { json: { type: 'string' }, only: { type: 'string' } }, strict: true });
  if (process.platform !== 'linux' || process.getuid?.() !== 0) {
    say('SKIP: the edge bench needs Linux and root (network namespaces, tcpdump); run it as root: sudo npm run bench -w @sammy/edge');
    return 0;
  }
  if (!ensurePackage('iproute2') || !ensurePackage('tcpdump')) return 1;
  if (ensureAptPackages(EDGE_APT_PACKAGES).length > 0) {
    say(`SKIP: the edge bench needs ${EDGE_APT_PACKAGES.join(', ')}`);
    return 1;
  }
  const withNginx = ensurePackage('nginx-light');
  const writeMedia = (mediaDir: string): void => {
    for (let i = 0; i < CPU_FILES; i++) writeFileSync(join(mediaDir, `seg-${i}.m4s`), randomBytes(MB));
    for (const rate of TRAIN_RATES_BYTES_PER_S) writeFileSync(join(mediaDir, `burst-${rate / MB}.m4s`), randomBytes(Math.round(rate * 1.5)));
  };
  const only = values.only?.split(',') ?? ['cpu', 'trains'];
  const startedMs = performance.now();
  await inBenchNet({ workPrefix: 'sammy-edge-bench-', say, writeMedia }, async ({ net, work, mediaDir, congestionControl: cc }) => {
    say(`# Sammy edge bench: veth ${net.serverNs} <-> ${net.clientNs}, congestion control ${cc}, ${new Date().toISOString()}, ${loadLine()}`);
    say();
    const origin = await startSammy(net, work, mediaDir, 'origin', ['--pacing', 'off']);
    const edge = await startEdgeIn(net, work, origin.port);
    const result: Record<string, unknown> = { congestionControl: cc, loadAverageAtStart: loadavg() };
    try {
      // Fill the edge's cache, so what follows measures the edge alone.
      const urls = [...Array.from({ length: CPU_FILES }, (_, i) => `seg-${i}.m4s`), ...TRAIN_RATES_BYTES_PER_S.map((r) => `burst-${r / MB}.m4s`)];
      await runClient<LoadResult>(net, { kind: 'load', urls: urls.map((u) => `http://${net.serverIp}:${edge.port}/media/${u}`), headers: {}, connections: 2, targetBytes: 40 * MB, maxS: 60 });
      if (only.includes('cpu')) result['cpu'] = await cpu(net, work, mediaDir, withNginx, origin, edge);
      if (only.includes('trains')) result['trains'] = await trains(net, work, mediaDir, edge);
    } finally {
      await stop(edge.process, { graceMs: 15_000 });
      await stop(origin.process, { graceMs: 5000 });
    }
    result['loadAverageAtEnd'] = loadavg();
    say(`bench took ${fmt((performance.now() - startedMs) / 1000, 0)} s; ${loadLine()}`);
    if (values.json !== undefined) writeFileSync(resolve(process.env['INIT_CWD'] ?? '.', values.json), JSON.stringify(result, null, 2));
  });
  return 0;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(`edge bench: ${(err as Error).stack ?? String(err)}`);
    process.exit(1);
  },
);
