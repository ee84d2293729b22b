/**
 * Issue 11's bar on a fast subset of the corpus (`npm run sim:corpus` runs all of it):
 * on each trace Sammy switches at most 3 times more than control, rebuffers at most 1 s
 * longer and keeps mean SSIM within 0.003 of control's (but for a known miss, below);
 * its playing-phase chunk throughput on the LTE traces is below what it was before the
 * stable rung choice (results/corpus/before); and on a constant 40 Mbit/s link with
 * a 30 s target the lowest rtp is within 5% of 2.9x the top bitrate.
 */
import { readFileSync } from 'node:fs';
import { compareOnCorpus, type CorpusResult } from '../src/corpus/compare.js';
import { corpusTraces } from '../src/corpus/traces.js';
import { armFactory } from '../src/arms/index.js';
import { simulateSession } from '../src/session.js';
import { capacityKbits, constantTrace } from '../src/trace.js';
import { bundledTraces, labSidecar, TOP_KBPS } from './helpers.js';

const SUBSET = [
  'TMobile-UMTS-driving.down',
  'ATT-LTE-driving-2016.down',
  'lte-variable.mahimahi',
  'slow-800kbps.json',
  'dip-and-recover.json',
  'constant-270',
  'constant-825',
  'constant-945',
  'constant-1155',
  'steps-40000-800',
  'steps-600-40000',
  'fades-1200-300-every-40s',
  'outage-10s-at-120s-1200',
  'lte-walk-1500-seed1000',
  'lte-walk-6000-seed1006',
  // The link lost early, while the buffer fills: both missed on rebuffering before the reserve.
  'lte-walk-1500-seed1100-outage-20s-at-15s',
  'lte-walk-2000-seed1101-outage-30s-at-20s',
];

/** The corpus run before the stable rung choice (and before the control model's AbandonRequestsRule). */
const before = JSON.parse(readFileSync(new URL('../results/corpus/before/corpus.json', import.meta.url), 'utf8')) as CorpusResult;

describe('Sammy against control on a corpus subset (600 s sessions, lab ladder)', () => {
  const traces = corpusTraces({ files: bundledTraces(), ladderKbps: labSidecar.representations.map((r) => r.bitrateKbps) }).filter((t) => SUBSET.includes(t.name));
  const result = compareOnCorpus({ traces, sidecar: labSidecar, durationS: 600 });

  test('the subset is all there', () => {
    expect(result.traces.map((t) => t.trace).sort()).toEqual([...SUBSET].sort());
  });

  test.each(SUBSET)('%s: switches <= control + 3, rebuffer <= control + 1 s, SSIM >= control - 0.003', (name) => {
    const t = result.traces.find((x) => x.trace === name)!;
    const { sammy, control } = t.arms;
    expect(sammy.switchesPer10Min).toBeLessThanOrEqual(control.switchesPer10Min + 3);
    expect(sammy.avgQuality!).toBeGreaterThanOrEqual(control.avgQuality! - 0.003);
    expect(sammy.rebufferS).toBeLessThanOrEqual(control.rebufferS + 1);
    expect(t.misses).toEqual([]);
  });

  // Sammy's own playing-phase chunk throughput, not its change against control: the
  // control model has changed since (AbandonRequestsRule), Sammy's figure has not moved
  // with it. Stability must not be bought back with burstiness.
  test.each(['ATT-LTE-driving-2016.down', 'lte-variable.mahimahi', 'lte-walk-6000-seed1006'])(
    '%s: the chunk throughput is no higher than before the stable rung choice',
    (name) => {
      const now = result.traces.find((x) => x.trace === name)!.arms.sammy.chunkThroughputKbps!;
      const then = before.traces.find((x) => x.trace === name)!.arms.sammy.chunkThroughputKbps!;
      expect(now).toBeLessThan(then);
    },
  );
});

test('constant 40 Mbit/s, 30 s target: the lowest playing-phase rtp is within 5% of 2.9x the top bitrate', () => {
  const q = simulateSession({ trace: constantTrace(40000, 40), sidecar: labSidecar, arm: armFactory('sammy', { maxBufferS: 30 }), durationS: 600 });
  const target = Math.round((2.9 * TOP_KBPS) / 100) * 100; // 3000
  const lowest = q.sim.playingRtpKbps!.min;
  expect(lowest).toBe(3100); // 3045 rounded up to the CTA-5004 step
  expect(Math.abs(lowest / target - 1)).toBeLessThanOrEqual(0.05);
});

describe('the corpus', () => {
  const ladderKbps = labSidecar.representations.map((r) => r.bitrateKbps);

  test('at least 40 traces with unique names: the files plus every generated family', () => {
    const traces = corpusTraces({ files: bundledTraces(), ladderKbps });
    const names = traces.map((t) => t.name);
    expect(names.length).toBeGreaterThanOrEqual(40);
    expect(new Set(names).size).toBe(names.length);
    // 10% either side of each rung of the lab ladder (150, 300, 500, 750, 1050 kbps).
    expect(names.filter((n) => n.startsWith('constant-'))).toEqual([135, 165, 270, 330, 450, 550, 675, 825, 945, 1155].map((k) => `constant-${k}`));
    expect(names.filter((n) => n.startsWith('lte-walk-') && !n.includes('-outage-'))).toHaveLength(8);
    expect(names.filter((n) => n.startsWith('lte-walk-') && n.includes('-outage-'))).toHaveLength(4);
    expect(corpusTraces({ files: bundledTraces(), ladderKbps, generated: false })).toHaveLength(bundledTraces().length);
  });

  test('generated traces are the same on every run (seeded), with the corpus latency', () => {
    const [a, b] = [corpusTraces({ files: [], ladderKbps }), corpusTraces({ files: [], ladderKbps })];
    const walk = (list: typeof a) => list.find((t) => t.name === 'lte-walk-4000-seed1004')!;
    expect(Array.from(walk(a).bandwidthKbps)).toEqual(Array.from(walk(b).bandwidthKbps));
    expect(a.every((t) => t.latencyS.every((s) => s === 0.04))).toBe(true);
    const outage = a.find((t) => t.name === 'outage-10s-at-120s-3000')!;
    expect(Array.from(outage.bandwidthKbps)).toEqual([3000, 0, 3000]);
    expect(Array.from(outage.stepStartS)).toEqual([0, 120, 130]);
  });

  test('a walk with an early outage carries nothing in its outage and is the plain walk elsewhere', () => {
    const list = corpusTraces({ files: [], ladderKbps });
    const walk = list.find((t) => t.name === 'lte-walk-2000-seed1101-outage-30s-at-20s')!;
    expect(capacityKbits(walk, 20, 50)).toBeLessThan(1e-6);
    expect(capacityKbits(walk, 0, 19.9)).toBeGreaterThan(0);
    expect(capacityKbits(walk, 50.1, 600)).toBeGreaterThan(0);
    // Not periodic within a session: a second outage 120 s later (the plain walks' period) would show here.
    expect(capacityKbits(walk, 140, 170)).toBeGreaterThan(0);
  });
});
