import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { traceFiles } from '../src/cli/common.js';
import { loadSidecar } from '../src/ladder.js';

export const LADDER_PATH = fileURLToPath(new URL('../fixtures/lab-segments.json', import.meta.url));
export const TRACES_DIR = fileURLToPath(new URL('../traces', import.meta.url));
export const labSidecar = loadSidecar(LADDER_PATH);
export const TOP_KBPS = labSidecar.representations[labSidecar.representations.length - 1]!.bitrateKbps;
export const TOP_RUNG = labSidecar.representations.length - 1;
export const bundledTraces = (): string[] => traceFiles(TRACES_DIR);

const SIM_DIR = fileURLToPath(new URL('..', import.meta.url));

/**
 * Runs one of the simulator's CLIs (`src/cli/NAME.ts`) as a user would, from the sim
 * folder (relative paths resolve against npm's INIT_CWD, set to it): its exit status
 * and output.
 */
export function runCli(script: 'sim' | 'corpus' | 'starts' | 'ablation', args: string[]): { status: number; stdout: string; stderr: string } {
  try {
    const stdout = execFileSync(process.execPath, ['--import', 'tsx', `src/cli/${script}.ts`, ...args], {
      cwd: SIM_DIR,
      env: { ...process.env, INIT_CWD: SIM_DIR },
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    return { status: 0, stdout, stderr: '' };
  } catch (err) {
    const e = err as { status: number; stdout: string; stderr: string };
    return { status: e.status, stdout: e.stdout, stderr: e.stderr };
  }
}
