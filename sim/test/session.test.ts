import { armFactory, pacedAtBitrateMultiple } from '../src/arms/index.js';
import { SIM_ARMS } from '../src/arms/types.js';
import { simulateSession, type SimSessionQoE } from '../src/session.js';
import { firstSteadyStretch, theorem1 } from '../src/theorem1.js';
import { constantTrace, loadTrace, parseStepsTrace, type Trace } from '../src/trace.js';
import { bufferBasedPaceKbps, bufferFraction, DEFAULT_SAMMY_CONFIG, fullBufferS, roundRtpKbps } from '@sammy/player/abr';
import { bundledTraces, labSidecar, TOP_KBPS, TOP_RUNG } from './helpers.js';

const SEGMENT_S = labSidecar.segmentDurationS;

function run(trace: Trace, arm: Parameters<typeof armFactory>[0], durationS = 600, options: Parameters<typeof armFactory>[1] = {}): SimSessionQoE {
  return simulateSession({ trace, sidecar: labSidecar, arm: armFactory(arm, options), durationS });
}

describe('Theorem 1 holds on every simulated session', () => {
  const traces = [...bundledTraces().map((p) => loadTrace(p)), constantTrace(40000), constantTrace(500, 60), constantTrace(1100, 30)];
  const cases = traces.flatMap((trace) => SIM_ARMS.map((arm) => [trace.name, arm, trace] as const));

  test.each(cases)('%s, %s', (_name, arm, trace) => {
    const qoe = run(trace, arm);
    // Whole session from the play request (B_0 = 0), with full and empty time tracked.
    const whole = theorem1(qoe.chunks, SEGMENT_S);
    expect(whole.b0S).toBe(0);
    expect(Math.abs(whole.errorS)).toBeLessThan(1e-6);
    expect(whole.bEndS).toBeCloseTo(qoe.sim.bufferEndS, 9);
    expect(whole.idleS).toBeCloseTo(qoe.sim.idleS, 6);
    // Eq. 2.5 chunk by chunk: B_{t+1} = B_t + d_t - d_t r_t / x_t (+ time stood still).
    for (const c of qoe.chunks) {
      const rKbps = (c.sizeBytes * 8) / 1000 / SEGMENT_S;
      expect(c.bufferAfterS).toBeCloseTo(c.bufferBeforeS + SEGMENT_S - (SEGMENT_S * rKbps) / c.throughputKbps + c.stoppedS, 9);
    }
    // As the thesis states it, on the first stretch after startup with no idle or empty time.
    const stretch = firstSteadyStretch(qoe.chunks);
    if (stretch.length > 0) {
      const literal = theorem1(stretch, SEGMENT_S);
      expect(literal.idleS).toBe(0);
      expect(literal.stoppedS).toBe(0);
      expect(Math.abs(literal.errorS)).toBeLessThan(1e-6);
    }
  });

  test('the literal form is exercised on long stretches, not only single chunks', () => {
    const qoe = run(constantTrace(40000), 'sammy');
    const stretch = firstSteadyStretch(qoe.chunks);
    expect(stretch.length).toBeGreaterThan(10);
    const th = theorem1(stretch, SEGMENT_S);
    expect(th.bEndS).toBeGreaterThan(th.b0S + 10);
  });
});

describe('Sammy on constant:40000 with the lab ladder', () => {
  const qoe = run(constantTrace(40000), 'sammy');
  const playing = qoe.chunks.filter((c) => c.phase === 'playing');

  test('never rebuffers and plays the top rung after startup', () => {
    expect(qoe.rebufferCount).toBe(0);
    expect(qoe.playDelayS).not.toBeNull();
    expect(playing.length).toBeGreaterThan(250);
    expect(playing.every((c) => c.rung === TOP_RUNG)).toBe(true);
  });

  test('its playing-phase chunk throughput lies between 2.9x and 11x the top bitrate', () => {
    const multiple = qoe.chunkThroughputKbps! / TOP_KBPS;
    expect(multiple).toBeGreaterThanOrEqual(2.9);
    expect(multiple).toBeLessThanOrEqual(11);
    // And every rtp it sent is in that band (rounded up to 100 kbps).
    for (const c of playing) {
      expect(c.rtpKbps!).toBeGreaterThanOrEqual(2.9 * TOP_KBPS);
      expect(c.rtpKbps!).toBeLessThanOrEqual(Math.ceil((11 * TOP_KBPS) / 100) * 100);
    }
  });

  test('and well below control, whose chunks arrive at link rate', () => {
    const control = run(constantTrace(40000), 'control');
    expect(control.rebufferCount).toBe(0);
    expect(qoe.chunkThroughputKbps!).toBeLessThan(0.2 * control.chunkThroughputKbps!);
    expect(qoe.avgQuality!).toBeGreaterThan(control.avgQuality! - 0.001);
  });

  test('fills the link only with its unpaced startup chunks; control fills it for all of its download time', () => {
    // At 40 Mbit/s a download that fills the link carries its bits from first byte to last at that rate.
    const atLinkRateS = (c: SimSessionQoE['chunks'][number]) => (c.sizeBytes * 8) / 1000 / 40000;
    const initial = qoe.chunks.filter((c) => c.phase === 'initial');
    expect(initial.length).toBeGreaterThan(0);
    for (const c of initial) expect(c.linkFilledS).toBeCloseTo(atLinkRateS(c), 9);
    expect(playing.every((c) => c.linkFilledS === 0)).toBe(true);
    expect(qoe.sim.linkFilledS).toBeCloseTo(initial.reduce((s, c) => s + c.linkFilledS, 0), 9);
    const control = run(constantTrace(40000), 'control');
    for (const c of control.chunks) expect(c.linkFilledS).toBeCloseTo(atLinkRateS(c), 9);
  });
});

describe('a long round trip is not a slow link', () => {
  // Steady links with room to spare (5-100 Mbit/s against a 1050 kbps top), round trips of
  // 40-300 ms, buffer targets of 30-240 s: the request's latency makes every chunk measure
  // below its pace, which must not read as a link that holds the pace back.
  const cases = [5_000, 20_000, 100_000].flatMap((kbps) => [40, 100, 200, 300].flatMap((latencyMs) => [30, 60, 240].map((maxBufferS) => [kbps, latencyMs, maxBufferS] as const)));
  const fullRtpKbps = roundRtpKbps(DEFAULT_SAMMY_CONFIG.paceFullMultiplier * TOP_KBPS);

  test.each(cases)('constant %i kbps, %i ms, %i s target: every pace is the buffer-based one, 2.9x the top at a full buffer', (kbps, latencyMs, maxBufferS) => {
    const qoe = run(constantTrace(kbps, latencyMs), 'sammy', Math.max(600, 2 * maxBufferS), { maxBufferS });
    const playing = qoe.chunks.filter((c) => c.phase === 'playing');
    expect(qoe.rebufferCount).toBe(0);
    const fullS = fullBufferS(maxBufferS, SEGMENT_S);
    const bufferBasedRtpKbps = (bufferS: number) =>
      roundRtpKbps(bufferBasedPaceKbps(TOP_KBPS, bufferFraction(bufferS, fullS), DEFAULT_SAMMY_CONFIG));
    const otherwise = playing.filter((c) => c.rtpKbps !== bufferBasedRtpKbps(c.bufferBeforeS)).map((c) => ({ index: c.index, bufferS: c.bufferBeforeS, rtpKbps: c.rtpKbps }));
    expect(otherwise).toEqual([]);
    // And the buffer does fill: some chunks go out at the full-buffer pace.
    expect(playing.filter((c) => c.rtpKbps === fullRtpKbps).length).toBeGreaterThan(5);
  });
});

describe('Sammy on a link below the top bitrate', () => {
  const trace = loadTrace(bundledTraces().find((p) => p.endsWith('slow-800kbps.json'))!);
  const qoe = run(trace, 'sammy');
  const secondHalf = qoe.chunks.slice(qoe.chunks.length / 2);

  test('settles on a lower rung without repeated rebuffers', () => {
    expect(qoe.rebufferCount).toBeLessThanOrEqual(1);
    const counts = new Map<number, number>();
    for (const c of secondHalf) counts.set(c.rung, (counts.get(c.rung) ?? 0) + 1);
    const [mostPlayed] = [...counts.entries()].sort((a, b) => b[1] - a[1])[0]!;
    expect(mostPlayed).toBeLessThan(TOP_RUNG);
    expect(labSidecar.representations[mostPlayed]!.bitrateKbps).toBeLessThanOrEqual(800);
    // What it fetches in the second half fits through the link.
    const kbit = secondHalf.reduce((s, c) => s + (c.sizeBytes * 8) / 1000, 0);
    expect(kbit / (secondHalf.length * SEGMENT_S)).toBeLessThan(800);
  });
});

describe('the thesis 2.2.3 downward spiral', () => {
  const trace = constantTrace(40000);

  test('a rule picking below 0.5x the minimum recent throughput, paced at 1.5x the bitrate, spirals to the lowest rung', () => {
    const qoe = run(trace, 'spiral', 120);
    const rungs = qoe.chunks.map((c) => c.rung);
    expect(rungs[0]).toBe(TOP_RUNG);
    // Never back up, one rung per decision, down to the bottom and stuck there.
    for (let i = 1; i < rungs.length; i++) expect(rungs[i]!).toBeLessThanOrEqual(rungs[i - 1]!);
    const bottom = rungs.indexOf(0);
    expect(bottom).toBeGreaterThan(0);
    expect(bottom).toBeLessThanOrEqual(TOP_RUNG + 1);
    expect(rungs.slice(bottom).every((r) => r === 0)).toBe(true);
    // The link could carry 38x the top bitrate.
    expect(qoe.avgBitrateKbps).toBeLessThan(0.2 * TOP_KBPS);
  });

  test('Sammy, starting at the same rung under the same pacing, does not spiral', () => {
    // The same start as the spiral: the device history says the link is fast, so the
    // initial phase picks the top rung; then every request is paced at 1.5x its bitrate.
    const factory = pacedAtBitrateMultiple(armFactory('sammy', { historyKbps: [40000] }), 1.5);
    const qoe = simulateSession({ trace, sidecar: labSidecar, arm: factory, durationS: 120 });
    const rungs = qoe.chunks.map((c) => c.rung);
    expect(rungs[0]).toBe(TOP_RUNG);
    expect(Math.min(...rungs)).toBeGreaterThan(0);
    // HYB's buffer term (Eq. 2.1) lets it hold the top rung once a few seconds are buffered.
    expect(rungs.slice(20).every((r) => r === TOP_RUNG)).toBe(true);
    expect(qoe.rebufferCount).toBe(0);
  });

  test('with its own pace (never below the Eq. 2.1 floor) Sammy keeps the top rung throughout', () => {
    const qoe = run(trace, 'sammy', 120, { historyKbps: [40000] });
    expect(qoe.chunks.every((c) => c.rung === TOP_RUNG)).toBe(true);
  });
});

describe('the session model', () => {
  test('fixed4x paces every request at 4x the top bitrate and so caps chunk throughput there', () => {
    const qoe = run(constantTrace(40000), 'fixed4x');
    expect(qoe.chunks.every((c) => c.rtpKbps === 4 * TOP_KBPS)).toBe(true);
    expect(qoe.chunkThroughputKbps!).toBeLessThanOrEqual(4 * TOP_KBPS);
    expect(qoe.chunkThroughputKbps!).toBeGreaterThan(3.5 * TOP_KBPS);
  });

  test('a link far below the lowest rung rebuffers, and the rebuffer time adds up', () => {
    const qoe = run(constantTrace(100, 20), 'control', 60);
    expect(qoe.rebufferCount).toBeGreaterThan(0);
    expect(qoe.rebufferS).toBeGreaterThan(0);
    // Everything is fetched at 100 kbps, so the session lasts at least S_T / 100 kbps.
    const kbit = qoe.chunks.reduce((s, c) => s + (c.sizeBytes * 8) / 1000, 0);
    expect(qoe.sim.lastArrivalS).toBeGreaterThanOrEqual(kbit / 100);
    expect(qoe.sim.stoppedS).toBeCloseTo(qoe.playDelayS! + qoe.rebufferS, 6);
  });

  test('the buffer never exceeds the target by more than one segment, and the record shapes are the contract', () => {
    const qoe = run(constantTrace(40000), 'sammy', 300, { maxBufferS: 20 });
    expect(Math.max(...qoe.chunks.map((c) => c.bufferAfterS))).toBeLessThanOrEqual(20 + 1e-9);
    expect(qoe.config.maxBufferS).toBe(20);
    const c = qoe.chunks[10]!;
    expect(c.appliedRateKbps).toBeNull();
    expect(Object.keys(c)).toEqual(
      expect.arrayContaining(['index', 'rung', 'bitrateKbps', 'sizeBytes', 'downloadS', 'throughputKbps', 'phase', 'rtpKbps', 'appliedRateKbps', 'bufferBeforeS', 'bufferAfterS']),
    );
    expect(qoe.chunks.map((x) => x.index)).toEqual(qoe.chunks.map((_, i) => i));
  });

  test('is deterministic', () => {
    const trace = loadTrace(bundledTraces().find((p) => p.endsWith('.mahimahi'))!);
    expect(JSON.stringify(run(trace, 'sammy', 300))).toBe(JSON.stringify(run(trace, 'sammy', 300)));
  });
});

describe("Sammy's stalled-download rule", () => {
  // 5 Mbit/s, then 40 s at 100 kbit/s (a top-rung chunk takes 21 s there), then 5 Mbit/s again.
  const fall = parseStepsTrace(
    [
      { durationS: 20, bandwidthKbps: 5000 },
      { durationS: 40, bandwidthKbps: 100 },
      { durationS: 60, bandwidthKbps: 5000 },
    ],
    'fall',
  );
  const sammy = (config: Record<string, number>) => run(fall, 'sammy', 120, { maxBufferS: 8, sammy: { maxBufferS: 8, ...config } });

  test('gives up the chunk the fall catches and fetches it at the lowest rung, cutting the stall', () => {
    const on = sammy({});
    const off = sammy({ stallAbandon: 0 });
    const given = on.chunks.filter((c) => c.abandonedBytes > 0);
    expect(given.length).toBeGreaterThan(0);
    for (const c of given) expect(c.rung).toBe(0);
    expect(off.chunks.every((c) => c.abandonedBytes === 0)).toBe(true);
    // Measured: 9.05 s against 21.6 s.
    expect(on.rebufferS).toBeLessThan(off.rebufferS - 5);
  });
});
