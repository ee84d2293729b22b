import { fileURLToPath } from 'node:url';
import { traceFiles } from '../src/cli/common.js';
import { loadSidecar } from '../src/ladder.js';

export const LADDER_PATH = fileURLToPath(new URL('../fixtures/lab-segments.json', import.meta.url));
export const TRACES_DIR = fileURLToPath(new URL('../traces', import.meta.url));
export const labSidecar = loadSidecar(LADDER_PATH);
export const TOP_KBPS = labSidecar.representations[labSidecar.representations.length - 1]!.bitrateKbps;
export const TOP_RUNG = labSidecar.representations.length - 1;
export const bundledTraces = (): string[] => traceFiles(TRACES_DIR);
