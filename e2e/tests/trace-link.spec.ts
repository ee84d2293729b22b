/**
 * A trace link in real namespaces, short (a 10 s calibration, no session): the delay
 * line's trace mode delivers what a stepped trace says, within the 10% bar, and the
 * run leaves no namespace behind; a restart at a trace time goes on from that time.
 */
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from '@playwright/test';
import { listNamespaces } from '../src/lab/netns.js';
import { labUnavailableReason, runLab } from '../src/lab/runner.js';
import type { CodeVersion } from '../src/analysis/records.js';
import type { LabResult } from '../src/analysis/result.js';
import { codeVersion } from '../src/lab/code-version.js';
import { buildLabtools } from '../src/lab/native.js';
import { REPO_DIR } from '../src/paths.js';
import { parseDelaySamples } from '../src/lab/queue-monitor.js';
import { parseScenario } from '../src/scenario/scenario.js';
import { createTopology, destroyTopology } from '../src/lab/topology.js';
import { restartTrace } from '../src/lab/trace-link.js';
import { opportunitySchedule, readTrace, scheduleText } from '../src/scenario/trace.js';
import { sleep } from '../src/lab/processes.js';

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
    // The result names the code it ran (the checkout's commit).
    expect((result.config['code'] as CodeVersion).commit).toBe((await codeVersion(REPO_DIR)).commit);
    expect(q.maxQueuedBytes).toBeLessThanOrEqual(q.queueLimitBytes);
    expect(q.servedBytes).toBeGreaterThan(0);
    expect((await listNamespaces()).filter((n) => n.startsWith(`slab-${process.pid}-`))).toEqual([]);
  });
});

test('lab: the delay line restarts its trace at the trace time it is given', async ({}, info) => {
  if (reason) console.log(`SKIP: ${reason}`);
  test.skip(reason !== null, reason ?? '');
  info.setTimeout(60_000);
  const dir = mkdtempSync(join(tmpdir(), 'sammy-trace-start-'));
  const scheduleFile = join(dir, 'schedule.txt');
  writeFileSync(join(dir, 'flat.json'), JSON.stringify([{ durationS: 1, bandwidthKbps: 8000 }]));
  writeFileSync(scheduleFile, scheduleText(opportunitySchedule(readTrace(join(dir, 'flat.json'))), 'flat'));
  const topo = await createTopology({ rateMbps: null, trace: { scheduleFile }, rttMs: 20, queueBytes: 40_000, shapeUpstream: false, burstBytes: 4096, serverCongestionControl: 'reno' }, await buildLabtools());
  try {
    const line = topo.traceLine!;
    const before = line.process.stdout().length;
    const restartMs = await restartTrace(line, 5.5);
    await sleep(350);
    const after = line.process.stdout().slice(before);
    const samples = parseDelaySamples(after.slice(after.indexOf(`restart ${restartMs} 5500000`)));
    console.log(`after a restart at 5.5 s: ${samples.slice(0, 4).map((q) => q.traceUs).join(', ')} us of trace time`);
    expect(samples.length).toBeGreaterThanOrEqual(2);
    // Sampled every 100 ms of trace time from the restart on: the first at the restart itself.
    expect(samples[0]!.traceUs).toBeGreaterThanOrEqual(5_500_000);
    expect(samples[0]!.traceUs).toBeLessThan(5_600_000);
    expect(samples[1]!.traceUs - samples[0]!.traceUs).toBeGreaterThan(50_000);
    // A start file the line cannot read refuses the restart and says why.
    writeFileSync(line.startFile, 'soon\n');
    const refused = line.process.stdout().length;
    line.process.child.kill('SIGUSR1');
    await sleep(300);
    expect(line.process.stdout().slice(refused)).toMatch(/restart-refused the start file must hold a whole number of microseconds/);
  } finally {
    const startFile = topo.traceLine?.startFile;
    const stats = await destroyTopology(topo);
    expect(stats?.down.trace?.restarts).toBe(1);
    if (startFile) expect(existsSync(startFile)).toBe(false);
  }
});
