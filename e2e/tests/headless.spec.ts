/**
 * The headless player and the A/B design on the lab link, short (scenario ci-headless:
 * 4 viewers at once on a 5 Mbit/s link, shares 0, 0.5 and 1, one trial): every session
 * played with its own connections, the server saw each arm's CMCD rtp, and the
 * estimates are in result.json. Needs root (network namespaces); skips otherwise.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from '@playwright/test';
import { DESIGN_METRICS } from '../src/designs/types.js';
import type { LabResult } from '../src/analysis/result.js';
import { labUnavailableReason, runLab } from '../src/lab/runner.js';
import { loadScenario } from '../src/scenario/scenario.js';

const reason = labUnavailableReason();
let result: LabResult;

test.describe.serial('lab: headless players, A/B design', () => {
  test.beforeAll(async ({}, info) => {
    if (reason) return;
    info.setTimeout(5 * 60_000);
    const outDir = mkdtempSync(join(tmpdir(), 'sammy-headless-'));
    console.log(`lab output: ${outDir}`);
    result = await runLab({ scenario: loadScenario('ci-headless'), outDir, log: (line) => console.log(line) });
  });

  test.beforeEach(() => {
    if (reason) console.log(`SKIP: ${reason}`);
    test.skip(reason !== null, reason ?? '');
  });

  test('every run played all four viewers, overlapping on the link', () => {
    expect(result.complete).toBe(true);
    const runs = result.designRuns ?? [];
    expect(runs.map((r) => r.share).sort()).toEqual([0, 0.5, 1]);
    for (const r of runs) {
      expect(r.sessions.map((s) => `${s.id}: ${s.error}`).filter((e) => !e.endsWith('null'))).toEqual([]);
      expect(r.sessions).toHaveLength(4);
      // The last viewer starts before the first one ends: all four share the bottleneck at once.
      const ends = r.sessions.map((s) => s.originS! + s.playbackStartS! + s.playS);
      expect(Math.max(...r.sessions.map((s) => s.originS!))).toBeLessThan(Math.min(...ends));
      for (const s of r.sessions) {
        expect(s.metrics.playDelayS).toBeGreaterThan(0);
        // The first segment and at least one more while sharing: 8 s on a saturated 5 Mbit/s
        // link with four viewers may rebuffer, so two is all a loaded machine guarantees.
        expect(s.qoe!.chunks.length).toBeGreaterThanOrEqual(2);
      }
    }
  });

  test("the server's telemetry is split by each viewer's connections, and carries each arm's rtp", () => {
    for (const r of result.designRuns!) {
      for (const s of r.sessions) {
        const chunks = s.telemetry.filter((row) => row[1].includes('/chunk-'));
        expect(chunks.length, s.id).toBeGreaterThanOrEqual(s.qoe!.chunks.length - 1);
        expect(s.metrics.videoRttMs, s.id).toBeGreaterThan(0);
        const rtps = chunks.map((row) => row[8]);
        if (s.arm === 'control') expect(rtps.every((v) => v === null), s.id).toBe(true);
        // Sammy: unpaced before its first frame, paced (the core's rtp, which the server applied) after it.
        if (s.arm === 'sammy') {
          expect(rtps.some((v) => v !== null && v > 0), s.id).toBe(true);
          for (const c of s.qoe!.chunks.filter((x) => x.phase === 'playing')) expect(c.appliedRateKbps, `${s.id} chunk ${c.index}`).toBe(c.rtpKbps);
        }
      }
    }
  });

  test('result.json holds the TTE and the A/B estimate for every metric', () => {
    const x = result.experiment!;
    expect(x.design).toBe('ab');
    expect(x.sessionsRun).toBe(12);
    for (const m of DESIGN_METRICS) {
      expect(x.metrics[m]!.ab.map((a) => a.share)).toEqual([0.5]);
      expect(x.metrics[m]!.ab[0]!.n).toEqual({ treatment: 2, control: 2 });
    }
    expect(typeof x.metrics.chunkThroughputKbps!.tte!.pct).toBe('number');
    expect(typeof x.metrics.playDelayS!.ab[0]!.pct).toBe('number');
  });
});
