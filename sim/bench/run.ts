/**
 * npm run bench -w @sammy/sim: simulated 10-minute sessions per second on one core
 * (this process's single thread), per arm and trace kind, beside a fixed CPU
 * reference measured in the same run, so runs on busy or different machines compare
 * by the ratio.
 */
import { join } from 'node:path';
import { armFactory } from '../src/arms/index.js';
import type { SimArm } from '../src/arms/types.js';
import { BUNDLED_LADDER, BUNDLED_TRACES } from '../src/cli/common.js';
import { loadSidecar } from '../src/ladder.js';
import { simulateSession } from '../src/session.js';
import { constantTrace, loadTrace, type Trace } from '../src/trace.js';

const SESSION_S = 600;
const ROUNDS = 7;
const ROUND_MS = 400;

/** A fixed amount of arithmetic: the reference the session rate is divided by. */
function referenceWork(): number {
  let acc = 0;
  for (let i = 1; i <= 200_000; i++) acc += Math.sqrt(i) * Math.log(i);
  return acc;
}

/** Operations per second over one round. */
function roundRate(op: () => unknown): number {
  let n = 0;
  const start = performance.now();
  let elapsed = 0;
  while (elapsed < ROUND_MS) {
    op();
    n++;
    elapsed = performance.now() - start;
  }
  return (n * 1000) / elapsed;
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const sidecar = loadSidecar(BUNDLED_LADDER);
const traces: Trace[] = [
  constantTrace(40000),
  loadTrace(join(BUNDLED_TRACES, 'step-down.json')),
  loadTrace(join(BUNDLED_TRACES, 'lte-variable.mahimahi')),
];
const arms: SimArm[] = ['sammy', 'control', 'fixed4x'];
const cases = arms.flatMap((arm) =>
  traces.map((trace) => {
    const factory = armFactory(arm);
    return { arm, trace: trace.name, op: () => simulateSession({ trace, sidecar, arm: factory, durationS: SESSION_S }), rates: [] as number[], ratios: [] as number[] };
  }),
);

// Rounds interleave every case with the reference, so a neighbour's load shifts them alike.
for (const c of cases) for (let i = 0; i < 20; i++) c.op();
for (let round = 0; round < ROUNDS; round++) {
  for (const c of cases) {
    const reference = roundRate(referenceWork);
    const perS = roundRate(c.op);
    c.rates.push(perS);
    c.ratios.push(perS / reference);
  }
}

console.log(`10-minute sessions (${SESSION_S / 2} segments), one thread; median of ${ROUNDS} interleaved rounds; reference = 200k sqrt*log`);
console.log(`${'arm'.padEnd(8)} ${'trace'.padEnd(24)} ${'sessions/s'.padStart(11)} ${'per minute'.padStart(11)} ${'per ref unit'.padStart(13)}`);
for (const c of cases) {
  const perS = median(c.rates);
  console.log(`${c.arm.padEnd(8)} ${c.trace.padEnd(24)} ${perS.toFixed(0).padStart(11)} ${(perS * 60).toFixed(0).padStart(11)} ${median(c.ratios).toFixed(2).padStart(13)}`);
}
const sammy = cases.filter((c) => c.arm === 'sammy');
const slowest = Math.min(...sammy.map((c) => median(c.rates)));
console.log(`\nsammy, slowest trace: ${slowest.toFixed(0)} simulated 10-minute sessions/s = ${(slowest * 60).toFixed(0)}/min on one core (aim: >= 10,000/min)`);
