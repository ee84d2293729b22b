import {
  cpuRatios,
  pairRounds,
  roundSchedule,
  type CpuRow,
  type ModulePair,
  type PairSide,
  type RoundMeasurement,
} from '../bench/cpu-ratios.js';

const row = (id: CpuRow['id'], cpuSPerGB: number, clients = 16): CpuRow => ({ id, clients, config: id, bytes: 1e9, elapsedS: 1, cpuS: cpuSPerGB, cpuSPerGB, machineCpuS: 0, machineCpuSPerGB: 0 });

/** A row with the server's own and the machine's CPU per GB. */
const both = (id: CpuRow['id'], cpuSPerGB: number, machineCpuSPerGB: number, clients = 16): CpuRow => ({
  ...row(id, cpuSPerGB, clients),
  machineCpuS: machineCpuSPerGB,
  machineCpuSPerGB,
});

/** Every row the module's ratios need, with 16 and with 1,000 clients. */
const moduleRows: CpuRow[] = [
  both('nginx', 0.2, 0.8),
  both('unpaced', 0.6, 1.2),
  both('pacedKernel', 1, 3),
  both('pacedDefault', 2, 5),
  both('nginxPaced', 0.1, 3),
  both('moduleUnpaced', 0.22, 1),
  both('modulePaced', 0.15, 3.3),
  both('nginx', 0.25, 1, 1000),
  both('unpaced', 0.5, 1.5, 1000),
  both('pacedKernel', 0.7, 3.2, 1000),
  both('pacedDefault', 1.4, 4, 1000),
  both('nginxPaced', 0.08, 2.5, 1000),
  both('moduleUnpaced', 0.3, 1.1, 1000),
  both('modulePaced', 0.06, 2.6, 1000),
];

describe('server bench CPU ratios', () => {
  test('are taken by row name and client count, whatever the order', () => {
    const rows = [
      row('nginx', 2),
      row('unpaced', 3),
      row('pacedKernel', 40, 1000),
      row('pacedKernel', 4),
      row('nginxLimitRate', 100),
      row('pacedDefault', 6),
      row('nginx', 1, 1000),
      row('pacedDefault', 60, 1000),
      row('unpaced', 2, 1000),
    ];
    expect(cpuRatios(rows, 16)).toEqual({ appWriterVsKernel: 1.5, pacedDefaultVsNginx: 3, pacedKernelVsNginx: 2, unpacedVsNginx: 1.5 });
    expect(cpuRatios(rows, 1000)).toEqual({ appWriterVsKernel: 1.5, pacedDefaultVsNginx: 60, pacedKernelVsNginx: 40, unpacedVsNginx: 2 });
  });

  test('the stream rows give the zero-copy path against the stream path', () => {
    const rows = [row('pacedKernel', 2), row('pacedDefault', 3), row('unpaced', 1), row('pacedKernelStream', 8), row('unpacedStream', 4)];
    expect(cpuRatios(rows, 16).zeroCopyVsStream).toEqual({ pacedKernel: 0.25, unpaced: 0.25 });
  });

  test("Node's floor gives what Node costs against nginx and what the server adds to it; without nginx only the latter", () => {
    const rows = [row('nginx', 0.2), row('unpaced', 0.6), row('pacedKernel', 1), row('pacedDefault', 2), row('nodeFloor', 0.4), row('nodeFloorPaced', 0.5)];
    const floor = cpuRatios(rows, 16).nodeFloor!;
    expect(floor.unpacedVsNginx).toBeCloseTo(2, 9);
    expect(floor.pacedVsNginx).toBeCloseTo(2.5, 9);
    expect(floor.unpacedVsNodeFloor).toBeCloseTo(1.5, 9);
    expect(floor.pacedKernelVsNodeFloor).toBeCloseTo(2, 9);
    expect(cpuRatios(rows.filter((r) => r.id !== 'nginx'), 16).nodeFloor).toEqual({ unpacedVsNodeFloor: 0.6 / 0.4, pacedKernelVsNodeFloor: 2 });
    expect(cpuRatios(rows.filter((r) => r.id !== 'nodeFloorPaced'), 16).nodeFloor).toBeUndefined();
  });

  test('the fastify floor splits what the server adds to node:http into the framework and the rest', () => {
    const rows = [row('unpaced', 0.6), row('pacedKernel', 1.2), row('pacedDefault', 2), row('nodeFloor', 0.4), row('nodeFloorPaced', 0.5), row('fastifyFloor', 0.5), row('fastifyFloorPaced', 0.8)];
    const floor = cpuRatios(rows, 16).nodeFloor!;
    expect(floor.fastifyUnpacedVsNodeFloor).toBeCloseTo(1.25, 9);
    expect(floor.fastifyPacedVsNodeFloor).toBeCloseTo(1.6, 9);
    expect(floor.unpacedVsFastifyFloor).toBeCloseTo(1.2, 9);
    expect(floor.pacedKernelVsFastifyFloor).toBeCloseTo(1.5, 9);
    // A fastify floor measured without its paced row gives none of its ratios.
    expect(cpuRatios(rows.filter((r) => r.id !== 'fastifyFloorPaced'), 16).nodeFloor).toEqual({ unpacedVsNodeFloor: 0.6 / 0.4, pacedKernelVsNodeFloor: 1.2 / 0.5 });
  });

  test('the kernel-paced nginx rows give the comparisons with the kernel pacing in both', () => {
    const rows = [
      row('nginx', 2),
      row('unpaced', 3),
      row('pacedKernel', 12),
      row('pacedDefault', 16),
      row('nginxPaced', 4),
      row('pacedNamespace', 10),
      row('nginxPacedNamespace', 5),
      row('nginxPaced', 400, 1000),
    ];
    expect(cpuRatios(rows, 16)).toMatchObject({ pacedKernelVsNginx: 6, nginxPacedVsNginx: 2, pacedKernelVsNginxPaced: 3, pacedNamespaceVsNginx: 5, pacedNamespaceVsNginxPacedNamespace: 2 });
    // Without its namespace twin, the namespace row is compared with unpaced nginx only.
    const noTwin = cpuRatios(rows.filter((r) => r.id !== 'nginxPacedNamespace'), 16);
    expect(noTwin.pacedNamespaceVsNginx).toBe(5);
    expect(noTwin.pacedNamespaceVsNginxPacedNamespace).toBeUndefined();
  });

  test("the machine's CPU per GB is compared with nginx paced the same way", () => {
    const machineRow = (id: CpuRow['id'], machineCpuSPerGB: number): CpuRow => ({ ...row(id, 1), machineCpuS: machineCpuSPerGB, machineCpuSPerGB });
    const rows = [
      machineRow('nginx', 1),
      machineRow('unpaced', 1.5),
      machineRow('pacedKernel', 3),
      machineRow('pacedDefault', 5),
      machineRow('nginxPaced', 2),
      machineRow('pacedNamespace', 6),
      machineRow('nginxPacedNamespace', 4),
    ];
    expect(cpuRatios(rows, 16).machine).toEqual({ pacedKernelVsNginxPaced: 1.5, pacedDefaultVsNginxPacedNamespace: 1.25, pacedNamespaceVsNginxPacedNamespace: 1.5, unpacedVsNginx: 1.5 });
    expect(cpuRatios(rows.filter((r) => r.id !== 'nginxPaced'), 16).machine).toBeUndefined();
  });

  test("the module's rows are compared with nginx unpaced and with nginx paced by the kernel, own CPU and the machine's", () => {
    const rows = moduleRows;
    const at16 = cpuRatios(rows, 16);
    expect(at16.moduleUnpacedVsNginx).toBeCloseTo(1.1, 9);
    expect(at16.modulePacedVsNginxPaced).toBeCloseTo(1.5, 9);
    expect(at16.machine?.moduleUnpacedVsNginx).toBeCloseTo(1.25, 9);
    expect(at16.machine?.modulePacedVsNginxPaced).toBeCloseTo(1.1, 9);
    // The rows with 1,000 clients give their own, not the 16-client rows'.
    const at1000 = cpuRatios(rows, 1000);
    expect(at1000.moduleUnpacedVsNginx).toBeCloseTo(1.2, 9);
    expect(at1000.modulePacedVsNginxPaced).toBeCloseTo(0.75, 9);
    expect(at1000.machine?.modulePacedVsNginxPaced).toBeCloseTo(1.04, 9);
    // The machine ratios the section had before stay as they were beside them.
    expect(at16.machine?.pacedKernelVsNginxPaced).toBeCloseTo(1, 9);
    expect(at16.machine?.unpacedVsNginx).toBeCloseTo(1.5, 9);
    // Without its stock twin a module row gives no ratio: the paced one needs nginx paced by the kernel.
    const noKernelPacedNginx = cpuRatios(rows.filter((r) => r.id !== 'nginxPaced'), 16);
    expect(noKernelPacedNginx.modulePacedVsNginxPaced).toBeUndefined();
    expect(noKernelPacedNginx.machine).toBeUndefined();
    expect(noKernelPacedNginx.moduleUnpacedVsNginx).toBeCloseTo(1.1, 9);
    const noModule = cpuRatios(rows.filter((r) => r.id !== 'moduleUnpaced' && r.id !== 'modulePaced'), 16);
    expect(noModule.moduleUnpacedVsNginx).toBeUndefined();
    expect(noModule.machine).not.toHaveProperty('modulePacedVsNginxPaced');
  });

  test('without nginx only the paced comparison is made; a missing row is named', () => {
    expect(cpuRatios([row('pacedKernel', 2), row('pacedDefault', 3), row('unpaced', 1)], 16)).toEqual({ appWriterVsKernel: 1.5 });
    expect(() => cpuRatios([row('pacedDefault', 3)], 16)).toThrow(/no CPU row 'pacedKernel' for 16 clients/);
    expect(() => cpuRatios([row('pacedDefault', 3), row('pacedKernel', 3)], 1000)).toThrow(/for 1000 clients/);
  });
});

/** A round's measurement of one side: `own` and `machine` are its CPU per GB (ns and s). */
const measured = (pair: ModulePair, clients: number, round: number, side: PairSide, own: number, machine: number): RoundMeasurement => ({
  pair,
  clients,
  round,
  side,
  id: side === 'A' ? (pair === 'unpaced' ? 'nginx' : 'nginxPaced') : pair === 'unpaced' ? 'moduleUnpaced' : 'modulePaced',
  config: `${pair} ${side}`,
  bytes: 1e9,
  seconds: 12,
  ownCpuNsPerGB: own,
  machineCpuSPerGB: machine,
});

/** A pair's rounds in round order, A at 1e8 ns and 1 s per GB, B at each round's `own` and `machine` ratio. */
const roundsAt = (pair: ModulePair, clients: number, own: number[], machine = own): RoundMeasurement[] =>
  own.flatMap((ratio, round) => [
    measured(pair, clients, round, 'A', 1e8, 1),
    measured(pair, clients, round, 'B', ratio * 1e8, machine[round]!),
  ]);

describe("the module's alternating rounds", () => {
  test('every pair in every round, A then B in even rounds and B then A in odd ones', () => {
    const order = roundSchedule(2, 3).map((s) => `${s.round}:${s.pair}${s.side}`);
    expect(order).toEqual(['0:0A', '0:0B', '0:1A', '0:1B', '1:0B', '1:0A', '1:1B', '1:1A', '2:0A', '2:0B', '2:1A', '2:1B']);
    expect(roundSchedule(1, 0)).toEqual([]);
  });

  test("each round's B / A, their medians and the median round, per pair and client count, in whatever order taken", () => {
    const rounds = [
      // Round 1 measured B first (an odd round); the order taken must not matter.
      measured('unpaced', 16, 1, 'B', 3.3e8, 1.1),
      measured('unpaced', 16, 1, 'A', 3e8, 1),
      measured('unpaced', 16, 0, 'A', 2e8, 1),
      measured('unpaced', 16, 0, 'B', 2.4e8, 0.9),
      measured('unpaced', 16, 2, 'A', 4e8, 2),
      measured('unpaced', 16, 2, 'B', 4e8, 2.6),
      measured('paced', 1000, 0, 'A', 1e8, 4),
      measured('paced', 1000, 0, 'B', 1.5e8, 4.4),
    ];
    const [unpaced, paced] = pairRounds(rounds);
    expect(unpaced!.pair).toBe('unpaced');
    expect(unpaced!.clients).toBe(16);
    // Ratios in round order: 1.2, 1.1, 1.0 (own), 0.9, 1.1, 1.3 (machine).
    unpaced!.ownRatios.forEach((x, i) => expect(x).toBeCloseTo([1.2, 1.1, 1][i]!, 9));
    unpaced!.machineRatios.forEach((x, i) => expect(x).toBeCloseTo([0.9, 1.1, 1.3][i]!, 9));
    expect(unpaced!.ownMedian).toBeCloseTo(1.1, 9);
    expect(unpaced!.machineMedian).toBeCloseTo(1.1, 9);
    expect(unpaced!.medianRound).toBe(1);
    expect(paced).toMatchObject({ pair: 'paced', clients: 1000, ownRatios: [1.5], ownMedian: 1.5, medianRound: 0 });
    expect(paced!.machineMedian).toBeCloseTo(1.1, 9);
  });

  test('with an even count the median lies between the middle two, and the median round is the lower of them', () => {
    const [paced] = pairRounds(roundsAt('paced', 16, [1.0, 1.5, 1.25, 1.75]));
    expect(paced!.ownMedian).toBe(1.375);
    expect(paced!.medianRound).toBe(2);
  });

  test('a round without both sides is named', () => {
    const oneSideEach = [measured('paced', 16, 0, 'A', 1, 1), measured('paced', 16, 1, 'B', 1, 1)];
    expect(() => pairRounds(oneSideEach)).toThrow(/no side B of the paced pair, 16 clients, in round 0/);
  });

  test("the module's ratios are the rounds' medians, not the table's rows'; other ratios still come from the rows", () => {
    const pairs = pairRounds([
      ...roundsAt('unpaced', 16, [1.3, 1.1, 1.2], [0.7, 0.9, 0.8]),
      ...roundsAt('paced', 16, [0.9, 1.05, 1.4]),
      ...roundsAt('unpaced', 1000, [3], [1]),
    ]);
    // The rows alone give 1.1 and 1.5 (the machine's 1.25 and 1.1) with 16 clients (the test above).
    const at16 = cpuRatios(moduleRows, 16, pairs);
    expect(at16.moduleUnpacedVsNginx).toBeCloseTo(1.2, 9);
    expect(at16.modulePacedVsNginxPaced).toBeCloseTo(1.05, 9);
    expect(at16.machine?.moduleUnpacedVsNginx).toBeCloseTo(0.8, 9);
    expect(at16.machine?.modulePacedVsNginxPaced).toBeCloseTo(1.05, 9);
    expect(at16.unpacedVsNginx).toBeCloseTo(3, 9);
    expect(at16.machine?.pacedKernelVsNginxPaced).toBeCloseTo(1, 9);
    // The 1,000-client rounds give the 1,000-client ratios only; a pair without rounds there keeps its rows' ratio.
    const at1000 = cpuRatios(moduleRows, 1000, pairs);
    expect(at1000.moduleUnpacedVsNginx).toBeCloseTo(3, 9);
    expect(at1000.modulePacedVsNginxPaced).toBeCloseTo(0.75, 9);
  });
});
