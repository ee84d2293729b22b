// The server bench's CPU comparisons, taken from its rows by name (not by position,
// so a row added, dropped or reordered cannot shift a ratio onto the wrong pair).

export interface CpuRow {
  /** Which configuration the row measured. */
  id: 'pacedDefault' | 'pacedKernel' | 'unpaced' | 'nginx' | 'nginxLimitRate' | 'edgePaced' | 'edgeUnpaced';
  /** The row's label in the report. */
  config: string;
  bytes: number;
  elapsedS: number;
  cpuS: number;
  cpuSPerGB: number;
}

export interface CpuRatios {
  /** Application-timed bursts over kernel trains, both paced (always measured). */
  appWriterVsKernel: number;
  /** Against nginx, when nginx was measured. */
  pacedDefaultVsNginx?: number;
  pacedKernelVsNginx?: number;
  unpacedVsNginx?: number;
}

function perGB(rows: readonly CpuRow[], id: CpuRow['id']): number | undefined {
  return rows.find((r) => r.id === id)?.cpuSPerGB;
}

/** CPU-per-GB ratios of the measured rows; throws when a row every run has is missing. */
export function cpuRatios(rows: readonly CpuRow[]): CpuRatios {
  const need = (id: CpuRow['id']): number => {
    const v = perGB(rows, id);
    if (v === undefined) throw new Error(`bench: no CPU row '${id}' (rows: ${rows.map((r) => r.id).join(', ') || 'none'})`);
    return v;
  };
  const ratios: CpuRatios = { appWriterVsKernel: need('pacedDefault') / need('pacedKernel') };
  const nginx = perGB(rows, 'nginx');
  if (nginx !== undefined) {
    ratios.pacedDefaultVsNginx = need('pacedDefault') / nginx;
    ratios.pacedKernelVsNginx = need('pacedKernel') / nginx;
    ratios.unpacedVsNginx = need('unpaced') / nginx;
  }
  return ratios;
}
