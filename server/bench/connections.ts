// Bench section `connections` (npm run bench -w @sammy/server -- --only connections):
// 10,000 concurrent paced keep-alive connections against one server (its default
// workers, one per core), from several client processes in the client namespace.
// Each connection asks for a paced segment, then the next as soon as the last byte
// is in, for the hold time; then the clients close everything at once.
//
// Measured on the server's processes (the primary and its workers, from /proc):
// descriptors and resident memory before, at the peak and after; the server's own
// count of paced responses in flight (/metrics, summed over workers); established
// connections (ss in the server namespace); and every error the clients saw.
//
// The rate is low (20 kbit/s, with --min-rate-kbps 20) so that 10,000 of them,
// 200 Mbit/s together, leave this 2-core machine room for the clients: memory and
// descriptors per connection do not depend on the rate, CPU does (the cpu section).
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { childPids } from '../src/process.js';
import type { ConnectionsJob, ConnectionsResult } from './connections-client.js';
import { fmt, type BenchKit, type BenchServer } from './kit.js';

const CONNECTIONS = 10_000;
const CLIENT_PROCESSES = 4;
const CONNECT_CONCURRENCY_PER_PROCESS = 50;
const RTP_KBPS = 20;
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
const SAMPLE_MS = 500;

export interface ConnectionsFigures {
  target: number;
  /** Peak of the clients' connections established at once (ss in the server namespace, less the metrics scraper's). */
  concurrent: number;
  /** Peak of the server's paced responses in flight at once (sammy_media_responses_active, all workers). */
  pacedInFlightPeak: number;
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
  workers: number;
  rtpKbps: number;
  fileBytes: number;
  holdS: number;
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

async function settle(probe: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!probe() && Date.now() < deadline) await new Promise((r) => setTimeout(r, SAMPLE_MS));
}

export async function connections(kit: BenchKit): Promise<ConnectionsFigures> {
  kit.say(`## ${CONNECTIONS.toLocaleString('en')} concurrent paced keep-alive connections (${RTP_KBPS} kbit/s each, ${FILE_BYTES / 1000} KB segments, held ${HOLD_S} s)`);
  kit.say();
  writeFileSync(join(kit.mediaDir, 'conn-seg.m4s'), randomBytes(FILE_BYTES));
  const previousNofile = raiseNofile();
  const server = await kit.startSammy('connections', ['--min-rate-kbps', String(RTP_KBPS), '--log-level', 'error']);
  try {
    const job = (connections: number, startAtEpochMs: number, holdUntilEpochMs: number, scrapeMetrics: boolean): ConnectionsJob => ({
      host: kit.net.serverIp,
      port: server.port,
      connections,
      path: '/media/conn-seg.m4s',
      fileBytes: FILE_BYTES,
      rtpKbps: RTP_KBPS,
      connectConcurrency: CONNECT_CONCURRENCY_PER_PROCESS,
      startAtEpochMs,
      holdUntilEpochMs,
      scrapeMetrics,
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
    const perProcess = Math.ceil(CONNECTIONS / CLIENT_PROCESSES);
    let results: ConnectionsResult[];
    try {
      results = await Promise.all(
        Array.from({ length: CLIENT_PROCESSES }, (_, i) =>
          kit.runClient<ConnectionsResult>('bench/connections-client.ts', job(Math.min(perProcess, CONNECTIONS - i * perProcess), startAt, holdUntil, i === 0)),
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
    const errorKinds = { connect: sum((r) => r.errors.connect), connection: sum((r) => r.errors.connection), status: sum((r) => r.errors.status), short: sum((r) => r.errors.short) };
    // The scraping client holds one connection of its own throughout.
    const concurrent = Math.max(0, establishedPeak - 1);
    const figures: ConnectionsFigures = {
      target: CONNECTIONS,
      concurrent,
      pacedInFlightPeak: results[0]!.activeResponsesPeak ?? 0,
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
      workers: pids.length - 1 || 1,
      rtpKbps: RTP_KBPS,
      fileBytes: FILE_BYTES,
      holdS: HOLD_S,
    };
    kit.table(
      ['connections', 'concurrent (established, peak)', 'paced responses in flight (peak)', 'all open after s', 'errors', 'fds before / peak / after', 'RSS MB before / peak / after', 'RSS per connection KB', 'server CPU s / run s', 'workers'],
      [[
        String(CONNECTIONS),
        String(figures.concurrent),
        String(figures.pacedInFlightPeak),
        figures.allOpenAfterS === null ? '-' : fmt(figures.allOpenAfterS, 1),
        String(figures.errors),
        `${figures.fdsBefore} / ${figures.fdsPeak} / ${figures.fdsAfter}`,
        `${fmt(rssBeforeMB, 0)} / ${fmt(rssPeakMB, 0)} / ${fmt(figures.rssAfterMB, 0)}`,
        fmt(figures.rssPerConnectionKB, 1),
        `${fmt(serverCpuS, 1)} / ${fmt(runS, 0)}`,
        String(figures.workers),
      ]],
    );
    if (figures.errors > 0) kit.say(`errors: ${JSON.stringify(errorKinds)}; e.g. ${figures.errorSamples.join('; ')}`);
    kit.say();
    return figures;
  } finally {
    await kit.stop(server);
    setNofile(previousNofile);
  }
}
