import { cpuRatios, type CpuRow } from '../bench/cpu-ratios.js';

const row = (id: CpuRow['id'], cpuSPerGB: number): CpuRow => ({ id, config: id, bytes: 1e9, elapsedS: 1, cpuS: cpuSPerGB, cpuSPerGB });

describe('server bench CPU ratios', () => {
  test('are taken by row name, whatever the order', () => {
    const rows = [row('nginx', 2), row('unpaced', 3), row('pacedKernel', 4), row('nginxLimitRate', 100), row('pacedDefault', 6)];
    expect(cpuRatios(rows)).toEqual({ appWriterVsKernel: 1.5, pacedDefaultVsNginx: 3, pacedKernelVsNginx: 2, unpacedVsNginx: 1.5 });
  });

  test('without nginx only the paced comparison is made; a missing row is named', () => {
    expect(cpuRatios([row('pacedKernel', 2), row('pacedDefault', 3), row('unpaced', 1)])).toEqual({ appWriterVsKernel: 1.5 });
    expect(() => cpuRatios([row('pacedDefault', 3)])).toThrow(/no CPU row 'pacedKernel'/);
  });
});
