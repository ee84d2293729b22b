// The server bench's CPU comparisons, taken from its rows by name and client count
// (not by position, so a row added, dropped or reordered cannot shift a ratio onto
// the wrong pair).

export interface CpuRow {
  /** Which configuration the row measured. */
  id: 'pacedDefault' | 'pacedKernel' | 'unpaced' | 'nginx' | 'nginxLimitRate' | 'pacedKernelStream' | 'unpacedStream' | 'edgePaced' | 'edgeUnpaced';
  /** Keep-alive clients in the row's load. */
  clients: number;
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
  /** Against nginx, when nginx was measured with the same clients. */
  pacedDefaultVsNginx?: number;
  pacedKernelVsNginx?: number;
  unpacedVsNginx?: number;
  /** The zero-copy body path over the stream path, when the stream rows were measured. */
  zeroCopyVsStream?: { pacedKernel: number; unpaced: number };
}

function perGB(rows: readonly CpuRow[], id: CpuRow['id']): number | undefined {
  return rows.find((r) => r.id === id)?.cpuSPerGB;
}

/** CPU-per-GB ratios of the rows measured with `clients` clients; throws when a row every run has is missing. */
export function cpuRatios(allRows: readonly CpuRow[], clients: number): CpuRatios {
  const rows = allRows.filter((r) => r.clients === clients);
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
  const pacedKernelStream = perGB(rows, 'pacedKernelStream');
  const unpacedStream = perGB(rows, 'unpacedStream');
  if (pacedKernelStream !== undefined && unpacedStream !== undefined) {
    ratios.zeroCopyVsStream = { pacedKernel: need('pacedKernel') / pacedKernelStream, unpaced: need('unpaced') / unpacedStream };
  }
  return ratios;
}
