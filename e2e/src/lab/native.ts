/**
 * Builds `native/labtools.c` with gcc once per source version, into the git-ignored
 * cache. C, not Node + koffi: the delay line and the UDP probe time single packets
 * (a 40 Mbit/s packet every 0.3 ms), which needs a tight ppoll/clock_nanosleep loop,
 * real-time priority and kernel receive timestamps, without a garbage collector or
 * an event loop shared with anything else. The build takes about a second.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { CACHE_DIR, E2E_DIR } from '../paths.js';
import { LabError } from '../lab-error.js';
import { run } from './processes.js';

export const LABTOOLS_SOURCE = join(E2E_DIR, 'native', 'labtools.c');

export function gccUnavailableReason(): string | null {
  const found = (process.env.PATH ?? '').split(':').some((dir) => existsSync(join(dir, 'gcc')));
  return found ? null : 'gcc not found (sudo apt-get install -y gcc libc6-dev)';
}

/** The path of the compiled tools, building them if this source version is not built yet. */
export async function buildLabtools(): Promise<string> {
  const source = readFileSync(LABTOOLS_SOURCE);
  const hash = createHash('sha256').update(source).digest('hex').slice(0, 12);
  const dir = join(CACHE_DIR, 'bin');
  const binary = join(dir, `labtools-${hash}`);
  if (existsSync(binary)) return binary;
  const reason = gccUnavailableReason();
  if (reason) throw new LabError('LAB_NO_GCC', reason);
  mkdirSync(dir, { recursive: true });
  const partial = `${binary}.partial-${process.pid}`;
  await run('gcc', ['-O2', '-Wall', '-Wextra', '-o', partial, LABTOOLS_SOURCE], { timeoutMs: 120_000 });
  renameSync(partial, binary);
  return binary;
}

/**
 * `labtools trace-sim`: the delay line's trace-mode queue on a simulated clock (labtools.c).
 * `packets` are [arrival us of trace time, bytes], in order; returns its output lines
 * ("drop I" per refused packet, "served T" per packet that crossed, in packet order).
 */
export function traceSim(labtools: string, scheduleFile: string, queueBytes: number, packets: Array<[number, number]>, startUs = 0): string[] {
  const input = packets.map(([us, bytes]) => `${us} ${bytes}`).join('\n');
  const args = ['trace-sim', '--trace', scheduleFile, '--queue-bytes', String(queueBytes), '--start-us', String(startUs)];
  return execFileSync(labtools, args, { input, maxBuffer: 1 << 28 }).toString().trim().split('\n');
}
