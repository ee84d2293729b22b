import { cpuRatios, type CpuRow } from '../bench/cpu-ratios.js';

const row = (id: CpuRow['id'], cpuSPerGB: number, clients = 16): CpuRow => ({ id, clients, config: id, bytes: 1e9, elapsedS: 1, cpuS: cpuSPerGB, cpuSPerGB });

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

  test('without nginx only the paced comparison is made; a missing row is named', () => {
    expect(cpuRatios([row('pacedKernel', 2), row('pacedDefault', 3), row('unpaced', 1)], 16)).toEqual({ appWriterVsKernel: 1.5 });
    expect(() => cpuRatios([row('pacedDefault', 3)], 16)).toThrow(/no CPU row 'pacedKernel' for 16 clients/);
    expect(() => cpuRatios([row('pacedDefault', 3), row('pacedKernel', 3)], 1000)).toThrow(/for 1000 clients/);
  });
});
