/**
 * The shaped-link lab, short (scenario ci-short: the thesis-2.6 link, 20 s sessions,
 * one trial): asserts directions and bounds measured in this run (thesis section 2.6).
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from '@playwright/test';
import type { LabResult } from '../src/analysis/result.js';
import { labUnavailableReason, playerUnavailableReason, runLab } from '../src/lab/runner.js';
import { loadScenario } from '../src/scenario/scenario.js';

const reason = labUnavailableReason() ?? playerUnavailableReason();
let result: LabResult;

function mean(arm: string, metric: string, experiment = 'none'): number {
  const v = result.summaryByNeighbour[experiment]?.[arm]?.[metric]?.mean;
  expect(typeof v, `${metric} of ${arm} (${experiment})`).toBe('number');
  return v as number;
}

test.describe.serial('lab: thesis-2.6 link, short sessions', () => {
  test.beforeAll(async ({}, info) => {
    if (reason) return;
    info.setTimeout(14 * 60_000);
    const outDir = mkdtempSync(join(tmpdir(), 'sammy-lab-'));
    console.log(`lab output: ${outDir}`);
    result = await runLab({ scenario: loadScenario('ci-short'), outDir, log: (line) => console.log(line) });
  });

  test.beforeEach(() => {
    if (reason) console.log(`SKIP: ${reason}`);
    test.skip(reason !== null, reason ?? '');
  });

  test('every session played and was measured', () => {
    expect(result.complete).toBe(true);
    expect(result.trials.filter((t) => t.error !== null).map((t) => `${t.neighbour}/${t.arm}: ${t.error}`)).toEqual([]);
    expect(result.trials).toHaveLength(6);
  });

  test("Sammy's playing-phase chunk throughput is at most 0.6x control's", () => {
    expect(mean('sammy', 'chunkThroughputKbps')).toBeLessThanOrEqual(0.6 * mean('control', 'chunkThroughputKbps'));
  });

  test("Sammy's video RTT is below control's", () => {
    expect(mean('sammy', 'videoRttMs')).toBeLessThan(mean('control', 'videoRttMs'));
  });

  test('the UDP neighbour sees a lower one-way delay beside Sammy than beside control', () => {
    expect(mean('sammy', 'udpOwdMs', 'udp')).toBeLessThan(mean('control', 'udpOwdMs', 'udp'));
  });

  test('Sammy never rebuffers', () => {
    const sammy = result.trials.filter((t) => t.arm === 'sammy');
    expect(sammy.length).toBeGreaterThan(0);
    for (const t of sammy) expect(t.metrics.rebufferCount, `${t.neighbour} trial ${t.trial}`).toBe(0);
  });

  test("Sammy's time-average bitrate is at least 0.95x control's", () => {
    expect(mean('sammy', 'avgBitrateKbps')).toBeGreaterThanOrEqual(0.95 * mean('control', 'avgBitrateKbps'));
  });

  test("every session is measured in its fill and after; Sammy's pace there is within its rule (2.9x to 11x the top bitrate) and below its fill's", () => {
    for (const t of result.trials) {
      expect(t.windows?.fill, `${t.neighbour}/${t.arm} fill`).toBeTruthy();
      expect(t.windows?.steady, `${t.neighbour}/${t.arm}: the buffer reached 30 s`).toBeTruthy();
    }
    for (const t of result.trials.filter((x) => x.arm === 'sammy')) {
      const steady = t.windows!.steady!.metrics.paceMultiple!;
      expect(steady).toBeGreaterThanOrEqual(2.9);
      expect(steady).toBeLessThanOrEqual(11);
      expect(steady).toBeLessThan(t.windows!.fill!.metrics.paceMultiple!);
    }
    expect(result.summaryByWindow?.steady?.udp?.sammy?.udpOwdMs?.n).toBe(1);
  });

  test('fixed4x also reduces chunk throughput', () => {
    expect(mean('fixed4x', 'chunkThroughputKbps')).toBeLessThan(mean('control', 'chunkThroughputKbps'));
  });
});
