/**
 * The UDP neighbour replayed alone through the delay line's queue (neighbour-alone.ts),
 * with the real `labtools trace-sim`: where in the trace each datagram lands, the
 * datagrams the session lost still queued in the replay, and the means over the
 * datagrams that crossed in both.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gccUnavailableReason } from '../../src/lab/native.js';
import type { AloneDelays } from '../../src/analysis/delay-by-capacity.js';
import { renderReport, reportModel } from '../../src/analysis/report.js';
import { sectionOf } from '../../src/analysis/report-markdown.js';
import { neighbourAloneDelays, udpSendGrid } from '../../src/lab/neighbour-alone.js';
import type { UdpRaw } from '../../src/scenario/neighbour-kinds.js';
import type { LabResult, TrialRecord } from '../../src/analysis/result.js';

const reason = gccUnavailableReason();
const dir = mkdtempSync(join(tmpdir(), 'sammy-alone-test-'));
// One 1500 B opportunity per ms (12 Mbit/s) from 0 to 1499 ms, none from 1500 to 1599 ms, then again from 1600 ms.
const STEPS = JSON.stringify([{ durationS: 1.5, bandwidthKbps: 12_000 }, { durationS: 0.1, bandwidthKbps: 0 }, { durationS: 1.4, bandwidthKbps: 12_000 }]);
const tracePath = join(dir, 'gap.json');
writeFileSync(tracePath, STEPS);
const sha256 = createHash('sha256').update(STEPS).digest('hex');
const LINE_DELAY_MS = 20;

/** 1200 B at 480 kbit/s: one datagram every 20 ms, at 0, 20, ... 1000 ms of the window, each measured at `owdMs`. */
function udp(owdMs: number, lostSentMs: number[] = []): UdpRaw {
  const packets: Array<[number, number]> = [];
  for (let ms = 0; ms <= 1000; ms += 20) if (!lostSentMs.includes(ms)) packets.push([ms, owdMs]);
  return { kind: 'udp', rateKbps: 480, packetBytes: 1200, sent: 51, packets };
}

function trial(arm: string, trialNo: number, raw: UdpRaw | null, over: Partial<TrialRecord> = {}): TrialRecord {
  // The trace restarted at its 0.5 s when the play request went out (1 s after the origin), the first frame
  // came at 1.5 s, and the window starts at playback start: a datagram sent t ms into the window meets the
  // trace at 1000 + t ms, so those sent at 500-580 ms fall in the gap.
  return {
    arm, trial: trialNo, neighbour: 'udp', experiment: 'udp', error: null, playbackStartS: 1.5, traceStartS: 1, traceFromS: 0.5,
    window: { startS: 0, endS: 30 }, neighbourRaw: raw, metrics: {}, session: null, telemetry: [], queue: [], ...over,
  } as unknown as TrialRecord;
}

function result(trials: TrialRecord[], queueLimitBytes = 100_000, trace: object = { file: 'gap.json', path: tracePath, sha256 }): LabResult {
  return {
    config: { scenario: { link: { trace, rttMs: 40, traceStart: 'spread', queue: { bytes: queueLimitBytes } } } },
    trials,
    delayLine: {
      down: { delayMs: LINE_DELAY_MS, latenessUs: {}, trace: { queueLimitBytes } },
      up: { delayMs: LINE_DELAY_MS, latenessUs: {} },
    },
  } as unknown as LabResult;
}

test("the send grid: every 20 ms from the first received datagram to the last, the lost ones between included", () => {
  expect(udpSendGrid(udp(50, [0, 500, 1000]))).toEqual({ firstMs: 20, stepMs: 20, count: 49 });
  expect(udpSendGrid({ ...udp(50), packets: [] })).toBeNull();
  // 5 Mbit/s for 300 s: 156,250 datagrams, more than a spread call takes.
  const many: Array<[number, number]> = Array.from({ length: 156_250 }, (_, k) => [k * 1.92, 30]);
  expect(udpSendGrid({ kind: 'udp', rateKbps: 5000, packetBytes: 1200, sent: many.length, packets: many })).toEqual({ firstMs: 0, stepMs: 1.92, count: 156_250 });
});

(reason ? describe.skip : describe)(reason ? `neighbour alone (skipped: ${reason})` : 'neighbour alone', () => {
  // The datagrams sent into the gap (trace 1500, 1520, 1540, 1560, 1580 ms) wait for 1600 ms and leave in
  // order, 1228 B each (UDP and IP headers added) at 1500 B per ms: at 1600, 1601, 1602, 1603 and 1604 ms;
  // the one sent at 1600 ms queues behind them and leaves at 1604 ms. Every other one leaves when it comes.
  const GAP_WAITS_MS = [100, 81, 62, 43, 24, 4];

  test('each datagram waits what the queue makes it wait; the session lost one the replay still queues; the means are over the datagrams in both', async () => {
    const out = await neighbourAloneDelays(result([trial('control', 1, udp(50)), trial('sammy', 1, udp(50, [540]))]));
    expect(out).not.toBeNull();
    const [control, sammy] = (out as { delays: AloneDelays }).delays;
    const sum = GAP_WAITS_MS.reduce((a, b) => a + b, 0);
    expect(control).toEqual({ measuredOwdMs: 50, owdMs: expect.closeTo(LINE_DELAY_MS + sum / 51, 9), lossPct: 0, replayed: 51, common: 51 });
    // The datagram at 540 ms (trace 1540 ms) still delays the ones behind it, but is left out of both means.
    expect(sammy).toEqual({ measuredOwdMs: 50, owdMs: expect.closeTo(LINE_DELAY_MS + (sum - 62) / 50, 9), lossPct: 0, replayed: 51, common: 50 });
  });

  test('a queue that holds two datagrams refuses the next three in the gap and the one at its end; those leave both means', async () => {
    const out = (await neighbourAloneDelays(result([trial('control', 1, udp(50))], 3000))) as { delays: AloneDelays };
    const [control] = out.delays;
    // Kept: 1500 ms (leaves at 1600) and 1520 ms (1601); refused: 1540, 1560, 1580 and 1600 ms.
    expect(control!.lossPct).toBeCloseTo((100 * 4) / 51, 9);
    expect(control!.common).toBe(47);
    expect(control!.owdMs).toBeCloseTo(LINE_DELAY_MS + (100 + 81) / 47, 9);
  });

  test('nothing to replay: a constant link or no UDP neighbour (null), a changed trace file (said), a session without its trace restart (null)', async () => {
    expect(await neighbourAloneDelays({ ...result([trial('control', 1, udp(50))]), config: { scenario: { link: { trace: null } } } } as unknown as LabResult)).toBeNull();
    expect(await neighbourAloneDelays(result([trial('control', 1, null)]))).toBeNull();
    expect(await neighbourAloneDelays(result([trial('control', 1, udp(50))], 100_000, { file: 'gap.json', path: tracePath, sha256: '0'.repeat(64) }))).toEqual({ unavailable: 'its trace file was not found unchanged' });
    const out = (await neighbourAloneDelays(result([trial('control', 1, udp(50), { traceStartS: null }), trial('control', 2, udp(50), { error: 'boom' })]))) as { delays: AloneDelays };
    expect(out.delays).toEqual([null, null]);
  });

  test('the report: measured, alone and added per arm, and added paired by trial', async () => {
    const trials = [trial('control', 1, udp(50)), trial('sammy', 1, udp(40)), trial('control', 2, udp(60)), trial('sammy', 2, udp(40))];
    const r = result(trials);
    Object.assign(r.config.scenario, { name: 'x', description: '', arms: ['control', 'sammy'], neighbours: [{ kind: 'udp' }], trials: 2, session: { playS: 30, startupTimeoutS: 5 }, media: {}, player: { config: {} }, server: {}, link: { ...r.config.scenario.link, trace: { file: 'gap.json', path: tracePath, sha256, meanRateMbps: 12, lengthS: 2.6 }, rttMs: 40 } });
    Object.assign(r, { summary: {}, summaryByNeighbour: {}, warmups: [], startedAt: 'x', finishedAt: 'y', complete: true });
    r.config.link = { queueBytes: 100_000, bdpBytes: 60_000, measuredIdleRtt: null };
    r.config.media = { rungsKbps: [] };
    const alone = await neighbourAloneDelays(r);
    const md = renderReport(r, { neighbourAlone: alone }).markdown;
    const { model } = reportModel(r, { neighbourAlone: alone });
    const a = LINE_DELAY_MS + 314 / 51;
    expect(sectionOf(model, 'alone')!.blocks[0]).toEqual({ lines: [{ prose: 'neighbourAlone', slots: { lineDelayMs: 20 } }] });
    // No session ran without a neighbour, so the summary's video metrics are every session's, and it says so.
    expect(sectionOf(model, 'summary')!.blocks[0]).toMatchObject({ lines: [{ prose: 'videoFromAll' }, {}] });
    // Added: control 50 - a and 60 - a; sammy 40 - a twice; paired: -10 and -20.
    expect(md).toContain('| added by the video (ms) |');
    expect(md).toContain(`| the neighbour alone, replayed (ms) | ${a.toFixed(2)} [${a.toFixed(2)}, ${a.toFixed(2)}] (n=2) | ${a.toFixed(2)} [${a.toFixed(2)}, ${a.toFixed(2)}] (n=2) |`);
    expect(md).toMatch(/\| udp neighbour[^|]*\| -15\.00 \[[-\d.]+, [-\d.]+\] \(n=2\); lower 2, higher 0 \|/);
    const unavailable = reportModel(r, { neighbourAlone: { unavailable: 'its trace file was not found unchanged' } }).model;
    expect(sectionOf(unavailable, 'alone')!.blocks).toEqual([{ lines: [{ prose: 'notAvailable', slots: { reason: 'its trace file was not found unchanged' } }] }]);
  });
});
