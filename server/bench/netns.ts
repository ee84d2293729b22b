// Two network namespaces joined by one veth pair: the server's and the client's.
// Names carry this process's pid; leftovers of dead bench runs are removed, and
// nothing else is touched (other engineers' labs share the kernel).
import { execFileSync } from 'node:child_process';
import { pidAlive } from '../src/process.js';

export const BENCH_PREFIX = 'sbench';

export function sh(cmd: string, args: string[]): string {
  return execFileSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 512 * 1024 * 1024 });
}

export class BenchNet {
  readonly serverNs: string;
  readonly clientNs: string;
  readonly serverDev: string;
  readonly clientDev: string;
  readonly serverIp = '10.77.0.1';
  readonly clientIp = '10.77.0.2';

  /** `prefix`: at most 6 characters, so the devices' names (prefix, pid, s/c) fit Linux's 15. */
  constructor(pid = process.pid, prefix = BENCH_PREFIX) {
    this.serverNs = `${prefix}${pid}s`;
    this.clientNs = `${prefix}${pid}c`;
    this.serverDev = `${prefix}${pid}s`;
    this.clientDev = `${prefix}${pid}c`;
  }

  /** Deletes namespaces of earlier bench runs (named with `prefix`) whose process is gone. */
  static removeStale(prefix = BENCH_PREFIX): string[] {
    const removed: string[] = [];
    for (const line of sh('ip', ['netns', 'list']).split('\n')) {
      const m = new RegExp(`^(${prefix}(\\d+)[sc])\\b`).exec(line);
      if (m === null || pidAlive(Number(m[2]))) continue;
      sh('ip', ['netns', 'delete', m[1]!]);
      removed.push(m[1]!);
    }
    return removed;
  }

  create(): void {
    sh('ip', ['netns', 'add', this.serverNs]);
    sh('ip', ['netns', 'add', this.clientNs]);
    sh('ip', ['link', 'add', this.serverDev, 'netns', this.serverNs, 'type', 'veth', 'peer', 'name', this.clientDev, 'netns', this.clientNs]);
    for (const [ns, dev, ip] of [
      [this.serverNs, this.serverDev, this.serverIp],
      [this.clientNs, this.clientDev, this.clientIp],
    ] as const) {
      sh('ip', ['-n', ns, 'addr', 'add', `${ip}/24`, 'dev', dev]);
      sh('ip', ['-n', ns, 'link', 'set', dev, 'up']);
      sh('ip', ['-n', ns, 'link', 'set', 'lo', 'up']);
    }
  }

  destroy(): void {
    for (const ns of [this.serverNs, this.clientNs]) {
      try {
        sh('ip', ['netns', 'delete', ns]);
      } catch {
        // already gone
      }
    }
  }

  /** The namespace mechanism for N-packet trains: per-namespace sysctl + per-device GSO cap. */
  setTrainCap(packets: number | null): void {
    sh('ip', ['netns', 'exec', this.serverNs, 'sysctl', '-q', '-w', `net.ipv4.tcp_min_tso_segs=${packets ?? 2}`]);
    sh('ip', ['-n', this.serverNs, 'link', 'set', 'dev', this.serverDev, 'gso_max_segs', String(packets ?? 65535)]);
  }

  inServer(cmd: string[]): string[] {
    return ['netns', 'exec', this.serverNs, ...cmd];
  }

  inClient(cmd: string[]): string[] {
    return ['netns', 'exec', this.clientNs, ...cmd];
  }
}
