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
const ROUNDS = 5;
const ROUND_MS = 600;

/** A fixed amount of arithmetic: the reference the session rate is divided by. */
function referenceWork(): number {
  let acc = 0;
  for (let i = 1; i <= 200_000; i++) acc += Math.sqrt(i) * Math.log(i);
  return acc;
}

/** Median over rounds of operations per second. */
function rate(op: () => unknown): number {
  for (let i = 0; i < 20; i++) op();
  const rates: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    let n = 0;
    const start = performance.now();
    let elapsed = 0;
    while (elapsed < ROUND_MS) {
      op();
      n++;
      elapsed = performance.now() - start;
    }
    rates.push((n * 1000) / elapsed);
  }
  return rates.sort((a, b) => a - b)[Math.floor(ROUNDS / 2)]!;
}

const sidecar = loadSidecar(BUNDLED_LADDER);
const traces: Trace[] = [
  constantTrace(40000),
  loadTrace(join(BUNDLED_TRACES, 'step-down.json')),
  loadTrace(join(BUNDLED_TRACES, 'lte-variable.mahimahi')),
];
const arms: SimArm[] = ['sammy', 'control', 'fixed4x'];

const referencePerS = rate(referenceWork);
console.log(`reference: ${referencePerS.toFixed(0)} units/s (200k sqrt*log each)`);
console.log(`${'arm'.padEnd(8)} ${'trace'.padEnd(24)} ${'sessions/s'.padStart(11)} ${'per minute'.padStart(11)} ${'per ref unit'.padStart(13)} ${'chunks'.padStart(7)}`);
const sammyRates: number[] = [];
for (const arm of arms) {
  for (const trace of traces) {
    const factory = armFactory(arm);
    let chunks = 0;
    const perS = rate(() => {
      chunks = simulateSession({ trace, sidecar, arm: factory, durationS: SESSION_S }).chunks.length;
    });
    if (arm === 'sammy') sammyRates.push(perS);
    console.log(
      `${arm.padEnd(8)} ${trace.name.padEnd(24)} ${perS.toFixed(0).padStart(11)} ${(perS * 60).toFixed(0).padStart(11)} ${(perS / referencePerS).toFixed(2).padStart(13)} ${String(chunks).padStart(7)}`,
    );
  }
}
const slowest = Math.min(...sammyRates);
console.log(`\nsammy, slowest trace: ${slowest.toFixed(0)} simulated 10-minute sessions/s = ${(slowest * 60).toFixed(0)}/min on one core (aim: >= 10,000/min)`);
