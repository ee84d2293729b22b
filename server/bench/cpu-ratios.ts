// The server bench's CPU comparisons, taken from its rows by name and client count
// (not by position, so a row added, dropped or reordered cannot shift a ratio onto
// the wrong pair).

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
   * The whole machine's CPU per GB (the clients' too, the same in every row), against nginx
   * paced the same way by the kernel: where the kernel's paced transmissions are
   * counted whichever task they interrupt. Kernel trains against nginx's kernel trains,
   * 4-packet bursts (application-timed, and by the namespace mechanism) against nginx's
   * 4-packet trains, unpaced against unpaced.
   */
  machine?: { pacedKernelVsNginxPaced: number; pacedDefaultVsNginxPacedNamespace?: number; pacedNamespaceVsNginxPacedNamespace?: number; unpacedVsNginx: number };
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

function perGB(rows: readonly CpuRow[], id: CpuRow['id'], of: 'cpuSPerGB' | 'machineCpuSPerGB' = 'cpuSPerGB'): number | undefined {
  return rows.find((r) => r.id === id)?.[of];
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
  }
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
