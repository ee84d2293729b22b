import { DEFAULT_SAMMY_CONFIG, resolveSammyConfig, SammyConfigError } from '../../src/abr/config.js';
import { InitialThroughputHistory, memoryStore } from '../../src/abr/history.js';
import { SammySession } from '../../src/abr/session.js';
import { isLinkBound, linkKbps, paceLimitedTransferS } from '../../src/abr/throughput.js';
import { cbrLadder } from './fixtures.js';

const ladder = cbrLadder();
/** HYB's beta = 0.5 and T = 5 segments (D_T = 10 s): the arithmetic in the comments below uses them. */
const HYB = { beta: 0.5, lookaheadSegments: 5 };
/** A 262,500-byte top-rung chunk (2 s at 1050 kbps) downloaded in `s` seconds. */
const top = (s: number, phase: 'initial' | 'playing') => ({ sizeBytes: 262_500, downloadS: s, phase });

function historyWith(kbps: number[]): InitialThroughputHistory {
  const h = new InitialThroughputHistory(memoryStore(), 10);
  for (const k of kbps) h.recordSession([{ sizeBytes: 1000, downloadS: 8 / k, phase: 'initial' }]);
  return h;
}

describe('SammySession', () => {
  test('no history, no sample: the no-history rule (lowest rung), unpaced', () => {
    const s = new SammySession({ ladder, history: new InitialThroughputHistory(memoryStore(), 10) });
    const d = s.decide({ bufferS: 0, segmentIndex: 0 });
    expect(d).toMatchObject({ phase: 'initial', rung: 0, rtpKbps: null, paceKbps: null, estimateSource: 'none', predictedBufferS: null });
    expect(d.reason).toMatch(/no-history rule/);
    expect(d.reason).toMatch(/unpaced/);
  });

  test('the no-history rung is configurable and capped', () => {
    const s = new SammySession({ ladder, config: { noHistoryRung: 3 } });
    expect(s.decide({ bufferS: 0, segmentIndex: 0 }).rung).toBe(3);
    expect(s.decide({ bufferS: 0, segmentIndex: 0, maxRung: 1 }).rung).toBe(1);
  });

  test('the first chunk follows the history: HYB at the historical estimate with an empty buffer', () => {
    // beta * x * (1 + 0) >= r: 2 * 1050 = 2100 kbps is the least estimate that starts at the top.
    expect(new SammySession({ ladder, config: HYB, history: historyWith([2200]) }).decide({ bufferS: 0, segmentIndex: 0 })).toMatchObject({
      rung: 4,
      estimateSource: 'history',
      rtpKbps: null,
    });
    expect(new SammySession({ ladder, config: HYB, history: historyWith([1200]) }).decide({ bufferS: 0, segmentIndex: 0 }).rung).toBe(2);
  });

  test('in-session samples replace the history once there are any', () => {
    const s = new SammySession({ ladder, config: HYB, history: historyWith([100_000]) });
    s.addSample(top(2.5, 'initial')); // 840 kbps
    const d = s.decide({ bufferS: 2, segmentIndex: 1 });
    expect(d.estimateSource).toBe('session');
    expect(d.estimateKbps).toBeCloseTo(840, 9);
    expect(d.rung).toBe(2); // 0.5 * 840 * 1.2 = 504 >= 500
  });

  test('first frame: the playing phase starts, paced, and only initial samples enter the history', () => {
    const store = memoryStore();
    const s = new SammySession({ ladder, history: new InitialThroughputHistory(store, 10) });
    s.addSample(top(0.1, 'initial')); // 21000 kbps
    s.addSample(top(0.3, 'initial')); // 7000 kbps
    expect(s.firstFrame()).toBeCloseTo(10500, 9); // 4200 kbit / 0.4 s
    expect(s.phase).toBe('playing');
    s.addSample(top(0.2, 'playing'));
    s.addSample(top(0.2, 'initial')); // requested before the frame, finished after: not recorded either
    expect(s.firstFrame()).toBeNull(); // idempotent
    expect(new InitialThroughputHistory(store, 10).sessionsKbps()).toEqual([10500]);

    // Exact decision: f = 4 / 28 (the fullest buffer at a request), pace = 1050 * (11 * 24/28 + 2.9 * 4/28) = 10335 -> rtp 10400.
    const d = s.decide({ bufferS: 4, segmentIndex: 2 });
    expect(d.phase).toBe('playing');
    expect(d.rung).toBe(4);
    expect(d.paceKbps).toBeCloseTo(10335, 6);
    expect(d.rtpKbps).toBe(10400);
    expect(d.pace.bound).toBe('buffer');
    expect(d.reason).toMatch(/HYB: rung 4/);
    expect(d.reason).toMatch(/rtp 10400/);
  });

  test('a playing-phase session never writes playing samples to the history, whatever it is told', () => {
    const store = memoryStore();
    const s = new SammySession({ ladder, history: new InitialThroughputHistory(store, 10) });
    s.addSample(top(1, 'playing'));
    s.addSample(top(1, 'playing'));
    expect(s.firstFrame()).toBeNull();
    expect(new InitialThroughputHistory(store, 10).sessionsKbps()).toEqual([]);
  });

  test('after a rebuffer: still playing, paced at the empty-buffer rate', () => {
    const s = new SammySession({ ladder });
    s.addSample(top(0.1, 'initial'));
    s.firstFrame();
    s.rebuffer();
    expect(s.phase).toBe('playing');
    expect(s.rebufferCount).toBe(1);
    const d = s.decide({ bufferS: 0, segmentIndex: 9 });
    expect(d.rtpKbps).toBe(11600);
  });

  test('after a seek: a new initial phase (unpaced) until the next frame; the history is written only once', () => {
    const store = memoryStore();
    const s = new SammySession({ ladder, history: new InitialThroughputHistory(store, 10) });
    s.addSample(top(0.1, 'initial'));
    s.firstFrame();
    s.seek();
    expect(s.phase).toBe('initial');
    expect(s.decide({ bufferS: 0, segmentIndex: 30 }).rtpKbps).toBeNull();
    expect(s.pace({ bufferS: 0, segmentIndex: 30 }).rtpKbps).toBeNull();
    s.addSample(top(0.05, 'initial'));
    expect(s.firstFrame()).toBeNull();
    expect(s.phase).toBe('playing');
    expect(s.decide({ bufferS: 2, segmentIndex: 31 }).rtpKbps).not.toBeNull();
    expect(new InitialThroughputHistory(store, 10).sessionsKbps()).toHaveLength(1);
  });

  test('after a seek the estimate comes from unpaced samples only: the history, then what was fetched since the seek', () => {
    const store = memoryStore();
    new InitialThroughputHistory(store, 10).recordSession([{ sizeBytes: 1000, downloadS: 8 / 8000, phase: 'initial' }]);
    const s = new SammySession({ ladder, history: new InitialThroughputHistory(store, 10) });
    s.addSample(top(0.1, 'initial')); // 21000 kbps, unpaced
    s.firstFrame(); // the history now holds 8000 and 21000
    for (let i = 0; i < 5; i++) s.addSample({ ...top(1.75, 'playing'), rtpKbps: 1300 }); // 1200 kbps, paced at 1300
    expect(s.estimate().kbps).toBeCloseTo(1200, 9);
    s.seek();
    // Not the paced 1200 kbps: the history (harmonic mean of 8000 and 21000).
    expect(s.estimate()).toEqual({ kbps: expect.closeTo(2 / (1 / 8000 + 1 / 21000), 6), source: 'history' });
    // HYB at an empty buffer: beta x = 5793 kbps carries the top rung; the paced estimate (600) would give rung 2.
    expect(s.decide({ bufferS: 0, segmentIndex: 40 }).rung).toBe(4);
    s.addSample(top(0.25, 'initial')); // 8400 kbps, fetched since the seek
    expect(s.estimate()).toEqual({ kbps: expect.closeTo(8400, 9), source: 'session' });
  });

  test('after a seek with no history: the session\'s own unpaced samples, never the paced ones', () => {
    const s = new SammySession({ ladder });
    s.addSample(top(0.1, 'initial')); // 21000 kbps
    s.firstFrame();
    for (let i = 0; i < 5; i++) s.addSample(top(1.75, 'playing'));
    s.seek();
    expect(s.estimate()).toEqual({ kbps: expect.closeTo(21000, 9), source: 'session' });
  });

  test('a cap on the rung caps the choice and lowers "top" for the pace', () => {
    const s = new SammySession({ ladder });
    s.addSample(top(0.01, 'initial'));
    s.firstFrame();
    const d = s.decide({ bufferS: 0, segmentIndex: 1, maxRung: 2 });
    expect(d.rung).toBe(2);
    expect(d.rtpKbps).toBe(5500);
  });

  test('the estimate is the harmonic mean of the last throughputWindow samples', () => {
    const s = new SammySession({ ladder, config: { throughputWindow: 2 } });
    s.addSample(top(100, 'initial'));
    s.addSample(top(1, 'initial')); // 2100
    s.addSample(top(0.5, 'initial')); // 4200
    expect(s.estimate().kbps).toBeCloseTo(2 / (1 / 2100 + 1 / 4200), 9);
  });

  test('the history estimate is read when the session starts', () => {
    const h = historyWith([5000]);
    const s = new SammySession({ ladder, history: h });
    s.addSample(top(0.1, 'initial'));
    s.firstFrame();
    expect(s.historyEstimateKbps).toBeCloseTo(5000, 9);
  });
});

describe('the estimate after a fall (lastSampleCapMultiplier)', () => {
  const sample = (kbps: number) => ({ sizeBytes: kbps * 250, downloadS: 2, phase: 'playing' as const });

  test('a 10x fall counts at once: the estimate is at most 1.5x the latest sample', () => {
    const s = new SammySession({ ladder });
    for (const kbps of [2000, 2000, 2000, 2000, 200]) s.addSample(sample(kbps));
    // Harmonic mean of the window: 5 / (4 / 2000 + 1 / 200) = 714 kbps; the cap is 1.5 x 200.
    expect(s.estimate()).toEqual({ kbps: 300, source: 'session' });
    const uncapped = new SammySession({ ladder, config: { lastSampleCapMultiplier: 1e6 } });
    for (const kbps of [2000, 2000, 2000, 2000, 200]) uncapped.addSample(sample(kbps));
    expect(uncapped.estimate().kbps).toBeCloseTo(5 / (4 / 2000 + 1 / 200), 6);
  });

  test('a rise still waits for the window', () => {
    const s = new SammySession({ ladder });
    for (const kbps of [500, 500, 500, 500, 5000]) s.addSample(sample(kbps));
    expect(s.estimate().kbps).toBeCloseTo(5 / (4 / 500 + 1 / 5000), 6);
  });
});

describe('the cautious estimate under the reserve (reserveSampleWindow)', () => {
  /** maxBufferS 30: the reserve R is 0.55 x 30 = 16.5 s. */
  const config = { maxBufferS: 30 };
  const chunk = (kbps: number, rtpKbps: number | null = null) => ({ sizeBytes: kbps * 250, downloadS: 2, phase: 'playing' as const, rtpKbps });
  /** Four chunks at 4000 kbps, then `slow`, then five at 4000 again (the estimate's whole window). */
  function session(slow: ReturnType<typeof chunk>, overrides = {}): SammySession {
    const s = new SammySession({ ladder, config: { ...config, ...overrides } });
    for (const c of [...Array(4).fill(chunk(4000)), slow, ...Array(5).fill(chunk(4000))]) s.addSample(c);
    return s;
  }

  test('under the reserve every choice takes the slowest link-bound chunk of the window; at or above it the window', () => {
    const s = session(chunk(600));
    // The window's harmonic mean no longer holds the slow chunk: 4000 kbps.
    expect(s.estimate().kbps).toBeCloseTo(4000, 9);
    const under = s.decide({ bufferS: 10, segmentIndex: 20 });
    expect(under.estimateKbps).toBeCloseTo(600, 9);
    expect(under.reason).toMatch(/under the reserve the estimate is the slowest link-bound chunk of the last 16 \(600 kbps, the window says 4000 kbps\)/);
    const above = s.decide({ bufferS: 16.5, segmentIndex: 21 });
    expect(above.estimateKbps).toBeCloseTo(4000, 9);
    expect(above.reason).not.toMatch(/under the reserve/);
  });

  test('a paced chunk counts only when it measured below linkBoundPaceFraction of its rtp', () => {
    // 600 kbps at an rtp of 700: the pace held it back, not the link.
    expect(session(chunk(600, 700)).decide({ bufferS: 10, segmentIndex: 20 }).estimateKbps).toBeCloseTo(4000, 9);
    // 600 kbps at an rtp of 11000: the link did.
    expect(session(chunk(600, 11_000)).decide({ bufferS: 10, segmentIndex: 20 }).estimateKbps).toBeCloseTo(600, 9);
    // With the fraction at 0 no paced chunk counts; an unpaced one still does.
    expect(session(chunk(600, 11_000), { linkBoundPaceFraction: 0 }).decide({ bufferS: 10, segmentIndex: 20 }).estimateKbps).toBeCloseTo(4000, 9);
    expect(session(chunk(600), { linkBoundPaceFraction: 0 }).decide({ bufferS: 10, segmentIndex: 20 }).estimateKbps).toBeCloseTo(600, 9);
  });

  test('a long round trip is not a slow link: the body is judged against what its pace allows over that round trip', () => {
    // 262.5 KB paced at 11,600 kbps (1.45 MB/s) over 200 ms round trips: 10 segments, doubling
    // each round trip (4 of them: 217.2 KB) until the last window covers the rest at the pace.
    expect(paceLimitedTransferS(262_500, 11_600, 0.2)).toBeCloseTo(0.8 + 45_300 / 1_450_000, 9);
    // With no round trip, or a window that carries the pace from the start, just size / pace.
    expect(paceLimitedTransferS(262_500, 11_600, 0)).toBeCloseTo(262_500 / 1_450_000, 9);
    expect(paceLimitedTransferS(262_500, 100, 0.2)).toBeCloseTo(262_500 / 12_500, 9);
    const paced = (downloadS: number, firstByteS: number | null) => ({ sizeBytes: 262_500, downloadS, phase: 'playing' as const, rtpKbps: 11_600, firstByteS });
    // At the pace over a fast link, 200 ms away: 1.03 s from the request, 0.2 of its rtp, not link-bound.
    expect(isLinkBound(paced(0.2 + 0.831, 0.2), 0.5)).toBe(false);
    // Without the first byte's time the same chunk reads as link-bound (the old test).
    expect(isLinkBound(paced(0.2 + 0.831, null), 0.5)).toBe(true);
    // A 1 Mbit/s link does hold it back: 2.1 s of body.
    expect(isLinkBound(paced(0.2 + 2.1, 0.2), 0.5)).toBe(true);
    // What the link carried leaves the round trip out.
    expect(linkKbps(paced(0.2 + 2.1, 0.2))).toBeCloseTo(1000, 9);
    expect(isLinkBound({ ...paced(2.3, 0.2), rtpKbps: null }, 0.5)).toBe(true);
  });

  test('the window bounds how far back it looks; 0 turns the rule off', () => {
    expect(session(chunk(600), { reserveSampleWindow: 5 }).decide({ bufferS: 10, segmentIndex: 20 }).estimateKbps).toBeCloseTo(4000, 9);
    expect(session(chunk(600), { reserveSampleWindow: 6 }).decide({ bufferS: 10, segmentIndex: 20 }).estimateKbps).toBeCloseTo(600, 9);
    expect(session(chunk(600), { reserveSampleWindow: 0 }).decide({ bufferS: 10, segmentIndex: 20 }).estimateKbps).toBeCloseTo(4000, 9);
  });

  test('it picks a lower rung than the window would, and an rtp that is not a positive number counts as none', () => {
    const withRule = session(chunk(600, Number.NaN)).decide({ bufferS: 10, segmentIndex: 20 });
    const without = session(chunk(600, Number.NaN), { reserveSampleWindow: 0 }).decide({ bufferS: 10, segmentIndex: 20 });
    expect(withRule.estimateKbps).toBeCloseTo(600, 9);
    expect(withRule.rung).toBeLessThan(without.rung);
  });

  test('bad values are refused', () => {
    expect(() => resolveSammyConfig({ reserveSampleWindow: 2.5 })).toThrow('invalid reserveSampleWindow: 2.5 (accepted: an integer in [0, 1000])');
    expect(() => resolveSammyConfig({ linkBoundPaceFraction: 1.5 })).toThrow('invalid linkBoundPaceFraction: 1.5 (accepted: a number in [0, 1])');
  });
});

describe('the pace under the link (linkPaceFraction)', () => {
  /** maxBufferS 60: full buffer 58 s; at 40 s the buffer-based pace is 1050 x (11 x 18/58 + 2.9 x 40/58) = 5684.5 kbps, the floor 1155. */
  const config = { maxBufferS: 60 };
  const chunk = (kbps: number, rtpKbps: number | null = null) => ({ sizeBytes: kbps * 250, downloadS: 2, phase: 'playing' as const, rtpKbps });
  function session(chunks: ReturnType<typeof chunk>[], overrides = {}): SammySession {
    const s = new SammySession({ ladder, config: { ...config, ...overrides } });
    s.addSample(chunk(8000));
    s.firstFrame();
    for (const c of chunks) s.addSample(c);
    return s;
  }
  const paceAt = (s: SammySession, bufferS: number) => s.decide({ bufferS, segmentIndex: 20 });

  test('with linkPaceMinBufferS buffered, the pace is linkPaceFraction of the slowest paced link-bound chunk of the window, never under the floor', () => {
    // 3000 kbps paced at 11000: the link set it; 5000 at 5000: the pace did.
    const s = session([chunk(3000, 11_000), chunk(5000, 5000), chunk(6000)]);
    const capped = paceAt(s, 40);
    expect(capped.pace.bufferBasedKbps).toBeCloseTo(5684.5, 1);
    expect(capped.pace.linkCapKbps).toBeCloseTo(1800, 9);
    expect(capped.pace.bound).toBe('link');
    expect(capped.paceKbps).toBeCloseTo(1800, 9);
    expect(capped.rtpKbps).toBe(1800);
    expect(capped.reason).toMatch(/pace 1800 kbps \(under the link\)/);
    // Under 40 s buffered (linkPaceMinBufferS) the buffer-based pace stands.
    const under = paceAt(s, 39.9);
    expect(under.pace.linkCapKbps).toBeNull();
    expect(under.pace.bound).toBe('buffer');
    // A cap under the floor gives way to the floor: 0.6 x 1000 = 600 < 1155.
    const floor = paceAt(session([chunk(1000, 11_000)]), 40);
    expect(floor.pace.linkCapKbps).toBeCloseTo(600, 9);
    expect(floor.pace.bound).toBe('floor');
    expect(floor.paceKbps).toBeCloseTo(floor.pace.floorKbps, 9);
    expect(floor.paceKbps).toBeCloseTo(1155, 9);
  });

  test('a link faster than the pace (every paced chunk near its rtp) leaves the pace buffer-based; unpaced chunks do not count', () => {
    // 3000 kbps at an rtp of 5600 is above half of it: the pace, not the link, held it.
    const s = session([chunk(4800, 5600), chunk(5000, 5600), chunk(3000, 5600)], { linkPaceWindow: 3 });
    expect(paceAt(s, 40).pace.bound).toBe('buffer');
    expect(paceAt(s, 40).pace.linkCapKbps).toBeNull();
    // Unpaced chunks (the startup's, in TCP's slow start) do not count: they say nothing of a pace above the link.
    expect(paceAt(session([chunk(4800, 5600)], { linkPaceWindow: 3 }), 40).pace.linkCapKbps).toBeNull();
    expect(paceAt(session([chunk(1000), chunk(4800, 5600)]), 40).pace.linkCapKbps).toBeNull();
  });

  test('the window bounds how far back it looks; linkPaceFraction 0 turns the rule off', () => {
    const chunks = [chunk(3000, 11_000), ...Array(4).fill(chunk(5000, 5000))];
    expect(paceAt(session(chunks, { linkPaceWindow: 4 }), 40).pace.linkCapKbps).toBeNull();
    expect(paceAt(session(chunks, { linkPaceWindow: 5 }), 40).pace.linkCapKbps).toBeCloseTo(1800, 9);
    expect(paceAt(session(chunks, { linkPaceFraction: 0 }), 40).pace.bound).toBe('buffer');
    expect(paceAt(session(chunks, { linkPaceFraction: 1, linkPaceMinBufferS: 0 }), 1).pace.linkCapKbps).toBeCloseTo(3000, 9);
  });

  test('bad values are refused', () => {
    expect(() => resolveSammyConfig({ linkPaceWindow: 0 })).toThrow('invalid linkPaceWindow: 0 (accepted: an integer in [1, 1000])');
    expect(() => resolveSammyConfig({ linkPaceFraction: -0.1 })).toThrow('invalid linkPaceFraction: -0.1 (accepted: a number in [0, 100])');
    expect(() => resolveSammyConfig({ linkPaceMinBufferS: Number.NaN })).toThrow('invalid linkPaceMinBufferS: null');
  });
});

describe('config', () => {
  test('defaults: the thesis parameters', () => {
    expect(DEFAULT_SAMMY_CONFIG).toMatchObject({ paceEmptyMultiplier: 11, paceFullMultiplier: 2.9 });
    expect(Object.isFrozen(DEFAULT_SAMMY_CONFIG)).toBe(true);
  });

  test('overrides field by field; unknown fields and bad values throw, naming them', () => {
    expect(resolveSammyConfig({ maxBufferS: 240 })).toEqual({ ...DEFAULT_SAMMY_CONFIG, maxBufferS: 240 });
    expect(() => resolveSammyConfig({ maxBuffer: 240 })).toThrow(/unknown Sammy parameter "maxBuffer"/);
    expect(() => resolveSammyConfig({ beta: 0 })).toThrow('invalid beta: 0 (accepted: a number in (0, 1])');
    expect(() => resolveSammyConfig({ lookaheadSegments: 2.5 })).toThrow(SammyConfigError);
    expect(() => resolveSammyConfig({ maxBufferS: '30' })).toThrow(/invalid maxBufferS: "30"/);
  });
});
