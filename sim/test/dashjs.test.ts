import { BolaModel, DASHJS_DEFAULTS, DashJsArm, DashJsThroughputEstimator, rungForBitrate } from '../src/arms/dashjs.js';
import { armFactory } from '../src/arms/index.js';
import type { ChunkDone, DownloadProgress } from '../src/arms/types.js';
import { simulateSession } from '../src/session.js';
import { theorem1 } from '../src/theorem1.js';
import { parseStepsTrace } from '../src/trace.js';
import { labSidecar, TOP_RUNG } from './helpers.js';

const LADDER = labSidecar.representations.map((r) => r.bitrateKbps);

describe('the throughput estimator (ThroughputModel EWMA)', () => {
  test('a first sample is returned exactly (startup correction), the safe average is 0.9x', () => {
    const e = new DashJsThroughputEstimator(DASHJS_DEFAULTS);
    expect(Number.isNaN(e.averageKbps())).toBe(true);
    e.addSegment(1_000_000, 1);
    expect(e.averageKbps()).toBe(8000);
    expect(e.safeAverageKbps()).toBeCloseTo(7200);
  });

  test('the lower of the fast and slow estimates wins: quick to fall, slow to rise', () => {
    const fall = new DashJsThroughputEstimator(DASHJS_DEFAULTS);
    for (let i = 0; i < 5; i++) fall.addSegment(1_250_000, 1); // 10 Mbps
    fall.addSegment(250_000, 1); // one 2 Mbps chunk
    const rise = new DashJsThroughputEstimator(DASHJS_DEFAULTS);
    for (let i = 0; i < 5; i++) rise.addSegment(250_000, 1);
    rise.addSegment(1_250_000, 1);
    // After a fall the estimate is nearer the new value than after an equal rise.
    expect(10000 - fall.averageKbps()).toBeGreaterThan(rise.averageKbps() - 2000);
    expect(fall.averageKbps()).toBeLessThan(10000);
    expect(rise.averageKbps()).toBeGreaterThan(2000);
  });

  test('samples weigh their download time: a long download moves the estimate more', () => {
    const short = new DashJsThroughputEstimator(DASHJS_DEFAULTS);
    const long = new DashJsThroughputEstimator(DASHJS_DEFAULTS);
    short.addSegment(1_250_000, 1);
    long.addSegment(1_250_000, 1);
    short.addSegment(25_000, 0.1); // 2 Mbps for 0.1 s
    long.addSegment(250_000, 1); // 2 Mbps for 1 s
    expect(long.averageKbps()).toBeLessThan(short.averageKbps());
  });
});

describe('getOptimalRepresentationForBitrate', () => {
  test.each([
    [1000, 3],
    [1050, 4],
    [149, 0],
    [0, 0],
    [NaN, 0],
    [99999, 4],
  ])('%d kbps -> rung %d', (kbps, rung) => {
    expect(rungForBitrate(LADDER, kbps)).toBe(rung);
  });
});

describe('BOLA for the lab ladder', () => {
  const bola = new BolaModel(LADDER, DASHJS_DEFAULTS.bufferTimeDefaultS);

  test('parameters: buffer time max(18, 10 + 2 x 5 rungs) = 20 s', () => {
    expect(bola.gp).toBeCloseTo(Math.log(1050 / 150), 9);
    expect(bola.vp).toBeCloseTo(10 / Math.log(1050 / 150), 9);
  });

  test('higher buffers choose higher rungs, and each rung is chosen from its min buffer on, below its max buffer', () => {
    let previous = 0;
    for (let b = 0; b <= 40; b += 0.5) {
      const rung = bola.rungForBuffer(b);
      expect(rung).toBeGreaterThanOrEqual(previous);
      previous = rung;
    }
    expect(bola.rungForBuffer(0)).toBe(0);
    expect(bola.rungForBuffer(40)).toBe(TOP_RUNG);
    for (let rung = 1; rung <= TOP_RUNG; rung++) {
      expect(bola.minBufferForRung(rung)).toBeLessThan(bola.maxBufferForRung(rung));
      expect(bola.rungForBuffer(bola.minBufferForRung(rung) + 1e-6)).toBeGreaterThanOrEqual(rung);
    }
  });
});

function chunk(overrides: Partial<ChunkDone>): ChunkDone {
  return {
    index: 0,
    rung: 3,
    sizeBytes: 250_000,
    durationS: 2,
    phase: 'initial',
    rtpKbps: null,
    requestS: 0,
    firstByteS: 0.005,
    endS: 0.1,
    bufferAtEndS: 0,
    bufferAfterS: 2,
    ...overrides,
  };
}

describe('the control arm', () => {
  test('starts at the highest rung at or below 1000 kbps and sends no rtp; fixed4x sends 4x the top bitrate', () => {
    const control = new DashJsArm({ sidecar: labSidecar, contentDurationS: 120 });
    expect(control.decide({ nowS: 0, index: 0, bufferS: 0, started: false, stalled: false })).toEqual({ rung: 3, rtpKbps: null, delayS: 0 });
    const fixed = new DashJsArm({ sidecar: labSidecar, contentDurationS: 120, paceTopMultiplier: 4 });
    expect(fixed.decide({ nowS: 0, index: 0, bufferS: 0, started: false, stalled: false }).rtpKbps).toBe(4200);
    expect(fixed.arm).toBe('fixed4x');
  });

  test('ThroughputRule moves to the rung under 0.9x the estimate once the buffer is loaded', () => {
    const arm = new DashJsArm({ sidecar: labSidecar, contentDurationS: 120 });
    arm.decide({ nowS: 0, index: 0, bufferS: 0, started: false, stalled: false });
    // 20 Mbps measured from the first byte.
    arm.onChunk(chunk({ sizeBytes: 250_000, firstByteS: 0.005, endS: 0.105 }));
    expect(arm.decide({ nowS: 0.105, index: 1, bufferS: 2, started: true, stalled: false }).rung).toBe(TOP_RUNG);
  });

  test('InsufficientBufferRule caps the rung at 0.7 x estimate x buffer / segment after two segments, and drops to the lowest when empty', () => {
    const arm = new DashJsArm({ sidecar: labSidecar, contentDurationS: 120 });
    arm.decide({ nowS: 0, index: 0, bufferS: 0, started: false, stalled: false });
    // 1000 kbps measured.
    arm.onChunk(chunk({ index: 0, sizeBytes: 125_000, firstByteS: 0, endS: 1 }));
    arm.onChunk(chunk({ index: 1, sizeBytes: 125_000, firstByteS: 1, endS: 2, bufferAfterS: 2 }));
    // 0.7 x 1000 x 1 s / 2 s = 350 kbps: rung 1 (300), below ThroughputRule's 900 kbps (rung 3).
    expect(arm.decide({ nowS: 2, index: 2, bufferS: 1, started: true, stalled: false }).rung).toBe(1);
    expect(arm.decide({ nowS: 3, index: 3, bufferS: 0.1, started: true, stalled: true }).rung).toBe(0);
  });

  test("buffer target: dash.js's below the top rung, the session's at the top (long-form twin included)", () => {
    const arm = new DashJsArm({ sidecar: labSidecar, contentDurationS: 900, settings: { bufferTimeAtTopQualityS: 45, bufferTimeAtTopQualityLongFormS: 45 } });
    expect(arm.bufferTargetS(0)).toBe(18);
    expect(arm.bufferTargetS(TOP_RUNG)).toBe(45);
    const stock = new DashJsArm({ sidecar: labSidecar, contentDurationS: 900 });
    expect(stock.bufferTargetS(TOP_RUNG)).toBe(60);
  });
});

describe('AbandonRequestsRule', () => {
  /** A 750 kbps segment (187,500 bytes) in flight at rung 3 after the first decision. */
  const progress = (overrides: Partial<DownloadProgress> = {}): DownloadProgress => ({
    index: 0,
    rung: 3,
    sizeBytes: 187_500,
    loadedBytes: 10_000,
    sinceFirstByteS: 1,
    sinceRequestS: 1.04,
    nowS: 1.04,
    bufferS: 10,
    ...overrides,
  });
  const started = () => {
    const arm = new DashJsArm({ sidecar: labSidecar, contentDurationS: 120 });
    arm.decide({ nowS: 0, index: 0, bufferS: 0, started: false, stalled: false });
    return arm;
  };

  test('abandons for the rung the measured throughput carries when the segment would take over 1.8 durations', () => {
    // 80 kbps so far: the whole segment would take 18.75 s > 3.6 s; the rest (177,500 bytes)
    // is more than the whole segment at 150 kbps (37,500 bytes).
    expect(started().onProgress(progress())).toBe(0);
    // 1000 kbps so far (125,000 bytes in 1 s): 1.5 s in all, under 3.6 s: no.
    expect(started().onProgress(progress({ loadedBytes: 125_000 }))).toBeNull();
    // 400 kbps (50,000 bytes in 1 s): 3.75 s > 3.6 s; the rest, 137,500 bytes, is more than 75,000 (the segment at 300): rung 1.
    expect(started().onProgress(progress({ loadedBytes: 50_000 }))).toBe(1);
  });

  test('never before 0.5 s from the first byte, above the stable buffer time, on the lowest rung, or twice for a segment', () => {
    expect(started().onProgress(progress({ sinceFirstByteS: 0.5 }))).toBeNull();
    expect(started().onProgress(progress({ bufferS: 18.5 }))).toBeNull(); // bufferTimeDefault 18 s
    expect(started().onProgress(progress({ rung: 0 }))).toBeNull();
    const arm = started();
    expect(arm.onProgress(progress())).toBe(0);
    expect(arm.onProgress(progress({ rung: 1 }))).toBeNull();
    expect(new DashJsArm({ sidecar: labSidecar, contentDurationS: 120, settings: { abandonRequests: false } }).onProgress(progress())).toBeNull();
  });

  test('after an abandonment no up-switch for 10 s (ABANDON_LOAD), then the rules apply again', () => {
    const arm = started();
    expect(arm.onProgress(progress())).toBe(0);
    // 20 Mbps measured afterwards: ThroughputRule would take the top rung.
    arm.onChunk(chunk({ index: 0, rung: 0, sizeBytes: 250_000, requestS: 1.04, firstByteS: 1.08, endS: 1.18, bufferAfterS: 2 }));
    expect(arm.decide({ nowS: 5, index: 1, bufferS: 2, started: true, stalled: false }).rung).toBe(0);
    expect(arm.decide({ nowS: 11.1, index: 2, bufferS: 2, started: true, stalled: false }).rung).toBe(TOP_RUNG);
  });

  test('in a session: the abandoned bytes are recorded, the segment is fetched at the new rung, and Theorem 1 still holds', () => {
    // 5 Mbit/s, then 60 kbit/s from 20 s on.
    const trace = parseStepsTrace([{ durationS: 20, bandwidthKbps: 5000, latencyMs: 40 }, { durationS: 1, bandwidthKbps: 60, latencyMs: 40 }], 'collapse');
    const q = simulateSession({ trace, sidecar: labSidecar, arm: armFactory('control'), durationS: 60 });
    const abandoned = q.chunks.filter((c) => c.abandonedBytes > 0);
    expect(abandoned.length).toBeGreaterThan(0);
    expect(abandoned.every((c) => c.rung === 0)).toBe(true);
    expect(Math.abs(theorem1(q.chunks, labSidecar.segmentDurationS).errorS)).toBeLessThan(1e-6);
  });
});

describe('the saved-bitrate cache', () => {
  test('the first rung follows a saved bitrate (the throughput estimate at the last quality change) instead of 1000 kbps', () => {
    const saved = new DashJsArm({ sidecar: labSidecar, contentDurationS: 120, settings: { savedBitrateKbps: 400 } });
    expect(saved.decide({ nowS: 0, index: 0, bufferS: 0, started: false, stalled: false }).rung).toBe(1);
    const arm = new DashJsArm({ sidecar: labSidecar, contentDurationS: 120 });
    expect(arm.savedBitrateKbps()).toBeNull();
    arm.decide({ nowS: 0, index: 0, bufferS: 0, started: false, stalled: false });
    arm.onChunk(chunk({ sizeBytes: 250_000, firstByteS: 0.005, endS: 0.105 })); // 20 Mbps
    arm.decide({ nowS: 0.105, index: 1, bufferS: 2, started: true, stalled: false }); // up to the top: a quality change
    expect(arm.savedBitrateKbps()).toBe(20000);
    const next = new DashJsArm({ sidecar: labSidecar, contentDurationS: 120, settings: { savedBitrateKbps: arm.savedBitrateKbps() } });
    expect(next.decide({ nowS: 0, index: 0, bufferS: 0, started: false, stalled: false }).rung).toBe(TOP_RUNG);
  });
});
