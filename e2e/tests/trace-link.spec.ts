/**
 * A trace link in real namespaces, short (a 10 s calibration, no session): the delay
 * line's trace mode delivers what a stepped trace says, within the 10% bar, and the
 * run leaves no namespace behind.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from '@playwright/test';
import { listNamespaces } from '../src/lab/netns.js';
import { labUnavailableReason, runLab, type LabResult } from '../src/lab/runner.js';
import { parseScenario } from '../src/lab/scenario.js';

const reason = labUnavailableReason();
let result: LabResult;

test.describe.serial('lab: a trace link follows its trace', () => {
  test.beforeAll(async ({}, info) => {
    if (reason) return;
    info.setTimeout(3 * 60_000);
    const dir = mkdtempSync(join(tmpdir(), 'sammy-trace-link-'));
    // 8 Mbit/s, then 2, then 12 (holding): a shape a per-second correlation can see.
    writeFileSync(join(dir, 'steps.json'), JSON.stringify([{ durationS: 4, bandwidthKbps: 8000 }, { durationS: 3, bandwidthKbps: 2000 }, { durationS: 1, bandwidthKbps: 12_000 }]));
    const scenario = parseScenario({
      name: 'trace-link-ci', link: { trace: 'steps.json', rttMs: 20, queue: { bdp: 4 }, calibrationS: 10 },
      media: { durationS: 100 }, neighbours: [{ kind: 'none' }], arms: ['control'],
    }, dir);
    result = await runLab({ scenario, outDir: join(dir, 'out'), log: (line) => console.log(line), calibrateOnly: true });
  });

  test.beforeEach(() => {
    if (reason) console.log(`SKIP: ${reason}`);
    test.skip(reason !== null, reason ?? '');
  });

  test('the bytes served per second follow the trace within 10% (correlation and total)', () => {
    const f = result.traceFidelity!;
    console.log(`trace fidelity: r ${f.correlation}, total ${f.totalRatio}, receiver ${f.goodputTotalRatio}, bins ${JSON.stringify(f.bins)}`);
    expect(f.bins).toHaveLength(9);
    expect(f.correlation!).toBeGreaterThanOrEqual(0.9);
    expect(Math.abs(f.totalRatio! - 1)).toBeLessThanOrEqual(0.1);
    expect(f.withinTolerance).toBe(true);
    // The receiver got the payload of what was served: a little less, never more.
    expect(f.goodputTotalRatio!).toBeLessThanOrEqual(f.totalRatio!);
    expect(f.goodputTotalRatio!).toBeGreaterThan(0.85);
  });

  test('the delay line served the downlink from its own queue, restarted once, and the run left no namespace', async () => {
    expect(result.trials).toHaveLength(0);
    const q = result.delayLine!.down.trace!;
    expect(q.restarts).toBe(1);
    expect(q.queueLimitBytes).toBe((result.config.link as { queueBytes: number }).queueBytes);
    expect(q.maxQueuedBytes).toBeLessThanOrEqual(q.queueLimitBytes);
    expect(q.servedBytes).toBeGreaterThan(0);
    expect((await listNamespaces()).filter((n) => n.startsWith(`slab-${process.pid}-`))).toEqual([]);
  });
});
