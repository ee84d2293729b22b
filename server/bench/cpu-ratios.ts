// The server bench's CPU comparisons, taken from its rows by name and client count
// (not by position, so a row added, dropped or reordered cannot shift a ratio onto
// the wrong pair), and the medians of the alternating rounds that compare nginx with
// the Sammy module against stock nginx.
import { median } from './kit.js';

export interface CpuRow {
  /** Which configuration the row measured. */
  id:
    | 'pacedDefault'
    | 'pacedKernel'
    | 'unpaced'
    | 'nginx'
    | 'nginxLimitRate'
    /** nginx with every connection capped at the load's pace by the kernel (bench/pace-preload.c). */
    | 'nginxPaced'
    /** Under the namespace mechanism for 4-packet trains (tcp_min_tso_segs=4, gso_max_segs=4): this server's default plan (N=4), left to the kernel. */
    | 'pacedNamespace'
    /** nginx, capped as in nginxPaced, under the same namespace mechanism. */
    | 'nginxPacedNamespace'
    /** node:http alone (bench/node-floor.ts): no framework, bodies from memory; paced by the kernel per connection, and unpaced. */
    | 'nodeFloorPaced'
    | 'nodeFloor'
    /** The same answers through a bare fastify (one route, no logger): the server's framework with none of the server. */
    | 'fastifyFloorPaced'
    | 'fastifyFloor'
    /** nginx with the Sammy module (native/nginx) and its telemetry log: `sammy_pacing off`, serving the unpaced load. */
    | 'moduleUnpaced'
    /** The same module pacing each request at its rtp (kernel trains), its tail held (`sammy_tail_hold on`). */
    | 'modulePaced'
    | 'pacedKernelStream'
    | 'unpacedStream'
    | 'edgePaced'
    | 'edgeUnpaced';
  /** Keep-alive clients in the row's load. */
  clients: number;
  /** The row's label in the report. */
  config: string;
  bytes: number;
  elapsedS: number;
  cpuS: number;
  cpuSPerGB: number;
  /** The whole machine's busy CPU seconds over the row (cpu.ts machineCpuSeconds: the clients and the softirq work too). */
  machineCpuS: number;
  machineCpuSPerGB: number;
}

/**
 * The whole machine's CPU per GB (the clients' too, the same in every row), against nginx
 * paced the same way by the kernel: where the kernel's paced transmissions are
 * counted whichever task they interrupt. Kernel trains against nginx's kernel trains,
 * 4-packet bursts (application-timed, and by the namespace mechanism) against nginx's
 * 4-packet trains, unpaced against unpaced; the module's rows as in CpuRatios.
 */
export interface MachineCpuRatios {
  pacedKernelVsNginxPaced: number;
  pacedDefaultVsNginxPacedNamespace?: number;
  pacedNamespaceVsNginxPacedNamespace?: number;
  unpacedVsNginx: number;
  moduleUnpacedVsNginx?: number;
  modulePacedVsNginxPaced?: number;
}

export interface CpuRatios {
  /** Application-timed bursts over kernel trains, both paced (always measured). */
  appWriterVsKernel: number;
  /** Against nginx, when nginx was measured with the same clients. */
  pacedDefaultVsNginx?: number;
  pacedKernelVsNginx?: number;
  unpacedVsNginx?: number;
  /**
   * Against nginx paced the same way by the kernel, when it was measured: the kernel's
   * own pacing work (a timer and a transmit per train) is then in both. `nginxPacedVsNginx`
   * is that work's share: what pacing costs a server that adds nothing of its own.
   */
  nginxPacedVsNginx?: number;
  pacedKernelVsNginxPaced?: number;
  /** 4-packet trains by the namespace mechanism: against unpaced nginx and against nginx paced under the same mechanism. */
  pacedNamespaceVsNginx?: number;
  pacedNamespaceVsNginxPacedNamespace?: number;
  /**
   * nginx with the Sammy module against stock nginx, when both were measured: unpaced
   * (the module loaded with pacing off) against nginx, and paced (kernel trains, the
   * tail held) against nginx paced by the kernel. What the module adds to nginx. From
   * the cpu section: the median of its alternating rounds' ratios (pairRounds).
   */
  moduleUnpacedVsNginx?: number;
  modulePacedVsNginxPaced?: number;
  machine?: MachineCpuRatios;
  /**
   * Node's own floor (node:http alone, bodies from memory), when it was measured: against
   * nginx (what Node itself costs), and this server against it (what the server adds).
   * With the fastify floor too: the framework against node:http (what fastify adds), and
   * this server against the framework (what the server adds beyond it).
   */
  nodeFloor?: {
    unpacedVsNginx?: number;
    pacedVsNginx?: number;
    unpacedVsNodeFloor: number;
    pacedKernelVsNodeFloor: number;
    fastifyUnpacedVsNodeFloor?: number;
    fastifyPacedVsNodeFloor?: number;
    unpacedVsFastifyFloor?: number;
    pacedKernelVsFastifyFloor?: number;
  };
  /** The zero-copy body path over the stream path, when the stream rows were measured. */
  zeroCopyVsStream?: { pacedKernel: number; unpaced: number };
}

/** Which comparison a round measured: stock nginx (A) against nginx with the Sammy module (B). */
export type ModulePair =
  /** A: stock nginx unpaced (`nginx`); B: the module with `sammy_pacing off` (`moduleUnpaced`); the unpaced load. */
  | 'unpaced'
  /** A: nginx paced by the kernel (`nginxPaced`); B: the module pacing at each request's rtp, tail held (`modulePaced`). */
  | 'paced';

/** The two sides of a pair, in the order of an even round (bench/cpu.ts alternatingRounds). */
export type PairSide = 'A' | 'B';

/** One measurement of the cpu section's alternating rounds (each on a freshly started, warmed-up nginx). */
export interface RoundMeasurement {
  pair: ModulePair;
  clients: number;
  /** 0-based. */
  round: number;
  side: PairSide;
  id: CpuRow['id'];
  config: string;
  bytes: number;
  seconds: number;
  /** nginx's own CPU (master and worker) in nanoseconds per GB served. */
  ownCpuNsPerGB: number;
  /** The whole machine's busy CPU seconds per GB served (/proc/stat). */
  machineCpuSPerGB: number;
}

/** A pair's rounds: B / A per round, and their medians. */
export interface PairRounds {
  pair: ModulePair;
  clients: number;
  /** B's own CPU per GB over A's, one per round, in round order. */
  ownRatios: number[];
  /** The same for the machine's CPU per GB. */
  machineRatios: number[];
  ownMedian: number;
  machineMedian: number;
  /** The round whose own-CPU ratio is the median (for an even count, the lower of the middle two): the table shows its rows. */
  medianRound: number;
}

/** One step of alternating rounds: which pair's which side to measure, in which round. */
export interface RoundStep {
  round: number;
  /** Index into the pairs. */
  pair: number;
  side: PairSide;
}

/**
 * The order of `rounds` rounds over `pairCount` pairs: every pair in each round, A then B
 * in even rounds and B then A in odd ones, so that neither side always runs first (on a
 * machine whose load drifts, the side measured second would otherwise always see the drift).
 */
export function roundSchedule(pairCount: number, rounds: number): RoundStep[] {
  const steps: RoundStep[] = [];
  for (let round = 0; round < rounds; round++) {
    const order: PairSide[] = round % 2 === 0 ? ['A', 'B'] : ['B', 'A'];
    for (let pair = 0; pair < pairCount; pair++) for (const side of order) steps.push({ round, pair, side });
  }
  return steps;
}

/** Each pair's ratios per round and their medians, from the rounds' measurements; throws when a round lacks a side. */
export function pairRounds(measurements: readonly RoundMeasurement[]): PairRounds[] {
  const keys = [...new Set(measurements.map((m) => `${m.pair} ${m.clients}`))];
  return keys.map((key) => {
    const of = measurements.filter((m) => `${m.pair} ${m.clients}` === key);
    const { pair, clients } = of[0]!;
    const rounds = [...new Set(of.map((m) => m.round))].sort((a, b) => a - b);
    const side = (round: number, s: PairSide): RoundMeasurement => {
      const found = of.find((m) => m.round === round && m.side === s);
      if (found === undefined) throw new Error(`bench: no side ${s} of the ${pair} pair, ${clients} clients, in round ${round}`);
      return found;
    };
    const ownRatios = rounds.map((r) => side(r, 'B').ownCpuNsPerGB / side(r, 'A').ownCpuNsPerGB);
    const machineRatios = rounds.map((r) => side(r, 'B').machineCpuSPerGB / side(r, 'A').machineCpuSPerGB);
    const byOwnRatio = rounds.map((round, i) => ({ round, ratio: ownRatios[i]! })).sort((x, y) => x.ratio - y.ratio);
    const medianRound = byOwnRatio[Math.floor((byOwnRatio.length - 1) / 2)]!.round;
    return { pair, clients, ownRatios, machineRatios, ownMedian: median(ownRatios), machineMedian: median(machineRatios), medianRound };
  });
}

const ratioOf = (a: number | undefined, b: number | undefined): number | undefined =>
  a === undefined || b === undefined ? undefined : a / b;

function perGB(rows: readonly CpuRow[], id: CpuRow['id'], of: 'cpuSPerGB' | 'machineCpuSPerGB' = 'cpuSPerGB'): number | undefined {
  return rows.find((r) => r.id === id)?.[of];
}

/**
 * CPU-per-GB ratios of the rows measured with `clients` clients; throws when a row every run has is missing.
 * The module's ratios are the medians of `rounds` (the section's alternating rounds) where they have the pair,
 * else its rows' (a single row each moved the ratio by a third from run to run).
 */
export function cpuRatios(allRows: readonly CpuRow[], clients: number, rounds: readonly PairRounds[] = []): CpuRatios {
  const rows = allRows.filter((r) => r.clients === clients);
  const roundsOf = (pair: ModulePair): PairRounds | undefined => rounds.find((p) => p.pair === pair && p.clients === clients);
  const [unpacedRounds, pacedRounds] = [roundsOf('unpaced'), roundsOf('paced')];
  const need = (id: CpuRow['id']): number => {
    const v = perGB(rows, id);
    if (v === undefined) throw new Error(`bench: no CPU row '${id}' for ${clients} clients (rows: ${rows.map((r) => r.id).join(', ') || 'none'})`);
    return v;
  };
  const ratios: CpuRatios = { appWriterVsKernel: need('pacedDefault') / need('pacedKernel') };
  const nginx = perGB(rows, 'nginx');
  if (nginx !== undefined) {
    ratios.pacedDefaultVsNginx = need('pacedDefault') / nginx;
    ratios.pacedKernelVsNginx = need('pacedKernel') / nginx;
    ratios.unpacedVsNginx = need('unpaced') / nginx;
  }
  const nginxPaced = perGB(rows, 'nginxPaced');
  if (nginxPaced !== undefined) {
    if (nginx !== undefined) ratios.nginxPacedVsNginx = nginxPaced / nginx;
    ratios.pacedKernelVsNginxPaced = need('pacedKernel') / nginxPaced;
  }
  const machine = (id: CpuRow['id']): number | undefined => perGB(rows, id, 'machineCpuSPerGB');
  const [machineNginx, machineNginxPaced, machineNginxPacedNamespace] = [machine('nginx'), machine('nginxPaced'), machine('nginxPacedNamespace')];
  if (machineNginx !== undefined && machineNginxPaced !== undefined) {
    ratios.machine = { pacedKernelVsNginxPaced: machine('pacedKernel')! / machineNginxPaced, unpacedVsNginx: machine('unpaced')! / machineNginx };
    if (machineNginxPacedNamespace !== undefined) {
      ratios.machine.pacedDefaultVsNginxPacedNamespace = machine('pacedDefault')! / machineNginxPacedNamespace;
      const pacedNamespaceMachine = machine('pacedNamespace');
      if (pacedNamespaceMachine !== undefined) ratios.machine.pacedNamespaceVsNginxPacedNamespace = pacedNamespaceMachine / machineNginxPacedNamespace;
    }
    const machineModuleUnpaced = unpacedRounds?.machineMedian ?? ratioOf(machine('moduleUnpaced'), machineNginx);
    const machineModulePaced = pacedRounds?.machineMedian ?? ratioOf(machine('modulePaced'), machineNginxPaced);
    if (machineModuleUnpaced !== undefined) ratios.machine.moduleUnpacedVsNginx = machineModuleUnpaced;
    if (machineModulePaced !== undefined) ratios.machine.modulePacedVsNginxPaced = machineModulePaced;
  }
  const moduleUnpaced = unpacedRounds?.ownMedian ?? ratioOf(perGB(rows, 'moduleUnpaced'), nginx);
  const modulePaced = pacedRounds?.ownMedian ?? ratioOf(perGB(rows, 'modulePaced'), nginxPaced);
  if (moduleUnpaced !== undefined) ratios.moduleUnpacedVsNginx = moduleUnpaced;
  if (modulePaced !== undefined) ratios.modulePacedVsNginxPaced = modulePaced;
  const pacedNamespace = perGB(rows, 'pacedNamespace');
  if (pacedNamespace !== undefined) {
    if (nginx !== undefined) ratios.pacedNamespaceVsNginx = pacedNamespace / nginx;
    const nginxPacedNamespace = perGB(rows, 'nginxPacedNamespace');
    if (nginxPacedNamespace !== undefined) ratios.pacedNamespaceVsNginxPacedNamespace = pacedNamespace / nginxPacedNamespace;
  }
  const [nodeFloor, nodeFloorPaced] = [perGB(rows, 'nodeFloor'), perGB(rows, 'nodeFloorPaced')];
  if (nodeFloor !== undefined && nodeFloorPaced !== undefined) {
    ratios.nodeFloor = { unpacedVsNodeFloor: need('unpaced') / nodeFloor, pacedKernelVsNodeFloor: need('pacedKernel') / nodeFloorPaced };
    if (nginx !== undefined) Object.assign(ratios.nodeFloor, { unpacedVsNginx: nodeFloor / nginx, pacedVsNginx: nodeFloorPaced / nginx });
    const [fastifyFloor, fastifyFloorPaced] = [perGB(rows, 'fastifyFloor'), perGB(rows, 'fastifyFloorPaced')];
    if (fastifyFloor !== undefined && fastifyFloorPaced !== undefined) {
      Object.assign(ratios.nodeFloor, {
        fastifyUnpacedVsNodeFloor: fastifyFloor / nodeFloor,
        fastifyPacedVsNodeFloor: fastifyFloorPaced / nodeFloorPaced,
        unpacedVsFastifyFloor: need('unpaced') / fastifyFloor,
        pacedKernelVsFastifyFloor: need('pacedKernel') / fastifyFloorPaced,
      });
    }
  }
  const pacedKernelStream = perGB(rows, 'pacedKernelStream');
  const unpacedStream = perGB(rows, 'unpacedStream');
  if (pacedKernelStream !== undefined && unpacedStream !== undefined) {
    ratios.zeroCopyVsStream = { pacedKernel: need('pacedKernel') / pacedKernelStream, unpaced: need('unpaced') / unpacedStream };
  }
  return ratios;
}
