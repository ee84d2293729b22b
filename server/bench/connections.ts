// Bench section `connections` (npm run bench -w @sammy/server -- --only connections):
// 10,000 concurrent paced keep-alive connections against one server (its default
// workers, one per core), from several client processes in the client namespace;
// then the same through nginx with the Sammy module (one worker, the tail held).
// Each connection asks for a paced segment, then the next as soon as the last byte
// is in, for the hold time; then the clients close everything at once.
//
// Measured on the server's processes (the primary and its workers, from /proc):
// descriptors and resident memory before, at the peak and after; the Node server's
// own count of paced responses in flight (/metrics, summed over workers; the module
// has no such gauge); established connections (ss in the server namespace); every
// error the clients saw; and the achieved rates of the server's telemetry lines.
//
// The rate is low (20 kbit/s, with --min-rate-kbps 20) so that 10,000 of them,
// 200 Mbit/s together, leave this 2-core machine room for the clients: memory and
// descriptors per connection do not depend on the rate, CPU does (the cpu section).
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { childPids } from '../src/process.js';
import type { ResponseTelemetry } from '../src/telemetry.js';
import type { ConnectionsJob, ConnectionsResult } from './connections-client.js';
import { fmt, median, quantile, type BenchKit, type BenchServer } from './kit.js';

const CONNECTIONS = 10_000;
const CLIENT_PROCESSES = 4;
const CONNECT_CONCURRENCY_PER_PROCESS = 50;
export const RTP_KBPS = 20;
/** 32 KB: the first response on a connection sends 10 packets unpaced (Linux never paces them), then ~7 s paced; later ones ~13 s. */
const FILE_BYTES = 32_000;
/** Client processes need a few seconds to start (tsx) before they all begin at once. */
const START_DELAY_MS = 8000;
/** Time allowed for opening every connection, then the time they are all held. */
const RAMP_S = 20;
const HOLD_S = 25;
/** Descriptors for the run (server and clients inherit the bench process's limit): sockets and open files, with room. */
const NOFILE = 65_536;
/** The least that will do: one server process holding every connection, plus files and the runtime's own. */
const NOFILE_NEEDED = CONNECTIONS + 2048;
const PER_PROCESS = Math.ceil(CONNECTIONS / CLIENT_PROCESSES);
const SAMPLE_MS = 500;
const MODULE_PORT = 18_120;
/**
 * nginx with the module: one worker holds every connection (worker_connections above
 * CONNECTIONS), and its open_file_cache shares one descriptor for the segment among
 * all responses. Without it each response in flight holds the file open (the held
 * tail too), two descriptors a connection: 20,000 and more, the hard limit here.
 */
const MODULE_WORKER_CONNECTIONS = CONNECTIONS + 2048;
const MODULE_OPEN_FILE_CACHE_MAX = 64;
/** Descriptors a client process needs beyond its connections (the runtime's own). */
const CLIENT_SPARE_FDS = 1024;

/** achieved / applied of whole responses: the first on each connection (its first 10 packets leave unpaced), and the later ones. */
export interface RateRatios {
  firstMedian: number | null;
  later: { p10: number; median: number; p90: number } | null;
}

function rateRatios(firstKbps: number[], laterKbps: number[]): RateRatios {
  const first = firstKbps.map((kbps) => kbps / RTP_KBPS);
  const later = laterKbps.map((kbps) => kbps / RTP_KBPS);
  return {
    firstMedian: first.length === 0 ? null : median(first),
    later: later.length === 0 ? null : { p10: quantile(later, 0.1), median: median(later), p90: quantile(later, 0.9) },
  };
}

/** What the server's telemetry lines of the run (after its start) say about the rate it achieved. */
export interface ConnectionsRates extends RateRatios {
  lines: number;
  /** Responses the clients' close at the deadline cut short. */
  aborted: number;
  /** Whole responses whose line does not say `paced` at RTP_KBPS. */
  notPacedAtRate: number;
}

export interface ConnectionsFigures {
  server: string;
  target: number;
  /** Peak of the clients' connections established at once (ss in the server namespace, less the metrics scraper's). */
  concurrent: number;
  /** Peak of the server's paced responses in flight at once (sammy_media_responses_active, all workers); null for nginx. */
  pacedInFlightPeak: number | null;
  /** /metrics scrapes during the run, and those a worker did not answer in time (not counted in `concurrent`). */
  scrapes: number;
  partialScrapes: number;
  errors: number;
  errorKinds: ConnectionsResult['errors'];
  errorSamples: string[];
  fdsBefore: number;
  fdsPeak: number;
  fdsAfter: number;
  rssBeforeMB: number;
  rssPeakMB: number;
  rssAfterMB: number;
  /** (rssPeakMB - rssBeforeMB) / concurrent, in KB. */
  rssPerConnectionKB: number;
  /** Server CPU seconds (all its processes) from the first connection to the last close. */
  serverCpuS: number;
  /** Seconds from the first connection to the last close. */
  runS: number;
  /** Seconds until every client process had all its connections open. */
  allOpenAfterS: number | null;
  responses: number;
  bodyBytes: number;
  /** The clients' own figure: body bits over the time from each request to its last byte. */
  clientRates: RateRatios;
  /**
   * The server's lines' figure (bytes over durationMs). The module's line ends when the
   * held byte is handed to the kernel, which sends it one train at the old rate later.
   */
  rates: ConnectionsRates;
  /** The module's counters (sammy_metrics) after the run; null for the Node server. */
  moduleCounters: Record<string, number> | null;
  workers: number;
  rtpKbps: number;
  fileBytes: number;
  holdS: number;
}

export interface ConnectionsSection {
  runs: ConnectionsFigures[];
  /** Why nginx with the module was not run, or null. */
  nginxModuleSkipped: string | null;
}

/** Server processes: the primary and its workers. */
const serverPids = (server: BenchServer): number[] => [server.pid, ...childPids(server.pid)];

function fdCount(pids: number[]): number {
  return pids.reduce((sum, pid) => {
    try {
      return sum + readdirSync(`/proc/${pid}/fd`).length;
    } catch {
      return sum;
    }
  }, 0);
}

function rssMB(pids: number[]): number {
  return pids.reduce((sum, pid) => {
    try {
      const kb = Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
      return sum + kb / 1024;
    } catch {
      return sum;
    }
  }, 0);
}

function established(kit: BenchKit, port: number): number {
  const out = spawnSync('ip', kit.net.inServer(['ss', '-Htn', 'state', 'established', 'sport', '=', `:${port}`]), { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  return out.status === 0 ? out.stdout.split('\n').filter(Boolean).length : 0;
}

/** The bench process's descriptor limit as `soft:hard`. */
function nofile(): string {
  const out = spawnSync('prlimit', ['--pid', String(process.pid), '--nofile', '--noheadings', '--output', 'SOFT,HARD'], { encoding: 'utf8' });
  return out.stdout.trim().split(/\s+/).join(':');
}

const setNofile = (limit: string): boolean => spawnSync('prlimit', ['--pid', String(process.pid), `--nofile=${limit}`]).status === 0;

/**
 * Raises the bench process's descriptor limit for the run (the servers and clients
 * started from it inherit it): to NOFILE where root may raise the hard limit
 * (CAP_SYS_RESOURCE), else the soft limit to the hard one, which must still leave
 * one process room for every connection. Returns the limit to restore.
 */
function raiseNofile(): string {
  const before = nofile();
  if (setNofile(`${NOFILE}:${NOFILE}`)) return before;
  const hard = before.split(':')[1]!;
  if (hard !== 'unlimited' && Number(hard) < NOFILE_NEEDED) {
    throw new Error(`bench connections: the descriptor limit's hard value is ${hard} and this process may not raise it (no CAP_SYS_RESOURCE); ${NOFILE_NEEDED} are needed (ulimit -Hn ${NOFILE_NEEDED} before the bench)`);
  }
  setNofile(`${hard}:${hard}`);
  return before;
}

/**
 * Throws unless the client namespace can open every connection: enough local ports,
 * and descriptors for each client process's share (they inherit the bench's limit).
 */
function checkClientSide(kit: BenchKit, perProcess: number): void {
  const sysctl = spawnSync('ip', kit.net.inClient(['sysctl', '-n', 'net.ipv4.ip_local_port_range']), { encoding: 'utf8' });
  const range = sysctl.stdout.trim().split(/\s+/).map(Number);
  const ports = range.length === 2 ? range[1]! - range[0]! + 1 : NaN;
  if (!(ports >= CONNECTIONS)) {
    throw new Error(
      `bench connections: the client namespace has ${ports} local ports (net.ipv4.ip_local_port_range ${range.join('-')}), ` +
        `fewer than ${CONNECTIONS} connections`,
    );
  }
  const soft = Number(nofile().split(':')[0]);
  if (soft < perProcess + CLIENT_SPARE_FDS) {
    throw new Error(
      `bench connections: a client process may open ${soft} descriptors, ` +
        `fewer than its ${perProcess} connections and ${CLIENT_SPARE_FDS} spare`,
    );
  }
}

/** The run's lines: achieved / applied of whole responses, the first on each connection apart. */
export function ratesOf(lines: ResponseTelemetry[]): ConnectionsRates {
  const whole = lines.filter((t) => !t.aborted);
  const pacedAtRate = whole.filter((t) => t.pacing === 'paced' && t.appliedRateKbps === RTP_KBPS && t.durationMs > 0);
  const seen = new Set<string>();
  const first: number[] = [];
  const later: number[] = [];
  for (const t of [...pacedAtRate].sort((a, b) => a.time - b.time)) {
    const connection = `${t.remoteAddress}:${t.remotePort}`;
    // From bytes and duration: achievedRateKbps is rounded to 1 kbps, 5% of this rate.
    (seen.has(connection) ? later : first).push((t.bytes * 8) / t.durationMs);
    seen.add(connection);
  }
  return {
    lines: lines.length,
    aborted: lines.length - whole.length,
    notPacedAtRate: whole.length - pacedAtRate.length,
    ...rateRatios(first, later),
  };
}

/** The module's counters (`sammy_metrics`), fetched from the client namespace; null when they cannot be read. */
function moduleCounters(kit: BenchKit, port: number): Record<string, number> | null {
  const url = `http://${kit.net.serverIp}:${port}/metrics`;
  const out = spawnSync('ip', kit.net.inClient(['curl', '-sf', '--max-time', '5', url]), { encoding: 'utf8' });
  if (out.status !== 0) return null;
  const counters: Record<string, number> = {};
  for (const line of out.stdout.split('\n')) {
    const m = /^(\S+) (\d+)$/.exec(line);
    if (m !== null) counters[m[1]!] = Number(m[2]);
  }
  return counters;
}

async function settle(probe: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!probe() && Date.now() < deadline) await new Promise((r) => setTimeout(r, SAMPLE_MS));
}

/**
 * One server's run: warm-up, baseline, 10,000 connections held, then everything closed
 * and settled. The Node server's paced responses in flight are scraped from its
 * /metrics during the run; the module's counters are read once after it.
 */
async function measure(kit: BenchKit, server: BenchServer, label: string, isModule: boolean): Promise<ConnectionsFigures> {
  const scrapeMetrics = !isModule;
  const job = (connections: number, startAtEpochMs: number, holdUntilEpochMs: number, scrape: boolean): ConnectionsJob => ({
    host: kit.net.serverIp,
    port: server.port,
    connections,
    path: '/media/conn-seg.m4s',
    fileBytes: FILE_BYTES,
    rtpKbps: RTP_KBPS,
    connectConcurrency: CONNECT_CONCURRENCY_PER_PROCESS,
    startAtEpochMs,
    holdUntilEpochMs,
    scrapeMetrics: scrape,
  });
  // Warm up (code paths compiled, pools made), then let the server settle: the baseline.
  const warmAt = Date.now() + 3000;
  await kit.runClient<ConnectionsResult>('bench/connections-client.ts', job(200, warmAt, warmAt + 3000, false));
  await new Promise((r) => setTimeout(r, 3000));
  const pids = serverPids(server);
  const fdsBefore = fdCount(pids);
  const rssBeforeMB = rssMB(pids);

  const startAt = Date.now() + START_DELAY_MS;
  const holdUntil = startAt + (RAMP_S + HOLD_S) * 1000;
  let fdsPeak = fdsBefore;
  let rssPeakMB = rssBeforeMB;
  let establishedPeak = 0;
  const cpuBefore = kit.cpuSeconds(server.pid);
  const sampler = setInterval(() => {
    const now = serverPids(server);
    fdsPeak = Math.max(fdsPeak, fdCount(now));
    rssPeakMB = Math.max(rssPeakMB, rssMB(now));
    if (Date.now() > startAt) establishedPeak = Math.max(establishedPeak, established(kit, server.port));
  }, SAMPLE_MS);
  let results: ConnectionsResult[];
  try {
    results = await Promise.all(
      Array.from({ length: CLIENT_PROCESSES }, (_, i) =>
        kit.runClient<ConnectionsResult>(
          'bench/connections-client.ts',
          job(Math.min(PER_PROCESS, CONNECTIONS - i * PER_PROCESS), startAt, holdUntil, scrapeMetrics && i === 0),
        ),
      ),
    );
  } catch (err) {
    clearInterval(sampler);
    throw err;
  }
  const serverCpuS = kit.cpuSeconds(server.pid) - cpuBefore;
  const runS = (Date.now() - startAt) / 1000;
  // Every client is gone: the server's descriptors should return to the baseline.
  // Sampling goes on meanwhile: closing 10,000 responses (their lines) costs memory too.
  await settle(() => fdCount(serverPids(server)) <= fdsBefore, 20_000);
  clearInterval(sampler);
  const after = serverPids(server);
  const sum = (f: (r: ConnectionsResult) => number): number => results.reduce((s, r) => s + f(r), 0);
  const errorKinds = {
    connect: sum((r) => r.errors.connect),
    connection: sum((r) => r.errors.connection),
    status: sum((r) => r.errors.status),
    short: sum((r) => r.errors.short),
  };
  // The scraping client holds one connection of its own throughout.
  const concurrent = Math.max(0, establishedPeak - (scrapeMetrics ? 1 : 0));
  return {
    server: label,
    target: CONNECTIONS,
    concurrent,
    pacedInFlightPeak: scrapeMetrics ? (results[0]!.activeResponsesPeak ?? 0) : null,
    scrapes: results[0]!.scrapes,
    partialScrapes: results[0]!.partialScrapes,
    errors: errorKinds.connect + errorKinds.connection + errorKinds.status + errorKinds.short,
    errorKinds,
    errorSamples: results.flatMap((r) => r.errorSamples).slice(0, 5),
    fdsBefore,
    fdsPeak,
    fdsAfter: fdCount(after),
    rssBeforeMB,
    rssPeakMB,
    rssAfterMB: rssMB(after),
    rssPerConnectionKB: concurrent > 0 ? ((rssPeakMB - rssBeforeMB) * 1024) / concurrent : NaN,
    serverCpuS,
    runS,
    allOpenAfterS: results.every((r) => r.allOpenAfterMs !== null) ? Math.max(...results.map((r) => r.allOpenAfterMs!)) / 1000 : null,
    responses: sum((r) => r.responses),
    bodyBytes: sum((r) => r.bodyBytes),
    clientRates: rateRatios(results.flatMap((r) => r.firstResponseKbps), results.flatMap((r) => r.laterResponseKbps)),
    rates: ratesOf(kit.telemetry(server).filter((t) => t.time >= startAt)),
    moduleCounters: isModule ? moduleCounters(kit, server.port) : null,
    workers: pids.length - 1 || 1,
    rtpKbps: RTP_KBPS,
    fileBytes: FILE_BYTES,
    holdS: HOLD_S,
  };
}

/** Starts a server, measures it, stops it. */
async function onServer(
  kit: BenchKit,
  start: () => Promise<BenchServer | null>,
  label: string,
  isModule: boolean,
): Promise<ConnectionsFigures> {
  const server = await start();
  if (server === null) throw new Error(`bench connections: ${label} did not start`);
  try {
    return await measure(kit, server, label, isModule);
  } finally {
    await kit.stop(server);
  }
}

const ratio = (x: number | null | undefined): string => (x == null ? '-' : fmt(x, 3));
const ratioCells = (r: RateRatios): string[] => [
  ratio(r.firstMedian),
  r.later === null ? '-' : `${ratio(r.later.p10)} / ${ratio(r.later.median)} / ${ratio(r.later.p90)}`,
];

export async function connections(kit: BenchKit): Promise<ConnectionsSection> {
  kit.say(`## ${CONNECTIONS.toLocaleString('en')} concurrent paced keep-alive connections (${RTP_KBPS} kbit/s each, ${FILE_BYTES / 1000} KB segments, held ${HOLD_S} s)`);
  kit.say();
  writeFileSync(join(kit.mediaDir, 'conn-seg.m4s'), randomBytes(FILE_BYTES));
  const previousNofile = raiseNofile();
  try {
    checkClientSide(kit, PER_PROCESS);
    const nodeArgs = ['--min-rate-kbps', String(RTP_KBPS), '--log-level', 'error'];
    const startNode = (): Promise<BenchServer> => kit.startSammy('connections', nodeArgs);
    const runs = [await onServer(kit, startNode, 'sammy (Node)', false)];
    const skipped = kit.nginxModuleUnavailable;
    if (skipped !== null) kit.say(`No run through nginx with the Sammy module: ${skipped}`);
    else {
      const nofileLimit = Number(nofile().split(':')[0]);
      const start = (): Promise<BenchServer | null> =>
        kit.startNginx('connections-nginx-module', MODULE_PORT, {
          limitRateBytesPerS: null,
          sammy: { pacing: true, tailHold: true, minRateKbps: RTP_KBPS },
          workerConnections: MODULE_WORKER_CONNECTIONS,
          rlimitNofile: nofileLimit,
          openFileCacheMax: MODULE_OPEN_FILE_CACHE_MAX,
        });
      runs.push(await onServer(kit, start, 'nginx + Sammy module (tail held)', true));
    }
    kit.table(
      [
        'server',
        'connections',
        'concurrent (established, peak)',
        'paced responses in flight (peak)',
        'all open after s',
        'errors',
        'responses',
        'achieved / applied at the client: first response (median)',
        'later (p10 / median / p90)',
        "in the server's lines: first",
        'later',
        'lines not paced at rtp',
        'lines aborted',
        'fds before / peak / after', 'RSS MB before / peak / after', 'RSS per connection KB', 'server CPU s / run s', 'workers',
      ],
      runs.map((f) => [
        f.server,
        String(CONNECTIONS),
        String(f.concurrent),
        f.pacedInFlightPeak === null ? '-' : String(f.pacedInFlightPeak),
        f.allOpenAfterS === null ? '-' : fmt(f.allOpenAfterS, 1),
        String(f.errors),
        String(f.responses),
        ...ratioCells(f.clientRates),
        ...ratioCells(f.rates),
        String(f.rates.notPacedAtRate),
        String(f.rates.aborted),
        `${f.fdsBefore} / ${f.fdsPeak} / ${f.fdsAfter}`,
        `${fmt(f.rssBeforeMB, 0)} / ${fmt(f.rssPeakMB, 0)} / ${fmt(f.rssAfterMB, 0)}`,
        fmt(f.rssPerConnectionKB, 1),
        `${fmt(f.serverCpuS, 1)} / ${fmt(f.runS, 0)}`,
        String(f.workers),
      ]),
    );
    for (const f of runs) {
      if (f.errors > 0) kit.say(`${f.server} errors: ${JSON.stringify(f.errorKinds)}; e.g. ${f.errorSamples.join('; ')}`);
      if (f.moduleCounters === null) continue;
      kit.say(`${f.server} counters after the run: ${Object.entries(f.moduleCounters).map(([name, n]) => `${name} ${n}`).join(', ')}`);
    }
    kit.say();
    return { runs, nginxModuleSkipped: skipped };
  } finally {
    setNofile(previousNofile);
  }
}
