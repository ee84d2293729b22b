import { playedSegments, summarizeSession } from '../../src/abr/qoe.js';
import type { ChunkRecord } from '../../src/abr/records.js';
import { LAB_BITRATES_KBPS as BITRATES } from './fixtures.js';

function rec(index: number, rung: number, phase: ChunkRecord['phase'], sizeBytes: number, downloadS: number): ChunkRecord {
  return {
    index,
    rung,
    bitrateKbps: BITRATES[rung]!,
    sizeBytes,
    downloadS,
    throughputKbps: (sizeBytes * 8) / 1000 / downloadS,
    phase,
    rtpKbps: phase === 'playing' ? 3100 : null,
    appliedRateKbps: null,
    bufferBeforeS: 0,
    bufferAfterS: 2,
  };
}

const ssim = BITRATES.map((_, rung) => Array.from({ length: 10 }, () => 0.8 + rung * 0.04)); // 0.80 .. 0.96

describe('session QoE summary', () => {
  const chunks = [
    rec(0, 0, 'initial', 1000, 0.01), // 800 kbps
    rec(1, 4, 'initial', 3000, 0.01), // 2400 kbps
    rec(2, 4, 'playing', 2000, 0.1), // 160 kbps
    rec(3, 3, 'playing', 2000, 0.1),
    rec(4, 4, 'playing', 2000, 0.2),
  ];

  test('time-weighted bitrate and SSIM over the played part only; switches between played segments', () => {
    // Played [0, 7): segments 0, 1, 2 whole, 3 for 1 s; 4 downloaded but not played.
    const q = summarizeSession({
      arm: 'sammy',
      config: { x: 1 },
      chunks,
      segmentDurationS: 2,
      ssim,
      playDelayS: 0.3,
      rebufferCount: 0,
      rebufferS: 0,
      playedRanges: [[0, 7]],
    });
    expect(q.avgBitrateKbps).toBeCloseTo((150 * 2 + 1050 * 2 + 1050 * 2 + 750 * 1) / 7, 9);
    expect(q.avgQuality).toBeCloseTo((0.8 * 2 + 0.96 * 2 + 0.96 * 2 + 0.92 * 1) / 7, 9);
    expect(q.switchCount).toBe(2); // 0 -> 4 -> 4 -> 3
    expect(q.initialThroughputKbps).toBeCloseTo(32 / 0.02, 9); // total bits / total time
    expect(q.chunkThroughputKbps).toBeCloseTo(48 / 0.4, 9);
    expect(q).toMatchObject({ arm: 'sammy', playDelayS: 0.3, rebufferCount: 0, rebufferS: 0, config: { x: 1 } });
    expect(q.chunks).toBe(chunks);
  });

  test('a segment fetched twice counts with its last download; ranges after a seek are honoured', () => {
    const again = [...chunks, rec(1, 2, 'playing', 500, 0.1)];
    const played = playedSegments({ chunks: again, segmentDurationS: 2, ssim: null, playedRanges: [[0, 3], [8, 9]] });
    expect(played.map((p) => [p.index, p.rung, p.playedS, p.ssim])).toEqual([
      [0, 0, 2, null],
      [1, 2, 1, null],
      [4, 4, 1, null],
    ]);
  });

  test('ranges played twice (a rebuilt media element plays a stretch again) count once', () => {
    const played = playedSegments({ chunks, segmentDurationS: 2, ssim: null, playedRanges: [[0, 3], [2.5, 5], [1, 2]] });
    expect(played.map((p) => [p.index, p.playedS])).toEqual([
      [0, 2],
      [1, 2],
      [2, 1],
    ]);
  });

  test('nothing played: bitrate 0, quality and throughputs null', () => {
    const q = summarizeSession({ arm: 'control', config: {}, chunks: [], segmentDurationS: 2, ssim: null, playDelayS: null, rebufferCount: 0, rebufferS: 0, playedRanges: [] });
    expect(q).toMatchObject({ avgBitrateKbps: 0, avgQuality: null, switchCount: 0, initialThroughputKbps: null, chunkThroughputKbps: null });
  });
});
