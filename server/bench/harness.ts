// What every bench run around the veth pair does: removes namespaces of dead runs,
// creates the pair and a work folder with the media files, and removes both at the
// end, on an error, and on SIGINT/SIGTERM (with every process it started).
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { killAll } from '../src/process.js';
import { BENCH_PREFIX, BenchNet, sh } from './netns.js';

export interface BenchContext {
  net: BenchNet;
  work: string;
  mediaDir: string;
  /** The server namespace's congestion control. */
  congestionControl: string;
}

export interface BenchNetOptions {
  workPrefix: string;
  /** Names the namespaces `<prefix><pid>s`/`<prefix><pid>c` (netns.ts; default sbench). */
  netnsPrefix?: string;
  say: (line: string) => void;
  writeMedia: (mediaDir: string) => void;
}

export async function inBenchNet<T>(o: BenchNetOptions, body: (ctx: BenchContext) => Promise<T>): Promise<T> {
  const prefix = o.netnsPrefix ?? BENCH_PREFIX;
  const removed = BenchNet.removeStale(prefix);
  if (removed.length > 0) o.say(`removed namespaces of dead bench runs: ${removed.join(', ')}`);
  const net = new BenchNet(process.pid, prefix);
  const work = mkdtempSync(join(tmpdir(), o.workPrefix));
  const mediaDir = join(work, 'media');
  mkdirSync(mediaDir);
  o.writeMedia(mediaDir);
  const cleanup = (): void => {
    killAll();
    net.destroy();
    rmSync(work, { recursive: true, force: true });
  };
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      cleanup();
      process.exit(130);
    });
  }
  try {
    net.create();
    const congestionControl = sh('ip', net.inServer(['sysctl', '-n', 'net.ipv4.tcp_congestion_control'])).trim();
    return await body({ net, work, mediaDir, congestionControl });
  } finally {
    cleanup();
  }
}
