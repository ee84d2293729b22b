import type { ChunkRecord } from '@sammy/player/abr';
import { summaries, type LabResult, type TrialRecord } from '../../src/analysis/result.js';
import { renderReport, reportModel } from '../../src/analysis/report.js';
import { sectionOf } from '../../src/analysis/report-markdown.js';
import { parseScenario } from '../../src/scenario/scenario.js';
import { bufferReachedAtS, phaseWindows } from '../../src/analysis/windows.js';

/** A playing-phase chunk requested `requestS` after the play request. */
function chunk(requestS: number, rtpKbps: number | null, sizeBytes: number, downloadS: number): ChunkRecord {
  return {
    index: Math.round(requestS), rung: 4, bitrateKbps: 1000, sizeBytes, downloadS, throughputKbps: (sizeBytes * 8) / 1000 / downloadS,
    phase: 'playing', rtpKbps, appliedRateKbps: rtpKbps, bufferBeforeS: 0, bufferAfterS: 0, requestS,
  };
}

/**
 * Playback starts 1 s after the origin (play delay 0.5 s, so the play request is at
 * 0.5 s); the buffer holds 9 s (0.9 x a 10 s target) 4 s after the origin, so the
 * fill is [1, 4) and the steady state [4, 11) s since the origin (playS 10).
 */
function record(arm: 'sammy' | 'control', buffer: Array<[number, number, number]>): TrialRecord {
  return {
    trial: 1, neighbour: 'udp', experiment: 'udp', arm, order: 0, startedAt: '', originMs: 0, historyReset: false, playbackStartS: 1,
    window: { startS: 0, endS: 10 },
    metrics: {} as TrialRecord['metrics'],
    session: {
      arm, url: '', originMs: 0, playbackStartMs: 1000, playerConfig: null, pageErrors: [], buffer,
      qoe: {
        arm, playDelayS: 0.5, rebufferCount: 0, rebufferS: 0, avgBitrateKbps: 1000, avgQuality: null, switchCount: 0, initialThroughputKbps: null, chunkThroughputKbps: null, config: {},
        // Requested at 1.5 and 2.5 s since the origin (fill), 5.5 and 8.5 s (steady).
        chunks: [chunk(1, 11_000, 1_000_000, 1), chunk(2, 9_000, 1_000_000, 1), chunk(5, 3_000, 250_000, 1), chunk(8, 2_900, 250_000, 0.5)],
      },
    },
    neighbourSession: null,
    // [end s since origin, path, bytes, durationMs, rttMs, retransmits, bytesRetrans, bytesSent, rtp, applied]
    telemetry: [[2, 'a', 1_000_000, 1000, 20, 1, 10_000, 1_000_000, 11_000, 11_000], [6, 'b', 250_000, 1000, 6, 0, 0, 250_000, 3000, 3000]],
    // The UDP neighbour's window starts at playback start: one datagram per second, delay 10 ms in the fill, 2 ms after.
    neighbourRaw: { kind: 'udp', rateKbps: 5000, packetBytes: 1200, sent: 10, packets: [[500, 10], [1500, 10], [2500, 10], [3500, 2], [6500, 2], [9500, 2]] },
    queue: [[1500, 0, 0, 0], [5000, 0, 0, 0]],
    error: null,
  };
}

const context = { maxBufferS: 10, fraction: 0.9, playS: 10, topBitrateKbps: 1000, rateMbps: 40 };
const filling: Array<[number, number, number]> = [[1.5, 2, 0.5], [3, 6, 2], [4, 9, 3], [6, 10, 5]];

describe('phase windows (steady-state scenarios)', () => {
  test('the steady state starts at the first buffer sample at the level', () => {
    expect(bufferReachedAtS(filling, 9)).toBe(4);
    expect(bufferReachedAtS(filling, 11)).toBeNull();
  });

  test("each window's video and neighbour metrics come from that window only", () => {
    const w = phaseWindows(record('sammy', filling), context)!;
    expect([w.fill!.fromS, w.fill!.toS, w.steady!.fromS, w.steady!.toS]).toEqual([0, 3, 3, 10]);
    const fill = w.fill!.metrics;
    const steady = w.steady!.metrics;
    expect(fill.chunkThroughputKbps).toBeCloseTo(8000, 9); // 2 MB in 2 s
    expect(fill.paceMultiple).toBeCloseTo(10, 9); // (11000 + 9000) / 2 / 1000
    expect(steady.chunkThroughputKbps).toBeCloseTo((500_000 * 8) / 1000 / 1.5, 9);
    expect(steady.chunkThroughputMultiple).toBeCloseTo(2.6667, 3);
    expect(steady.paceMultiple).toBeCloseTo(2.95, 9);
    expect([fill.videoRttMs, fill.retransPct, steady.videoRttMs, steady.retransPct]).toEqual([20, 1, 6, 0]);
    // Neighbour datagrams sent 0.5, 1.5, 2.5 s after its start (the fill) and 3.5, 6.5, 9.5 s (steady).
    expect(fill.udpOwdMs).toBeCloseTo(10, 9);
    expect(steady.udpOwdMs).toBeCloseTo(2, 9);
    expect(fill.udpLossPct).toBeUndefined(); // the sender counts only the whole window
  });

  test('a buffer that never reaches the level: all fill, no steady state', () => {
    const w = phaseWindows(record('control', [[2, 3, 1], [9, 5, 8]]), context)!;
    expect(w.steady).toBeNull();
    expect([w.fill!.fromS, w.fill!.toS]).toEqual([0, 10]);
  });

  test('summaries and the report carry both windows per experiment and arm', () => {
    const trials = [record('sammy', filling), record('control', filling)];
    for (const t of trials) t.windows = phaseWindows(t, context);
    const sums = summaries(trials, ['control', 'sammy']);
    expect(sums.summaryByWindow?.steady?.udp?.sammy?.udpOwdMs?.mean).toBeCloseTo(2, 9);
    expect(sums.summaryByWindow?.fill?.udp?.sammy?.paceMultiple?.mean).toBeCloseTo(10, 9);
    const scenario = parseScenario({
      name: 'steady', link: { rateMbps: 40, rttMs: 5 }, media: { durationS: 30 }, session: { playS: 10, steadyFromBufferFraction: 0.9 }, player: { maxBufferS: 10 },
      neighbours: [{ kind: 'udp' }], arms: ['control', 'sammy'],
    });
    const result: LabResult = {
      config: { scenario, link: { queueBytes: 100_000, bdpBytes: 25_000, measuredIdleRtt: null }, media: { rungsKbps: [1000] } },
      trials, ...sums, delayLine: null, warmups: [], startedAt: '', finishedAt: '', complete: true,
    };
    const md = renderReport(result).markdown;
    expect(sectionOf(reportModel(result).model, 'windows')!.blocks[0]).toEqual({ lines: [{ prose: 'windows', slots: { fraction: 0.9, targetS: 10, levelS: '9.0' } }] });
    expect(md).toMatch(/\| sammy \| 1 of 1 \| 3\.0 \(3\.0–3\.0\) \|/);
    expect(md).toMatch(/\| requested pace rate \(rtp\) \/ top bitrate \(x\) \| 10\.00 \(n=1\) \| 10\.00 \(n=1\) \| 2\.95 \(n=1\) \| 2\.95 \(n=1\) \|/);
  });
});
