import { cpuRatios, type CpuRow } from '../bench/cpu-ratios.js';

const row = (id: CpuRow['id'], cpuSPerGB: number, clients = 16): CpuRow => ({ id, clients, config: id, bytes: 1e9, elapsedS: 1, cpuS: cpuSPerGB, cpuSPerGB, machineCpuS: 0, machineCpuSPerGB: 0 });

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

  test('without nginx only the paced comparison is made; a missing row is named', () => {
    expect(cpuRatios([row('pacedKernel', 2), row('pacedDefault', 3), row('unpaced', 1)], 16)).toEqual({ appWriterVsKernel: 1.5 });
    expect(() => cpuRatios([row('pacedDefault', 3)], 16)).toThrow(/no CPU row 'pacedKernel' for 16 clients/);
    expect(() => cpuRatios([row('pacedDefault', 3), row('pacedKernel', 3)], 1000)).toThrow(/for 1000 clients/);
  });
});
