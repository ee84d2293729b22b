/**
 * Network namespaces named `slab-<owner pid>-<n>-<role>`. Other engineers run their
 * own namespaces on this kernel, so the lab only ever removes names with its own
 * prefix, and of those only the ones whose owning process is gone.
 */
import { LabError } from '../lab-error.js';
import { pidAlive, run } from './processes.js';

export const NETNS_PREFIX = 'slab';
const NAME_PATTERN = new RegExp(`^${NETNS_PREFIX}-(\\d+)-`);

let counter = 0;

/** A fresh name stem for this process: `slab-<pid>-<n>`. */
export function newStem(pid = process.pid): string {
  counter += 1;
  return `${NETNS_PREFIX}-${pid}-${counter}`;
}

/** The pid that owns a lab namespace name, or null if the name is not the lab's. */
export function ownerPid(name: string): number | null {
  const m = NAME_PATTERN.exec(name);
  return m ? Number(m[1]) : null;
}


export async function listNamespaces(): Promise<string[]> {
  const out = await run('ip', ['netns', 'list']);
  return out
    .split('\n')
    .map((line) => line.split(' ')[0]!.trim())
    .filter((name) => name.length > 0);
}

export async function createNamespace(name: string): Promise<void> {
  await run('ip', ['netns', 'add', name]);
}

/** Kills whatever still runs inside the namespace, then deletes it (devices and qdiscs go with it). */
export async function deleteNamespace(name: string): Promise<void> {
  const pids = (await run('ip', ['netns', 'pids', name], { allowFail: true })).split('\n').filter((p) => /^\d+$/.test(p.trim()));
  for (const pid of pids) {
    try {
      process.kill(Number(pid), 'SIGKILL');
    } catch {
      // already gone
    }
  }
  await run('ip', ['netns', 'del', name], { allowFail: true });
}

/** Removes lab namespaces left by runs that died (owner pid dead). Returns what it removed. */
export async function sweepStaleNamespaces(): Promise<string[]> {
  const stale = (await listNamespaces()).filter((name) => {
    const pid = ownerPid(name);
    return pid !== null && !pidAlive(pid);
  });
  for (const name of stale) await deleteNamespace(name);
  return stale;
}

/** Why the lab cannot build namespaces here, or null when it can. */
export function rootUnavailableReason(): string | null {
  if (typeof process.getuid === 'function' && process.getuid() !== 0) return 'the lab needs root for network namespaces (run as root)';
  return null;
}

export function netnsExec(ns: string, cmd: string, args: string[]): [string, string[]] {
  if (!/^[\w.-]+$/.test(ns)) throw new LabError('LAB_BAD_NETNS', `bad namespace name ${ns}`);
  return ['ip', ['netns', 'exec', ns, cmd, ...args]];
}
