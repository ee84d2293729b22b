// npm run bench -w @sammy/server [-- --json FILE]
//
// Measured in one run, across a veth pair between two namespaces this process
// creates (and removes); nginx with the Sammy module (native/nginx, built once per
// run) is measured beside the Node server in sections 1, 3, 5 and 6:
//   1. pacing accuracy: achieved / requested rate from 1 to 100 Mbit/s;
//   2. burst trains from a tcpdump capture on the sender, N = 1, 4, 8, 40 at 2 and
//      8 MB/s, for the kernel's own trains, the server's default plan, and the
//      namespace mechanism (tcp_min_tso_segs + gso_max_segs);
//   3. server CPU per GB served against Debian's nginx, same files, same clients,
//      16 and 1,000 of them, and nginx with the module unpaced and paced (bench/cpu.ts);
//   4. `tls`: the same over HTTPS and HTTP/2, beside nginx over both (bench/tls.ts);
//   5. `connections`: 10,000 concurrent paced keep-alive connections (bench/connections.ts);
//   6. `carryover`: the response after a paced one on a keep-alive connection, and
//      pipelined requests (bench/carryover.ts).
// `--only a,b` runs some sections; `--json FILE` writes the figures; `--netns-prefix P`
// names the namespaces P<pid>s and P<pid>c (default sbench); `--rounds N` sets the cpu
// section's alternating rounds of nginx with the module against stock nginx (default 3).
// Needs root (namespaces, tcpdump). Not part of `npm test`.
// `--render FILE[,FILE...]` prints the tls section's table again from files written with
// --json (several: each cell gives every file's figure in order); no root needed.
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { buildNginxModule, nginxBuildUnavailableReason, nginxSourceVersion } from '@sammy/native/build';
import { ensureAptPackages } from '../../scripts/setup.mjs';
import { childPids, start, startServer, stop, waitForOutput } from '../src/process.js';
import { readTelemetry, type ResponseTelemetry } from '../src/telemetry.js';
import { carryover } from './carryover.js';
import type { ClientJob, GetResult } from './client.js';
import { connections } from './connections.js';
import type { CpuRow } from './cpu-ratios.js';
import {
  CLOCK_TICKS_PER_S,
  CPU_FILE_BYTES,
  CPU_FILES,
  CPU_LOADS,
  cpuSection,
  DEFAULT_MODULE_ROUNDS,
  measureCpuRow,
  NS_PER_S,
  warmUp,
  type BenchServer as CpuServer,
  type CpuHarness,
  type CpuSection,
} from './cpu.js';
import { inBenchNet } from './harness.js';
import { fmt, markdownTable, type BenchKit, type BenchServer as Server, type NginxModuleOptions, type NginxOptions } from './kit.js';
import { BENCH_PREFIX, type BenchNet, sh } from './netns.js';
import type { FloorFramework } from './node-floor.js';
import { tlsReport, tlsSection, type TlsSection } from './tls.js';
import { parseTcpdump, summarizeTrains, TRAIN_BUCKETS, trainLengths, type TrainSummary } from './trains.js';

const SERVER_DIR = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const MSS_BYTES = 1448; // veth MTU 1500, IPv4, TCP timestamps
const MB = 1_000_000;
export const say = (line = ''): void => void process.stdout.write(`${line}\n`);

/** Installs a Debian package as root (scripts/setup.mjs), or says exactly what to run. */
export function ensurePackage(pkg: string): boolean {
  if (ensureAptPackages([pkg]).length === 0) return true;
  say(`SKIP: needs ${pkg}; install it with: sudo apt-get install -y ${pkg}`);
  return false;
}

function cpuTicks(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(fields[11]) + Number(fields[12]); // utime, stime (fields 14 and 15)
}

/** CPU seconds used so far by a process and its children (nginx: master + workers). */
export function cpuSeconds(pid: number): number {
  return [pid, ...childPids(pid)].reduce((sum, p) => sum + cpuTicks(p), 0) / CLOCK_TICKS_PER_S;
}

/**
 * What cpuNanoseconds reads: /proc/PID/task/TID/schedstat, whose first field is the thread's time
 * on a CPU in nanoseconds (kernels built without CONFIG_SCHED_INFO have none), or else /proc/PID/stat's ticks.
 */
export const CPU_CLOCK: 'schedstat' | 'ticks' = existsSync('/proc/self/schedstat') ? 'schedstat' : 'ticks';

/** Nanoseconds a process's live threads have run (a thread that has exited is not counted: nginx's worker has one thread). */
function threadsRunNs(pid: number): number {
  const schedstatNs = (tid: string): number => Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ', 1)[0]);
  return readdirSync(`/proc/${pid}/task`).reduce((sum, tid) => sum + schedstatNs(tid), 0);
}

/**
 * CPU nanoseconds used so far by a process and its children (nginx: master + workers), as cpuSeconds
 * but exact: a paced row costs nginx 6-8 of cpuSeconds' 10 ms ticks. From the ticks where there is no schedstat.
 */
export function cpuNanoseconds(pid: number): number {
  if (CPU_CLOCK === 'ticks') return cpuSeconds(pid) * NS_PER_S;
  return [pid, ...childPids(pid)].reduce((sum, p) => sum + threadsRunNs(p), 0);
}

/** Runs `cmd args` inside the server's namespace. */
export const inServer = (net: BenchNet) => (cmd: string, args: string[]): [string, string[]] => ['ip', net.inServer([cmd, ...args])];

/** A Node script that prints the server's `listening on` line (`cli`, default the server's own), started in the server namespace. */
async function startNodeServer(net: BenchNet, name: string, args: string[], logFile: string | null, cli?: string): Promise<Server> {
  const s = await startServer({ name, args, cli, cwd: SERVER_DIR, wrap: inServer(net) });
  return { name, process: s.process, pid: s.process.child.pid!, port: s.port, logFile };
}

export async function startSammy(net: BenchNet, work: string, mediaDir: string, name: string, args: string[]): Promise<Server> {
  const logFile = join(work, `${name}.jsonl`);
  return startNodeServer(net, name, ['--media', mediaDir, '--host', net.serverIp, '--port', '0', '--log', logFile, '--log-level', 'warn', ...args], logFile);
}

/** Node's own floor for the CPU section (bench/node-floor.ts: node:http alone, or a bare fastify) in the server namespace. */
export function startNodeFloor(net: BenchNet, mediaDir: string, name: string, framework: FloorFramework): Promise<Server> {
  return startNodeServer(net, name, [mediaDir, net.serverIp, framework], null, 'bench/node-floor.ts');
}

/** The Sammy module's lines in `location /media/`: on, as `o` says, with its telemetry log. */
function moduleDirectives(o: NginxModuleOptions, telemetryLog: string): string {
  const onOff = (on: boolean): string => (on ? 'on' : 'off');
  const minRate = o.minRateKbps === undefined ? '' : ` sammy_min_rate_kbps ${o.minRateKbps};`;
  return ` sammy on; sammy_pacing ${onOff(o.pacing)}; sammy_tail_hold ${onOff(o.tailHold)};${minRate} sammy_telemetry_log ${telemetryLog};`;
}

/**
 * Debian's nginx in the server namespace, serving `mediaDir` at /media/ on `port`.
 * With `o.sammy`, `modulePath` (ngx_http_sammy_module.so) is loaded and turned on in
 * that location; everything else is the stock rows' configuration, so the two compare.
 */
export async function startNginx(
  net: BenchNet,
  work: string,
  mediaDir: string,
  name: string,
  port: number,
  o: NginxOptions,
  modulePath: string | null = null,
): Promise<Server> {
  const prefix = mkdtempSync(join(work, `${name}-`));
  const conf = join(prefix, 'nginx.conf');
  const errorLog = join(prefix, 'error.log');
  const telemetryLog = join(prefix, 'telemetry.jsonl');
  const sammy = o.sammy ?? null;
  if (sammy !== null && modulePath === null) throw new Error(`${name}: the Sammy module was asked for, but none was built`);
  if (o.http2 === true && !o.tls) throw new Error(`${name}: HTTP/2 is served over TLS here (give tls)`);
  const locationExtra = [
    o.limitRateBytesPerS === null ? '' : ` limit_rate ${o.limitRateBytesPerS};`,
    sammy === null ? '' : moduleDirectives(sammy, telemetryLog),
  ].join('');
  writeFileSync(
    conf,
    `${sammy === null ? '' : `load_module ${modulePath};\n`}user root;
worker_processes 1;
pid ${prefix}/nginx.pid;
error_log ${errorLog};
worker_rlimit_nofile ${o.rlimitNofile ?? 8192};
events { worker_connections ${o.workerConnections ?? 4096}; }
http {
  access_log ${prefix}/access.log;
  client_body_temp_path ${prefix}/tmp;
  sendfile on;
  tcp_nopush on;
  keepalive_requests 1000000;
  types { video/mp4 m4s; }${o.openFileCacheMax == null ? '' : `\n  open_file_cache max=${o.openFileCacheMax} inactive=120s;`}
  server {
    listen ${net.serverIp}:${port}${o.tls ? ` ssl${o.http2 === true ? ' http2' : ''};
    ssl_certificate ${o.tls.certFile};
    ssl_certificate_key ${o.tls.keyFile};
    ssl_protocols TLSv1.2 TLSv1.3` : ''};
    location /media/ { alias ${mediaDir}/;${locationExtra} }${sammy === null ? '' : '\n    location = /metrics { sammy_metrics; }'}
  }
}
`,
  );
  const env = o.kernelPace ? { ...process.env, LD_PRELOAD: o.kernelPace.preload, PACE_BYTES_PER_S: String(Math.round(o.kernelPace.bytesPerS)) } : process.env;
  const nginx = start(name, ...inServer(net)('nginx', ['-c', conf, '-p', prefix, '-g', 'daemon off;']), { env });
  // nginx says nothing when it is up: wait until it answers.
  for (let i = 0; i < 50; i++) {
    await new Promise((r) => setTimeout(r, 100));
    const probe = spawnSync('ip', net.inServer(['bash', '-c', `exec 3<>/dev/tcp/${net.serverIp}/${port}`]), { stdio: 'ignore' });
    if (probe.status === 0) {
      const logFile = sammy === null ? null : telemetryLog;
      return { name, process: nginx, pid: nginx.child.pid!, port, logFile, stopSignal: 'SIGQUIT', errorLog };
    }
  }
  throw new Error(`nginx did not start: ${readFileSync(errorLog, 'utf8').slice(-500)}`);
}

/** nginx error-log lines that say a worker crashed or something went badly wrong (alert, crit, emerg). */
export function nginxErrorLogProblems(errorLog: string): string[] {
  let text: string;
  try {
    text = readFileSync(errorLog, 'utf8');
  } catch {
    return [];
  }
  return text.split('\n').filter((line) => /\[(alert|crit|emerg)\]|exited on signal/.test(line));
}

export async function runClient<T>(net: BenchNet, job: ClientJob | unknown, script = 'bench/client.ts'): Promise<T> {
  const client = start('bench client', 'ip', net.inClient([process.execPath, '--import', 'tsx', script, JSON.stringify(job)]), { cwd: SERVER_DIR });
  const code = await client.exited;
  if (code !== 0) throw new Error(`client failed (${code}): ${client.stderr().slice(-800)}`);
  return JSON.parse(client.stdout().trim().split('\n').at(-1)!) as T;
}

function telemetry(server: Server): ResponseTelemetry[] {
  return server.logFile === null ? [] : readTelemetry(server.logFile);
}

async function lineFor(server: Server, localPort: number): Promise<ResponseTelemetry | undefined> {
  for (let i = 0; i < 40; i++) {
    const found = telemetry(server).find((t) => t.remotePort === localPort);
    if (found !== undefined) return found;
    await new Promise((r) => setTimeout(r, 50));
  }
  return undefined;
}

// The edge bench (edge/bench/run.ts) imports these from here with the helpers above.
export { fmt, type Server };
export const pct = (x: number): string => `${Math.round(x * 100)}%`;

export function table(header: string[], rows: string[][]): void {
  for (const line of markdownTable(header, rows)) say(line);
}

// ---------------------------------------------------------------- 1. accuracy

const ACCURACY_MBPS = [1, 2, 5, 10, 20, 50, 100];

/** The accuracy section's nginx with the Sammy module. */
const ACCURACY_MODULE_PORT = 18_100;

async function accuracy(kit: BenchKit): Promise<unknown> {
  say('## 1. Pacing accuracy (achieved / requested), client-side rate past the unpaced first 10% of a ~2.5 s transfer');
  say();
  const servers: Server[] = [];
  const rows: string[][] = [];
  const results: unknown[] = [];
  try {
    servers.push(await kit.startSammy('acc-auto', []), await kit.startSammy('acc-kernel', ['--burst-mode', 'kernel']));
    // The module's trains are the kernel's, its tail held as the Node server's is.
    if (kit.nginxModuleUnavailable !== null) say(`No column for nginx with the Sammy module: ${kit.nginxModuleUnavailable}`);
    else {
      const sammy = { pacing: true, tailHold: true };
      servers.push((await kit.startNginx('acc-nginx-module', ACCURACY_MODULE_PORT, { limitRateBytesPerS: null, sammy }))!);
    }
    for (const mbps of ACCURACY_MBPS) {
      const file = `acc-${mbps}.m4s`;
      const rateBytesPerS = (mbps * MB) / 8;
      const sizeBytes = Math.round(rateBytesPerS * 2.5);
      const row: Record<string, unknown> = { requestedMbps: mbps };
      const cells = [String(mbps)];
      for (const server of servers) {
        const r = await runClient<GetResult>(kit.net, {
          kind: 'get',
          url: `http://${kit.net.serverIp}:${server.port}/media/${file}`,
          headers: { 'CMCD-Status': `rtp=${mbps * 1000}` },
          markBytes: Math.max(64_000, sizeBytes / 10),
        });
        if (r.bytes !== sizeBytes) throw new Error(`${server.name}: short body ${r.bytes} of ${sizeBytes}`);
        const line = await lineFor(server, r.localPort);
        const ratio = r.rateAfterMarkBytesPerS / rateBytesPerS;
        const mechanism = line ? `${line.burstMechanism}${line.burstMechanism === 'app' ? ` (<=${line.trainPackets} pkts)` : ''}` : '?';
        const achievedMbps = (r.rateAfterMarkBytesPerS * 8) / MB;
        row[server.name] = { achievedMbps, ratio, mechanism, serverAchievedKbps: line?.achievedRateKbps, pacing: line?.pacing };
        cells.push(mechanism, fmt((r.rateAfterMarkBytesPerS * 8) / MB), fmt(ratio, 3));
      }
      rows.push(cells);
      results.push(row);
    }
  } finally {
    for (const server of servers) await kit.stop(server);
  }
  const labels = ['default', '--burst-mode kernel', 'nginx + Sammy module (tail hold)'].slice(0, servers.length);
  table(['requested Mbit/s', ...labels.flatMap((label) => [`${label}: mechanism`, 'achieved Mbit/s', 'ratio'])], rows);
  say();
  return results;
}

// ---------------------------------------------------------------- 2. bursts

const BURST_N = [1, 4, 8, 40];
const BURST_RATES_BYTES_PER_S = [2 * MB, 8 * MB];

export async function captureTrains(net: BenchNet, work: string, server: Server, file: string, rateBytesPerS: number, n: number): Promise<TrainSummary & { achievedRatio: number }> {
  const pcap = join(work, `cap-${process.hrtime.bigint()}.pcap`);
  const dump = start('tcpdump', ...inServer(net)('tcpdump', ['-i', net.serverDev, '-n', '-U', '-s', '128', '--time-stamp-precision=nano', '-w', pcap, `tcp src port ${server.port}`]));
  await waitForOutput(dump, /listening on/, 10_000, 'stderr');
  const r = await runClient<GetResult>(net, {
    kind: 'get',
    url: `http://${net.serverIp}:${server.port}/media/${file}`,
    headers: { 'CMCD-Status': `rtp=${(rateBytesPerS * 8) / 1000}` },
    markBytes: 200_000,
  });
  await new Promise((r2) => setTimeout(r2, 200));
  await stop(dump, { signal: 'SIGINT', graceMs: 5000 });
  const text = sh('tcpdump', ['-r', pcap, '-n', '-tt', '--time-stamp-precision=nano']);
  rmSync(pcap, { force: true });
  return { ...summarizeTrains(trainLengths(parseTcpdump(text), MSS_BYTES), n), achievedRatio: r.rateAfterMarkBytesPerS / rateBytesPerS };
}

export function bucketCells(s: TrainSummary): string[] {
  return s.packetShareByBucket.map((share) => (share === 0 ? '.' : pct(share)));
}

async function bursts(net: BenchNet, work: string, mediaDir: string): Promise<unknown> {
  say('## 2. Burst trains on the wire (tcpdump on the sender veth; trains = packets < 50 us apart; first 10 packets skipped)');
  say();
  say('Share of packets by train length (packets):');
  say();
  const header = ['rate', 'N', 'mechanism', 'planned', ...TRAIN_BUCKETS.map(([lo, hi]) => (lo === hi ? `${lo}` : hi === Infinity ? `${lo}+` : `${lo}-${hi}`)), 'max', 'in trains <= N', 'achieved/requested'];
  const rows: string[][] = [];
  const results: unknown[] = [];
  const record = (rate: number, n: number, label: string, planned: string, s: TrainSummary & { achievedRatio: number }): void => {
    rows.push([`${rate / MB} MB/s`, n === 0 ? 'any' : String(n), label, planned, ...bucketCells(s), String(s.maxPackets), n === 0 ? '-' : pct(s.packetsInTrainsAtMostN), fmt(s.achievedRatio, 3)]);
    results.push({ rateBytesPerS: rate, n, mechanism: label, planned, ...s });
  };
  const planned = async (server: Server): Promise<string> => {
    await new Promise((r) => setTimeout(r, 300));
    const last = telemetry(server).at(-1);
    return last ? `${last.burstMechanism} <=${last.trainPackets}` : '?';
  };

  // The kernel's own trains (what --burst-mode kernel gives whatever N is).
  const kernel = await startSammy(net, work, mediaDir, 'burst-kernel', ['--burst-mode', 'kernel']);
  try {
    for (const rate of BURST_RATES_BYTES_PER_S) {
      record(rate, 0, 'kernel, default sysctls', '-', await captureTrains(net, work, kernel, `burst-${rate / MB}.m4s`, rate, 0));
    }
  } finally {
    await stop(kernel.process, { graceMs: 5000 });
  }
  // The server's default plan for each N (application-timed writes where needed).
  for (const n of BURST_N) {
    const server = await startSammy(net, work, mediaDir, `burst-auto-${n}`, ['--burst-packets', String(n)]);
    try {
      for (const rate of BURST_RATES_BYTES_PER_S) {
        const s = await captureTrains(net, work, server, `burst-${rate / MB}.m4s`, rate, n);
        record(rate, n, 'server default (auto)', await planned(server), s);
      }
    } finally {
      await stop(server.process, { graceMs: 5000 });
    }
  }
  // The namespace mechanism: the server starts after the caps are set, sees them, and leaves it to the kernel.
  for (const n of BURST_N) {
    net.setTrainCap(n);
    const server = await startSammy(net, work, mediaDir, `burst-ns-${n}`, ['--burst-packets', String(n)]);
    try {
      for (const rate of BURST_RATES_BYTES_PER_S) {
        const s = await captureTrains(net, work, server, `burst-${rate / MB}.m4s`, rate, n);
        record(rate, n, `tcp_min_tso_segs=${n} gso_max_segs=${n}`, await planned(server), s);
      }
    } finally {
      await stop(server.process, { graceMs: 5000 });
      net.setTrainCap(null);
    }
  }
  const nOrder = (cell: string): number => (cell === 'any' ? 0 : Number(cell));
  rows.sort((a, b) => a[0]!.localeCompare(b[0]!, undefined, { numeric: true }) || nOrder(a[1]!) - nOrder(b[1]!));
  table(header, rows);
  say();
  return results;
}

// ---------------------------------------------------------------- 3. CPU (bench/cpu.ts)

/**
 * The cpu section's measurement at its first load (16 keep-alive clients fetching
 * /media/seg-0..15.m4s, 2 MB/s each when paced), for the edge bench's rows beside it.
 */
export function measureCpu(net: BenchNet, server: Server, paced: boolean, id: CpuRow['id'], config: string): Promise<CpuRow> {
  return measureCpuRow(cpuHarnessOf(net), server, CPU_LOADS[0]!, paced, id, config);
}

/** The cpu section's unmeasured warm-up (unpaced, then paced), for a server of the edge bench before its rows. */
export function warmUpForCpu(net: BenchNet, server: Server): Promise<void> {
  return warmUp(cpuHarnessOf(net), server);
}

function cpuHarnessOf(net: BenchNet): Pick<CpuHarness, 'serverIp' | 'runClient' | 'cpuSeconds'> {
  return { serverIp: net.serverIp, runClient: (job) => runClient(net, job), cpuSeconds };
}

/**
 * Builds bench/pace-preload.c (nginx paced by the kernel) into `work`; the path, or why
 * it could not be built.
 */
export function buildPacePreload(work: string): { preload: string } | { unavailable: string } {
  if (ensureAptPackages(['gcc', 'libc6-dev']).length > 0) return { unavailable: 'gcc not installed (sudo apt-get install -y gcc libc6-dev)' };
  const preload = join(work, 'pace-preload.so');
  const built = spawnSync('gcc', ['-O2', '-Wall', '-Wextra', '-shared', '-fPIC', '-o', preload, join(SERVER_DIR, 'bench', 'pace-preload.c'), '-ldl'], { encoding: 'utf8' });
  return built.status === 0 ? { preload } : { unavailable: `gcc failed: ${(built.stderr ?? '').trim().slice(-300)}` };
}

function cpu(kit: BenchKit, withNginx: boolean, rounds: number): Promise<CpuSection> {
  const servers = new Map<CpuServer, Server>();
  const pacing = withNginx ? buildPacePreload(kit.work) : { unavailable: 'nginx is not installed' };
  const keep = (s: Server | null): CpuServer => {
    if (s === null) throw new Error('nginx is not installed');
    servers.set(s, s);
    return s;
  };
  return cpuSection(
    {
      serverIp: kit.net.serverIp,
      startSammy: async (name, args) => keep(await kit.startSammy(name, args)),
      startNodeFloor: async (name, framework) => keep(await startNodeFloor(kit.net, kit.mediaDir, name, framework)),
      startNginx: async (name, port, o) => {
        if (o.kernelPaceBytesPerS !== undefined && 'unavailable' in pacing) throw new Error(`nginx cannot be paced by the kernel: ${pacing.unavailable}`);
        const kernelPace = o.kernelPaceBytesPerS === undefined || !('preload' in pacing) ? null : { preload: pacing.preload, bytesPerS: o.kernelPaceBytesPerS };
        return keep(await kit.startNginx(name, port, { limitRateBytesPerS: o.limitRateBytesPerS, kernelPace, sammy: o.sammy ?? null }));
      },
      nginxKernelPacingUnavailable: 'unavailable' in pacing ? pacing.unavailable : null,
      nginxModuleUnavailable: kit.nginxModuleUnavailable,
      setTrainCap: (packets) => kit.net.setTrainCap(packets),
      stopServer: (lent) => kit.stop(servers.get(lent)!),
      runClient: (job) => kit.runClient('bench/client.ts', job),
      telemetry: (lent) => kit.telemetry(servers.get(lent)!),
      cpuSeconds,
      cpuNanoseconds,
      cpuClock: CPU_CLOCK,
      say,
      table,
    },
    withNginx,
    rounds,
  );
}

/** The Sammy module's shared object for nginx, built once for the run (native/src/build.ts caches it by source), or why there is none. */
async function nginxModuleFor(withNginx: boolean): Promise<{ path: string } | { unavailable: string }> {
  if (!withNginx) return { unavailable: 'nginx is not installed' };
  const reason = nginxBuildUnavailableReason();
  if (reason !== null) return { unavailable: reason };
  // The module is built against nginx-dev's source tree; a binary of another version refuses to load it.
  const binary = /nginx\/(\S+)/.exec(spawnSync('nginx', ['-v'], { encoding: 'utf8' }).stderr ?? '')?.[1];
  const source = nginxSourceVersion();
  if (binary !== source) return { unavailable: `nginx ${binary ?? '?'} is not ${source}, the version of the module's source tree` };
  return { path: await buildNginxModule() };
}

/** What an nginx's error log said when it stopped: its alert, crit and emerg lines (a crashed worker among them). */
interface NginxErrorLogCheck {
  server: string;
  withModule: boolean;
  problems: string[];
}

// ---------------------------------------------------------------- main

async function main(): Promise<number> {
  const text = { type: 'string' } as const;
  const { values } = parseArgs({ options: { json: text, only: text, 'netns-prefix': text, rounds: text, render: text }, strict: true });
  if (values.render !== undefined) {
    const runs = values.render.split(',').map((file) => {
      const tls = (JSON.parse(readFileSync(resolve(process.env['INIT_CWD'] ?? '.', file), 'utf8')) as { tls?: TlsSection | { skipped: string } }).tls;
      if (tls === undefined || 'skipped' in tls) throw new Error(`${file}: no tls section's figures (run with --only tls --json FILE)`);
      return tls;
    });
    for (const line of tlsReport(runs)) say(line);
    return 0;
  }
  const prefix = values['netns-prefix'] ?? BENCH_PREFIX;
  const rounds = values.rounds === undefined ? DEFAULT_MODULE_ROUNDS : Number(values.rounds);
  if (!Number.isInteger(rounds) || rounds < 1) {
    throw new Error(`invalid --rounds: ${JSON.stringify(values.rounds)} (a whole number, 1 or more)`);
  }
  if (!/^[a-z][a-z0-9]{0,5}$/.test(prefix)) throw new Error(`invalid --netns-prefix: ${JSON.stringify(prefix)} (accepted: 1 to 6 lowercase letters and digits, a letter first)`);
  if (process.platform !== 'linux' || process.getuid?.() !== 0) {
    say('SKIP: the server bench needs Linux and root (network namespaces, tcpdump); run it as root: sudo npm run bench -w @sammy/server');
    return 0;
  }
  if (!ensurePackage('iproute2') || !ensurePackage('tcpdump')) return 1;
  const withNginx = ensurePackage('nginx-light');
  const writeMedia = (mediaDir: string): void => {
    for (const mbps of ACCURACY_MBPS) writeFileSync(join(mediaDir, `acc-${mbps}.m4s`), randomBytes(Math.round(((mbps * MB) / 8) * 2.5)));
    for (const rate of BURST_RATES_BYTES_PER_S) writeFileSync(join(mediaDir, `burst-${rate / MB}.m4s`), randomBytes(Math.round(rate * 1.5)));
    for (let i = 0; i < CPU_FILES; i++) writeFileSync(join(mediaDir, `seg-${i}.m4s`), randomBytes(CPU_FILE_BYTES));
  };
  const only = values.only?.split(',') ?? ['accuracy', 'bursts', 'cpu', 'tls', 'connections', 'carryover'];
  const startedMs = performance.now();
  const nginxModule = await nginxModuleFor(withNginx);
  const modulePath = 'path' in nginxModule ? nginxModule.path : null;
  const errorLogChecks: NginxErrorLogCheck[] = [];
  await inBenchNet({ workPrefix: 'sammy-bench-', netnsPrefix: prefix, say, writeMedia }, async ({ net, work, mediaDir, congestionControl: cc }) => {
    const kit: BenchKit = {
      net,
      work,
      mediaDir,
      say,
      table,
      startSammy: (name, args) => startSammy(net, work, mediaDir, name, args),
      startNginx: async (name, port, o) => (withNginx ? startNginx(net, work, mediaDir, name, port, o, modulePath) : null),
      nginxModuleUnavailable: 'unavailable' in nginxModule ? nginxModule.unavailable : null,
      stop: async (server) => {
        await stop(server.process, { signal: server.stopSignal ?? 'SIGTERM', graceMs: 5000 });
        if (server.errorLog === undefined) return;
        const check = { server: server.name, withModule: server.logFile !== null, problems: nginxErrorLogProblems(server.errorLog) };
        errorLogChecks.push(check);
        for (const line of check.problems.slice(0, 5)) say(`nginx ${server.name}'s error log: ${line}`);
      },
      runClient: (script, job) => runClient(net, job, script),
      telemetry,
      cpuSeconds,
    };
    say(`# Sammy server bench: veth ${net.serverNs} <-> ${net.clientNs}, congestion control ${cc}, ${new Date().toISOString()}`);
    say(`nginx module: ${'path' in nginxModule ? nginxModule.path : `none (${nginxModule.unavailable})`}`);
    say();
    const result: Record<string, unknown> = { congestionControl: cc, nginxModule };
    if (only.includes('accuracy')) result['accuracy'] = await accuracy(kit);
    if (only.includes('bursts')) result['bursts'] = await bursts(net, work, mediaDir);
    if (only.includes('cpu')) result['cpu'] = await cpu(kit, withNginx, rounds);
    if (only.includes('tls')) result['tls'] = await tlsSection(kit);
    if (only.includes('connections')) result['connections'] = await connections(kit);
    if (only.includes('carryover')) Object.assign(result, await carryover(kit));
    const withModule = errorLogChecks.filter((c) => c.withModule);
    const problems = errorLogChecks.flatMap((c) => c.problems).length;
    say(`nginx error logs: ${errorLogChecks.length} read (${withModule.length} with the module), ${problems} alert, crit or emerg lines`);
    result['nginxErrorLogs'] = errorLogChecks;
    say(`bench took ${fmt((performance.now() - startedMs) / 1000, 0)} s`);
    if (values.json !== undefined) writeFileSync(resolve(process.env['INIT_CWD'] ?? '.', values.json), JSON.stringify(result, null, 2));
  });
  return 0;
}

// Run as a script only: the edge bench (edge/bench/run.ts) imports the helpers above.
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  main().then(
    (code) => process.exit(code),
    (err: unknown) => {
      console.error(`bench: ${(err as Error).stack ?? String(err)}`);
      process.exit(1);
    },
  );
}
