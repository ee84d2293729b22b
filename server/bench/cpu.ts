// The server bench's CPU section (`npm run bench -w @sammy/server -- --only cpu`):
// server CPU seconds per GB served, this server against Debian's nginx (sendfile)
// on the same files and the same clients, with 16 and with 1,000 keep-alive
// clients; beside it nginx with the Sammy module (native/nginx), unpaced and paced,
// against stock nginx in alternating rounds (alternatingRounds). run.ts supplies the
// harness (namespaces, servers, clients).
import { readFileSync } from 'node:fs';
import type { ResponseTelemetry } from '../src/telemetry.js';
import type { ClientJob, LoadResult } from './client.js';
import {
  cpuRatios,
  pairRounds,
  roundSchedule,
  type CpuRatios,
  type CpuRow,
  type MachineCpuRatios,
  type ModulePair,
  type PairRounds,
  type RoundMeasurement,
} from './cpu-ratios.js';
import type { NginxModuleOptions } from './kit.js';
import type { FloorFramework } from './node-floor.js';

const MB = 1_000_000;
export const CPU_FILES = 16;
export const CPU_FILE_BYTES = MB;

/** One client population: how many keep-alive clients, and the pace each asks for. */
export interface CpuLoad {
  clients: number;
  paceBytesPerS: number;
  /** A paced row stops once this many seconds of every client's pace have arrived. */
  pacedS: number;
  /** An unpaced row stops after this many bytes (or maxS). */
  unpacedBytes: number;
  maxS: number;
}

export const CPU_LOADS: CpuLoad[] = [
  // 16 Mbit/s per connection, the thesis lab's pace range.
  { clients: 16, paceBytesPerS: 2 * MB, pacedS: 12, unpacedBytes: 3000 * MB, maxS: 20 },
  // 1 Mbit/s each, 1 Gbit/s in all: within what this machine's veth pair carries,
  // so the pace and not the CPU sets the rate.
  { clients: 1000, paceBytesPerS: 125_000, pacedS: 12, unpacedBytes: 3000 * MB, maxS: 20 },
];

/** Before its first row every server serves this, unmeasured: code compiled, caches and buffers warm. */
const WARM_UP_BYTES = 300 * MB;
/**
 * ...and then this much paced at WARM_UP_PACE_BYTES_PER_S a connection (20 MB/s: the
 * application writer under the default plan, the kernel's trains under --burst-mode
 * kernel; a few seconds in all), so that the paced path's code (rate decision, bursts,
 * the held-back last byte) is compiled too. V8 optimises a function only after it has
 * run many times; at a paced row's 32 requests a second a fresh process was still
 * compiling it through the row (measured: 2.2-2.5 s/GB in a first 12 s row, 1.1-1.4
 * once 3,000 requests had passed), so the row measured the compiler as much as the server.
 * A server runs for hours; nginx has nothing to compile.
 */
const WARM_UP_PACED_BYTES = 1500 * MB;
const WARM_UP_PACE_BYTES_PER_S = 20 * MB;

export interface BenchServer {
  name: string;
  pid: number;
  port: number;
}

/** What run.ts lends this section. */
export interface CpuHarness {
  serverIp: string;
  startSammy(name: string, args: string[]): Promise<BenchServer>;
  /** node:http alone, or a bare fastify on it (bench/node-floor.ts): what any Node server, or any fastify one, pays per response. */
  startNodeFloor(name: string, framework: FloorFramework): Promise<BenchServer>;
  /**
   * `kernelPaceBytesPerS`: every connection capped at this rate (only when `nginxKernelPacingUnavailable` is null);
   * `sammy`: the Sammy module on, with its telemetry log (only when `nginxModuleUnavailable` is null).
   */
  startNginx(
    name: string,
    port: number,
    o: { limitRateBytesPerS: number | null; kernelPaceBytesPerS?: number; sammy?: NginxModuleOptions },
  ): Promise<BenchServer>;
  /** Why nginx cannot be paced by the kernel here (its LD_PRELOAD library did not build), or null when it can. */
  nginxKernelPacingUnavailable: string | null;
  /** Why nginx cannot run with the Sammy module here, or null when it can. */
  nginxModuleUnavailable: string | null;
  /** The namespace mechanism for N-packet trains in the server's namespace (null: the kernel's defaults). */
  setTrainCap(packets: number | null): void;
  stopServer(server: BenchServer): Promise<void>;
  runClient<T>(job: ClientJob): Promise<T>;
  /** The server's telemetry lines so far (the module's log for nginx with the module). */
  telemetry(server: BenchServer): ResponseTelemetry[];
  /** CPU seconds used so far by a process and its children. */
  cpuSeconds(pid: number): number;
  /** The same in nanoseconds, from /proc/PID/task/TID/schedstat where the kernel keeps it (cpuClock). */
  cpuNanoseconds(pid: number): number;
  /** What cpuNanoseconds reads: schedstat's nanoseconds, or /proc/PID/stat's 10 ms ticks where there is no schedstat. */
  cpuClock: 'schedstat' | 'ticks';
  say(line?: string): void;
  table(header: string[], rows: string[][]): void;
}

export interface CpuSection {
  rows: CpuRow[];
  /** 16 clients (the figures earlier runs reported). */
  ratios: CpuRatios;
  ratiosAt1000Clients: CpuRatios;
  /** The machine's CPU per GB against nginx's, 16 clients (ratios.machine); null without nginx paced by the kernel. */
  machineRatios: MachineCpuRatios | null;
  /** Rounds of the module's comparisons with stock nginx (`--rounds`); the ratios above are their medians. */
  rounds: number;
  /** Every measurement of those rounds, in the order taken (empty without the module). */
  moduleRounds: RoundMeasurement[];
  /** Each pair's ratios per round and their medians. */
  moduleRoundRatios: PairRounds[];
  /** The clock of the rounds' own CPU (CpuHarness.cpuClock). */
  moduleRoundsCpuClock: 'schedstat' | 'ticks';
}

function urlsOf(h: Pick<CpuHarness, 'serverIp'>, server: BenchServer): string[] {
  return Array.from({ length: CPU_FILES }, (_, i) => `http://${h.serverIp}:${server.port}/media/seg-${i}.m4s`);
}

/** The unmeasured warm-up every server gets before its first row (the edge bench's servers too, through run.ts). */
export async function warmUp(h: Pick<CpuHarness, 'serverIp' | 'runClient'>, server: BenchServer): Promise<void> {
  await h.runClient<LoadResult>({ kind: 'load', urls: urlsOf(h, server), headers: {}, connections: 16, targetBytes: WARM_UP_BYTES, maxS: 10 });
  const paced = { 'CMCD-Status': `rtp=${(WARM_UP_PACE_BYTES_PER_S * 8) / 1000}` };
  await h.runClient<LoadResult>({ kind: 'load', urls: urlsOf(h, server), headers: paced, connections: 16, targetBytes: WARM_UP_PACED_BYTES, maxS: 20 });
}

/**
 * CPU seconds the whole machine has been busy (every core: user, nice, system, irq and
 * softirq time from /proc/stat; not idle, iowait or steal). A paced socket's packets
 * leave from the kernel's pacing timer, in softirq context, which /proc charges to
 * whatever task the timer interrupts (often none: the idle task), not to the server;
 * this figure counts that work, and the clients' and everything else's too.
 */
export function machineCpuSeconds(): number {
  const fields = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!.trim().split(/\s+/).slice(1).map(Number);
  const [user, nice, system, , , irq, softirq] = fields;
  return ((user ?? 0) + (nice ?? 0) + (system ?? 0) + (irq ?? 0) + (softirq ?? 0)) / CLOCK_TICKS_PER_S;
}

/** USER_HZ (`getconf CLK_TCK`): /proc's CPU times count in these on every Linux architecture. */
export const CLOCK_TICKS_PER_S = 100;
export const NS_PER_S = 1e9;

/**
 * One row: `load` against `server`, its CPU seconds per GB (the edge bench measures its rows with this too, through run.ts).
 * `ownCpuS` reads the server's CPU seconds so far (by default h.cpuSeconds, in 10 ms ticks).
 */
export async function measureCpuRow(
  h: Pick<CpuHarness, 'serverIp' | 'runClient' | 'cpuSeconds'>,
  server: BenchServer,
  load: CpuLoad,
  paced: boolean,
  id: CpuRow['id'],
  config: string,
  ownCpuS: (pid: number) => number = h.cpuSeconds,
): Promise<CpuRow> {
  const before = ownCpuS(server.pid);
  const machineBefore = machineCpuSeconds();
  const r = await h.runClient<LoadResult>({
    kind: 'load',
    urls: urlsOf(h, server),
    headers: paced ? { 'CMCD-Status': `rtp=${(load.paceBytesPerS * 8) / 1000}` } : {},
    connections: load.clients,
    targetBytes: paced ? load.clients * load.paceBytesPerS * load.pacedS : load.unpacedBytes,
    maxS: load.maxS,
  });
  const cpuS = ownCpuS(server.pid) - before;
  const machineCpuS = machineCpuSeconds() - machineBefore;
  const gb = r.bytes / 1e9;
  return { id, clients: load.clients, config, bytes: r.bytes, elapsedS: r.elapsedS, cpuS, cpuSPerGB: cpuS / gb, machineCpuS, machineCpuSPerGB: machineCpuS / gb };
}

const fmt = (x: number | undefined, digits = 2): string => (x !== undefined && Number.isFinite(x) ? x.toFixed(digits) : '-');
const paceLabel = (load: CpuLoad): string => `${(load.paceBytesPerS * 8) / MB} Mbit/s`;

/** Runs `rows` on one server (started, warmed up, stopped). */
async function onServer<T>(h: CpuHarness, start: () => Promise<BenchServer>, rows: (server: BenchServer) => Promise<T>): Promise<T> {
  const server = await start();
  try {
    await warmUp(h, server);
    return await rows(server);
  } finally {
    await h.stopServer(server);
  }
}

/** A paced row that served faster than this share of its clients' summed pace was not capped. */
const CAP_TOOK_MAX_SHARE = 1.25;

/**
 * Throws when a paced row's bytes came faster than its clients' summed pace allows: `what` did not cap them
 * (a cap that did not take serves the row's bytes at the veth pair's speed).
 */
function checkCapTook(row: CpuRow, load: CpuLoad, what: string): void {
  const paceBytesPerS = load.clients * load.paceBytesPerS;
  if (row.bytes / row.elapsedS > CAP_TOOK_MAX_SHARE * paceBytesPerS) {
    const servedPct = fmt((row.bytes / row.elapsedS / paceBytesPerS) * 100, 0);
    throw new Error(`${row.config}: served ${servedPct}% of the clients' summed pace; ${what} did not take`);
  }
}

/**
 * nginx paced as this server paces: every connection capped by the kernel at the
 * load's rate (one nginx per load, since the cap is set when a connection is accepted).
 * The kernel's work per train is then in both figures.
 */
async function nginxKernelPaced(h: CpuHarness, id: 'nginxPaced' | 'nginxPacedNamespace', trains: string): Promise<CpuRow[]> {
  if (h.nginxKernelPacingUnavailable !== null) {
    h.say(`No kernel-paced nginx rows: ${h.nginxKernelPacingUnavailable}`);
    return [];
  }
  const rows: CpuRow[] = [];
  for (const load of CPU_LOADS) {
    const start = (): Promise<BenchServer> => startKernelPacedNginx(h, `nginx-${id}-${load.clients}`, load);
    const row = await onServer(h, start, async (s) => measureCpuRow(h, s, load, true, id, kernelPacedLabel(load, trains)));
    checkCapTook(row, load, 'the LD_PRELOAD cap');
    rows.push(row);
  }
  return rows;
}

/** nginx with every connection capped at `load`'s pace by the kernel: its own port per load. */
function startKernelPacedNginx(h: CpuHarness, name: string, load: CpuLoad): Promise<BenchServer> {
  const port = NGINX_PACED_PORT + CPU_LOADS.indexOf(load);
  return h.startNginx(name, port, { limitRateBytesPerS: null, kernelPaceBytesPerS: load.paceBytesPerS });
}

const kernelPacedLabel = (load: CpuLoad, trains: string): string =>
  `nginx, every connection capped at ${paceLabel(load)} by the kernel, ${trains}`;

const NGINX_PORT = 18_080;
const STOCK_NGINX_CONFIG = 'nginx (sendfile), no pacing';
const startStockNginx = (h: CpuHarness, name: string): Promise<BenchServer> => h.startNginx(name, NGINX_PORT, { limitRateBytesPerS: null });
const MODULE_PORTS = { unpaced: 18_084, paced: 18_085 };
/** How long the module's telemetry lines of a row may lag its last response. */
const MODULE_LINES_WAIT_MS = 3000;

/** Throws unless the module wrote one line for each of the row's responses, each paced at the load's rate (or unpaced). */
async function checkModuleLines(
  h: CpuHarness,
  server: BenchServer,
  linesBefore: number,
  row: CpuRow,
  pacedAt: CpuLoad | null,
): Promise<void> {
  // Every response is a whole 1 MB file (the client counts only finished ones).
  const responses = Math.round(row.bytes / CPU_FILE_BYTES);
  let lines = h.telemetry(server).slice(linesBefore);
  for (const deadline = Date.now() + MODULE_LINES_WAIT_MS; lines.length < responses && Date.now() < deadline; ) {
    await new Promise((r) => setTimeout(r, 100));
    lines = h.telemetry(server).slice(linesBefore);
  }
  if (lines.length !== responses) throw new Error(`${row.config}: ${lines.length} telemetry lines for ${responses} responses`);
  const rateKbps = pacedAt === null ? null : (pacedAt.paceBytesPerS * 8) / 1000;
  const wrong = lines.find((t) => t.pacing !== (pacedAt === null ? 'unpaced' : 'paced') || t.appliedRateKbps !== rateKbps || t.aborted);
  if (wrong !== undefined) {
    const said = `pacing ${wrong.pacing} at ${wrong.appliedRateKbps} kbps${wrong.aborted ? ', aborted' : ''}`;
    throw new Error(`${row.config}: a telemetry line says ${said}, not ${rateKbps ?? 'unpaced'}`);
  }
}

/** Rounds of the module's comparisons with stock nginx when `--rounds` is not given. */
export const DEFAULT_MODULE_ROUNDS = 3;

/** One side of a pair: its row's name and label, how its nginx starts, and what its row must show. */
interface RoundSide {
  id: CpuRow['id'];
  config: string;
  /** A fresh nginx; `tag` names the measurement (its folder and error-log check). */
  start(tag: string): Promise<BenchServer>;
  /** Throws when the row did not measure what its label says (a cap that did not take, the module's lines). */
  check(server: BenchServer, linesBefore: number, row: CpuRow): Promise<void>;
}

/** Stock nginx (a) against nginx with the Sammy module (b) under one load. */
interface NginxPair {
  pair: ModulePair;
  load: CpuLoad;
  a: RoundSide;
  b: RoundSide;
}

/** A side measured in a round: its row (for the table) and its record (for the JSON). */
interface RoundResult {
  row: CpuRow;
  measurement: RoundMeasurement;
}

/**
 * nginx with the Sammy module, as deployed (its telemetry log on), against stock nginx
 * under each load: `sammy_pacing off` against nginx, unpaced (what loading the module
 * costs nginx), and pacing each request at its rtp with the tail held (its trains are
 * the kernel's, as the pacedKernel rows') against nginx paced by the kernel, when it can be.
 */
function nginxPairs(h: CpuHarness): NginxPair[] {
  const noCheck = async (): Promise<void> => {};
  const startModule = (tag: string, pacing: boolean): Promise<BenchServer> => {
    const port = pacing ? MODULE_PORTS.paced : MODULE_PORTS.unpaced;
    return h.startNginx(`nginx-module-${tag}`, port, { limitRateBytesPerS: null, sammy: { pacing, tailHold: true } });
  };
  const pairs: NginxPair[] = [];
  for (const load of CPU_LOADS) {
    pairs.push({
      pair: 'unpaced',
      load,
      a: { id: 'nginx', config: STOCK_NGINX_CONFIG, start: (tag) => startStockNginx(h, `nginx-${tag}`), check: noCheck },
      b: {
        id: 'moduleUnpaced',
        config: 'nginx + Sammy module, sammy_pacing off',
        start: (tag) => startModule(tag, false),
        check: (s, linesBefore, row) => checkModuleLines(h, s, linesBefore, row, null),
      },
    });
    if (h.nginxKernelPacingUnavailable !== null) continue;
    pairs.push({
      pair: 'paced',
      load,
      a: {
        id: 'nginxPaced',
        config: kernelPacedLabel(load, 'kernel trains'),
        start: (tag) => startKernelPacedNginx(h, `nginx-paced-${tag}`, load),
        check: async (_s, _linesBefore, row) => checkCapTook(row, load, 'the LD_PRELOAD cap'),
      },
      b: {
        id: 'modulePaced',
        config: `nginx + Sammy module, paced ${paceLabel(load)} (kernel trains, tail held)`,
        start: (tag) => startModule(tag, true),
        check: async (s, linesBefore, row) => {
          checkCapTook(row, load, "the module's cap");
          await checkModuleLines(h, s, linesBefore, row, load);
        },
      },
    });
  }
  return pairs;
}

/**
 * Measures every pair in `rounds` rounds (roundSchedule: A then B in even rounds, B then
 * A in odd ones), each measurement on a freshly started and warmed-up nginx, nginx's own
 * CPU from the nanosecond clock. One row per configuration moved the module's ratio by a
 * third from run to run (a 2-3 s unpaced row; 6-8 ticks of nginx's CPU in a paced one);
 * fresh processes, alternating, and the median of the rounds' ratios did not.
 */
async function alternatingRounds(h: CpuHarness, pairs: readonly NginxPair[], rounds: number): Promise<RoundResult[]> {
  const results: RoundResult[] = [];
  for (const step of roundSchedule(pairs.length, rounds)) {
    const { pair, load, a, b } = pairs[step.pair]!;
    const side = step.side === 'A' ? a : b;
    const tag = `${pair}-${load.clients}-round${step.round}`;
    const row = await onServer(h, () => side.start(tag), async (server) => {
      const linesBefore = h.telemetry(server).length;
      const row = await measureCpuRow(h, server, load, pair === 'paced', side.id, side.config, (pid) => h.cpuNanoseconds(pid) / NS_PER_S);
      await side.check(server, linesBefore, row);
      return row;
    });
    const measurement: RoundMeasurement = {
      pair,
      clients: load.clients,
      round: step.round,
      side: step.side,
      id: row.id,
      config: row.config,
      bytes: row.bytes,
      seconds: row.elapsedS,
      // row.cpuSPerGB came from the nanosecond clock (measureCpuRow's ownCpuS above).
      ownCpuNsPerGB: row.cpuSPerGB * NS_PER_S,
      machineCpuSPerGB: row.machineCpuSPerGB,
    };
    results.push({ row, measurement });
  }
  return results;
}

/** The nginx rows of the section's table and the module's rounds, with their medians. */
interface NginxComparison {
  rows: CpuRow[];
  moduleRounds: RoundMeasurement[];
  moduleRoundRatios: PairRounds[];
}

/**
 * Stock nginx, unpaced and paced by the kernel, against nginx with the Sammy module in
 * alternating rounds; the table gets each pair's median round (by own CPU). Without the
 * module, stock nginx is measured once, as the other servers are.
 */
async function nginxComparison(h: CpuHarness, rounds: number): Promise<NginxComparison> {
  if (h.nginxModuleUnavailable !== null) {
    h.say(`No rows for nginx with the Sammy module (stock nginx measured once): ${h.nginxModuleUnavailable}`);
    const stock = await onServer(h, () => startStockNginx(h, 'nginx'), (s) =>
      eachLoad(async (load) => [await measureCpuRow(h, s, load, false, 'nginx', STOCK_NGINX_CONFIG)]),
    );
    return { rows: [...stock, ...(await nginxKernelPaced(h, 'nginxPaced', 'kernel trains'))], moduleRounds: [], moduleRoundRatios: [] };
  }
  if (h.nginxKernelPacingUnavailable !== null) h.say(`No kernel-paced nginx, so no paced module rounds: ${h.nginxKernelPacingUnavailable}`);
  const results = await alternatingRounds(h, nginxPairs(h), rounds);
  const moduleRounds = results.map((r) => r.measurement);
  const moduleRoundRatios = pairRounds(moduleRounds);
  const rows = moduleRoundRatios.flatMap((p) =>
    results
      .filter(({ measurement: m }) => m.pair === p.pair && m.clients === p.clients && m.round === p.medianRound)
      .sort((x, y) => x.measurement.side.localeCompare(y.measurement.side))
      .map(({ row }) => ({ ...row, config: `${row.config}; round ${p.medianRound + 1} of ${rounds}, the median by own CPU` })),
  );
  return { rows, moduleRounds, moduleRoundRatios };
}

/** Every round's B / A and their median, per pair (what decides the module's ratios). */
function sayModuleRounds(h: CpuHarness, pairs: readonly PairRounds[], rounds: number): void {
  if (pairs.length === 0) return;
  const clock = h.cpuClock === 'schedstat' ? 'schedstat ns' : '10 ms ticks: no schedstat here';
  h.say(`nginx + Sammy module / stock nginx, CPU per GB in ${rounds} alternating rounds (fresh nginx each; own CPU from ${clock}):`);
  h.say();
  const label = (p: PairRounds): string =>
    p.pair === 'unpaced' ? 'sammy_pacing off / nginx, unpaced' : 'paced, tail held / nginx paced by the kernel';
  const ratios = (xs: number[]): string => xs.map((x) => fmt(x, 3)).join(', ');
  h.table(
    ['clients', 'comparison', 'own CPU, per round', 'median', "machine's CPU, per round", 'median'],
    pairs.map((p) => [
      String(p.clients),
      label(p),
      ratios(p.ownRatios),
      fmt(p.ownMedian, 3),
      ratios(p.machineRatios),
      fmt(p.machineMedian, 3),
    ]),
  );
  h.say();
}

// One worker, as nginx runs one (worker_processes 1): CPU per GB is then one process's against one's.
const ONE_WORKER = ['--workers', '1'];
const NGINX_PACED_PORT = 18_082;
/** The thesis's burst size, and the server's default N. */
const NAMESPACE_TRAIN_PACKETS = 4;

/**
 * 4-packet bursts without application wake-ups: with tcp_min_tso_segs and gso_max_segs
 * at 4 in its namespace the server leaves the default plan's bursts to the kernel, whose
 * trains are then exactly 4 packets (the bursts section). Beside it, nginx paced under
 * the same settings.
 */
async function namespaceTrains(h: CpuHarness, withNginx: boolean): Promise<CpuRow[]> {
  const n = NAMESPACE_TRAIN_PACKETS;
  const mechanism = `tcp_min_tso_segs=${n} gso_max_segs=${n}`;
  h.setTrainCap(n);
  try {
    const rows = await onServer(h, () => h.startSammy('cpu-namespace', ONE_WORKER), async (s) => {
      const out: CpuRow[] = [];
      for (const load of CPU_LOADS) out.push(await measureCpuRow(h, s, load, true, 'pacedNamespace', `sammy paced ${paceLabel(load)}, N=${n} (default plan) under ${mechanism}`));
      return out;
    });
    if (withNginx) rows.push(...(await nginxKernelPaced(h, 'nginxPacedNamespace', `trains of ${n} (${mechanism})`)));
    return rows;
  } finally {
    h.setTrainCap(null);
  }
}

/** `f`'s rows for every load, in CPU_LOADS' order. */
async function eachLoad(f: (load: CpuLoad) => Promise<CpuRow[]>): Promise<CpuRow[]> {
  const out: CpuRow[] = [];
  for (const load of CPU_LOADS) out.push(...(await f(load)));
  return out;
}

/** A floor's rows (bench/node-floor.ts), paced by the kernel and unpaced, on one server. */
function floorRows(h: CpuHarness, framework: FloorFramework, pacedId: CpuRow['id'], unpacedId: CpuRow['id'], label: string): Promise<CpuRow[]> {
  return onServer(h, () => h.startNodeFloor(`cpu-${framework}-floor`, framework), (s) =>
    eachLoad(async (load) => [
      await measureCpuRow(h, s, load, true, pacedId, `${label}, paced ${paceLabel(load)} by the kernel`),
      await measureCpuRow(h, s, load, false, unpacedId, `${label}, unpaced`),
    ]),
  );
}

export async function cpuSection(h: CpuHarness, withNginx: boolean, rounds = DEFAULT_MODULE_ROUNDS): Promise<CpuSection> {
  const loads = CPU_LOADS.map((l) => `${l.clients} at ${paceLabel(l)}`).join(', ');
  h.say(`## 3. Server CPU per GB served: keep-alive clients fetching ${CPU_FILES} x 1 MB segments in a loop (${loads} when paced)`);
  h.say();
  h.say(
    `Every server first serves ${WARM_UP_BYTES / MB} MB unmeasured, then ${WARM_UP_PACED_BYTES / MB} MB paced at ${(WARM_UP_PACE_BYTES_PER_S * 8) / MB} Mbit/s a connection (its paced code compiled). Paced rows: N=4 default plan (application bursts here), or --burst-mode kernel.`,
  );
  h.say();
  const rows: CpuRow[] = [
    ...(await onServer(h, () => h.startSammy('cpu-auto', ONE_WORKER), (s) =>
      eachLoad(async (load) => [
        await measureCpuRow(h, s, load, true, 'pacedDefault', `sammy paced ${paceLabel(load)}, N=4 (default plan)`),
        await measureCpuRow(h, s, load, false, 'unpaced', 'sammy unpaced'),
      ]),
    )),
    ...(await onServer(h, () => h.startSammy('cpu-kernel', [...ONE_WORKER, '--burst-mode', 'kernel']), (s) =>
      eachLoad(async (load) => [await measureCpuRow(h, s, load, true, 'pacedKernel', `sammy paced ${paceLabel(load)}, --burst-mode kernel`)]),
    )),
    // Node's own floor: node:http alone, the bodies from memory, paced by the kernel per
    // connection; then the same answers through a bare fastify, the server's framework.
    ...(await floorRows(h, 'node', 'nodeFloorPaced', 'nodeFloor', 'node:http alone (bodies from memory)')),
    ...(await floorRows(h, 'fastify', 'fastifyFloorPaced', 'fastifyFloor', 'bare fastify (one route, no logger, bodies from memory)')),
    // What zero-copy changes: the same server with bodies through Node's streams.
    ...(await onServer(h, () => h.startSammy('cpu-stream', [...ONE_WORKER, '--burst-mode', 'kernel', '--body-path', 'stream']), async (s) => [
      await measureCpuRow(h, s, CPU_LOADS[0]!, true, 'pacedKernelStream', `sammy paced ${paceLabel(CPU_LOADS[0]!)}, --burst-mode kernel --body-path stream`),
      await measureCpuRow(h, s, CPU_LOADS[0]!, false, 'unpacedStream', 'sammy unpaced, --body-path stream'),
    ])),
  ];
  const modules: NginxComparison = withNginx ? await nginxComparison(h, rounds) : { rows: [], moduleRounds: [], moduleRoundRatios: [] };
  rows.push(...modules.rows);
  if (withNginx) {
    // nginx's nearest equivalent; it grants one second of limit_rate up front, so
    // responses this small are not slowed at all (see the seconds column).
    const limitRate = { limitRateBytesPerS: CPU_LOADS[0]!.paceBytesPerS };
    rows.push(
      ...(await onServer(h, () => h.startNginx('nginx-limit', 18_081, limitRate), async (s) => [
        await measureCpuRow(h, s, CPU_LOADS[0]!, true, 'nginxLimitRate', `nginx limit_rate ${paceLabel(CPU_LOADS[0]!)} (does not slow 1 MB responses)`),
      ])),
    );
  }
  rows.push(...(await namespaceTrains(h, withNginx)));
  rows.sort((a, b) => a.clients - b.clients);
  h.table(
    ['clients', 'configuration', 'GB served', 'seconds', 'MB/s', 'server CPU s', 'CPU s per GB', 'machine CPU s per GB'],
    rows.map((r) => [String(r.clients), r.config, fmt(r.bytes / 1e9, 3), fmt(r.elapsedS, 1), fmt(r.bytes / MB / r.elapsedS, 0), fmt(r.cpuS), fmt(r.cpuSPerGB), fmt(r.machineCpuSPerGB)]),
  );
  h.say();
  sayModuleRounds(h, modules.moduleRoundRatios, rounds);
  const ratios = cpuRatios(rows, 16, modules.moduleRoundRatios);
  const ratiosAt1000Clients = cpuRatios(rows, 1000, modules.moduleRoundRatios);
  for (const [clients, r] of [
    [16, ratios],
    [1000, ratiosAt1000Clients],
  ] as const) {
    if (r.pacedKernelVsNginx !== undefined) {
      h.say(`${clients} clients, CPU per GB / nginx's: paced, kernel trains ${fmt(r.pacedKernelVsNginx)}x; paced, application bursts (N=4) ${fmt(r.pacedDefaultVsNginx)}x; unpaced ${fmt(r.unpacedVsNginx)}x`);
    }
    h.say(`${clients} clients, CPU per GB, application bursts / kernel trains (both paced): ${fmt(r.appWriterVsKernel)}x`);
    if (r.pacedKernelVsNginxPaced !== undefined) {
      h.say(`${clients} clients, CPU per GB, nginx paced by the kernel / nginx unpaced: ${fmt(r.nginxPacedVsNginx)}x; sammy paced, kernel trains / nginx paced the same way: ${fmt(r.pacedKernelVsNginxPaced)}x`);
    }
    if (r.machine !== undefined) {
      const m = r.machine;
      h.say(
        `${clients} clients, the machine's CPU per GB against nginx paced the same way: kernel trains ${fmt(m.pacedKernelVsNginxPaced)}x; 4-packet bursts (application) / nginx's 4-packet trains ${fmt(m.pacedDefaultVsNginxPacedNamespace)}x; 4-packet trains (namespace) ${fmt(m.pacedNamespaceVsNginxPacedNamespace)}x; unpaced ${fmt(m.unpacedVsNginx)}x`,
      );
    }
    if (r.moduleUnpacedVsNginx !== undefined || r.modulePacedVsNginxPaced !== undefined) {
      h.say(
        `${clients} clients, nginx + Sammy module, CPU per GB${modules.moduleRounds.length > 0 ? `, median of ${rounds} rounds` : ''}: ` +
          `sammy_pacing off / nginx ${fmt(r.moduleUnpacedVsNginx)}x; ` +
          `paced, tail held / nginx paced by the kernel ${fmt(r.modulePacedVsNginxPaced)}x; ` +
          `the machine's CPU per GB: sammy_pacing off ${fmt(r.machine?.moduleUnpacedVsNginx)}x, ` +
          `paced ${fmt(r.machine?.modulePacedVsNginxPaced)}x`,
      );
    }
    if (r.nodeFloor !== undefined) {
      const f = r.nodeFloor;
      h.say(
        `${clients} clients, CPU per GB, Node's floor (node:http alone) / nginx: unpaced ${fmt(f.unpacedVsNginx)}x, paced by the kernel ${fmt(f.pacedVsNginx)}x; sammy / Node's floor: unpaced ${fmt(f.unpacedVsNodeFloor)}x, paced with kernel trains ${fmt(f.pacedKernelVsNodeFloor)}x`,
      );
      if (f.fastifyPacedVsNodeFloor !== undefined) {
        h.say(
          `${clients} clients, CPU per GB, bare fastify / node:http alone: unpaced ${fmt(f.fastifyUnpacedVsNodeFloor)}x, paced by the kernel ${fmt(f.fastifyPacedVsNodeFloor)}x; sammy / bare fastify: unpaced ${fmt(f.unpacedVsFastifyFloor)}x, paced with kernel trains ${fmt(f.pacedKernelVsFastifyFloor)}x`,
        );
      }
    }
    if (r.pacedNamespaceVsNginx !== undefined) {
      h.say(`${clients} clients, CPU per GB, 4-packet trains by the namespace mechanism: sammy / nginx unpaced ${fmt(r.pacedNamespaceVsNginx)}x; sammy / nginx paced the same way ${fmt(r.pacedNamespaceVsNginxPacedNamespace)}x`);
    }
  }
  if (ratios.zeroCopyVsStream !== undefined) {
    h.say(`16 clients, CPU per GB, sendfile / stream body path: paced, kernel trains ${fmt(ratios.zeroCopyVsStream.pacedKernel)}x; unpaced ${fmt(ratios.zeroCopyVsStream.unpaced)}x`);
  }
  h.say();
  return {
    rows,
    ratios,
    ratiosAt1000Clients,
    machineRatios: ratios.machine ?? null,
    rounds,
    moduleRounds: modules.moduleRounds,
    moduleRoundRatios: modules.moduleRoundRatios,
    moduleRoundsCpuClock: h.cpuClock,
  };
}
