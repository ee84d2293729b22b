import { DEFAULT_SAMMY_CONFIG, resolveSammyConfig } from '../../src/abr/config.js';
import { lookahead } from '../../src/abr/ladder.js';
import { bufferFraction, declaredFloorKbps, eq21FloorKbps, fullBufferS, paceFor, roundRtpKbps } from '../../src/abr/pace.js';
import { stableRung } from '../../src/abr/stability.js';
import { cbrLadder, seededRandom, vbrLadder } from './fixtures.js';

const ladder = cbrLadder();
const TOP = 4;
/**
 * The arithmetic below uses HYB's beta = 0.5 and T = 5 segments (D_T = 10 s), and no
 * reserve (Eq. 2.1 in the thesis's form); the reserve's bound has its own test.
 */
const NO_RESERVE = { bufferReserveFraction: 0 };
const cfg = resolveSammyConfig({ beta: 0.5, lookaheadSegments: 5, ...NO_RESERVE });

describe('pace rate (thesis 2.4.2)', () => {
  test('11x the top bitrate at an empty buffer, 2.9x at a full one', () => {
    const empty = paceFor(ladder, cfg, { bufferS: 0, segmentIndex: 0, maxRung: TOP });
    expect(empty.paceKbps).toBeCloseTo(11 * 1050, 9);
    expect(empty.rtpKbps).toBe(11600);
    expect(empty.bound).toBe('buffer');

    const full = paceFor(ladder, cfg, { bufferS: 30, segmentIndex: 0, maxRung: TOP });
    expect(full.paceKbps).toBeCloseTo(2.9 * 1050, 9);
    expect(full.rtpKbps).toBe(3100);
    expect(full.bound).toBe('buffer');
  });

  test('2.9x at the fullest buffer the player reaches: one segment below the target', () => {
    // The player requests only while buffer + one segment < target: at a 30 s target and
    // 2 s segments no request sees more than 28 s, so f is normalised to 28 s.
    const reachable = paceFor(ladder, cfg, { bufferS: 28, segmentIndex: 0, maxRung: TOP });
    expect(reachable.bufferBasedKbps).toBeCloseTo(2.9 * 1050, 9);
    expect(reachable.rtpKbps).toBe(3100);
    expect(paceFor(ladder, cfg, { bufferS: 14, segmentIndex: 0, maxRung: TOP }).paceKbps).toBeCloseTo(1050 * (11 * 0.5 + 2.9 * 0.5), 9);
    // A target within one segment is reached itself (the player then ignores the segment).
    const short = resolveSammyConfig({ maxBufferS: 2, beta: 0.5, lookaheadSegments: 5 });
    expect(paceFor(ladder, short, { bufferS: 1, segmentIndex: 0, maxRung: TOP }).bufferBasedKbps).toBeCloseTo(1050 * (11 * 0.5 + 2.9 * 0.5), 9);
    expect(fullBufferS(30, 2)).toBe(28);
    expect(fullBufferS(2, 2)).toBe(2);
  });

  test('linear in the buffer fraction between the two, clamped outside [0, max]', () => {
    expect(paceFor(ladder, cfg, { bufferS: 7, segmentIndex: 0, maxRung: TOP }).rtpKbps).toBe(9500); // f = 7 / 28: 1050 * 8.975 = 9423.75
    expect(paceFor(ladder, cfg, { bufferS: 300, segmentIndex: 0, maxRung: TOP }).paceKbps).toBeCloseTo(3045, 9);
    expect(paceFor(ladder, cfg, { bufferS: -3, segmentIndex: 0, maxRung: TOP }).paceKbps).toBeCloseTo(11550, 9);
    expect(bufferFraction(Number.NaN, 30)).toBe(0);
  });

  test('"top" is the highest rung the player may choose now: a cap lowers the pace', () => {
    const capped = paceFor(ladder, cfg, { bufferS: 0, segmentIndex: 0, maxRung: 2 });
    expect(capped.topKbps).toBe(500);
    expect(capped.rtpKbps).toBe(5500);
  });

  test('Eq. 2.1: top / beta / (1 + B_0 / D_T)', () => {
    expect(eq21FloorKbps(1050, 0.5, 0, 10)).toBeCloseTo(2100, 9);
    expect(eq21FloorKbps(1050, 0.5, 10, 10)).toBeCloseTo(1050, 9);
    expect(eq21FloorKbps(1050, 0.25, 30, 10)).toBeCloseTo(1050, 9);
    const p = paceFor(ladder, cfg, { bufferS: 10, segmentIndex: 0, maxRung: TOP });
    expect(p.eq21Kbps).toBeCloseTo(1050, 9);
    // CBR: the lookahead form over real sizes is the same number.
    expect(p.eq21LookaheadKbps).toBeCloseTo(1050, 9);
    expect(p.floorKbps).toBeCloseTo(1050 * DEFAULT_SAMMY_CONFIG.floorHeadroom, 9);
  });

  test('the floor takes over when the buffer-based rate would fall below it (small beta)', () => {
    const lowBeta = resolveSammyConfig({ beta: 0.05, lookaheadSegments: 5, ...NO_RESERVE });
    // Full buffer: buffer-based 3045; floor 1050 / 0.05 / (1 + 30/10) * 1.1 = 5775.
    const p = paceFor(ladder, lowBeta, { bufferS: 30, segmentIndex: 0, maxRung: TOP });
    expect(p.bound).toBe('floor');
    expect(p.paceKbps).toBeCloseTo(5775, 6);
    expect(p.rtpKbps).toBe(5800);
  });

  test('the lookahead floor uses the real upcoming sizes (VBR chunks above nominal raise it)', () => {
    const vbr = vbrLadder();
    const p = paceFor(vbr, resolveSammyConfig({ beta: 0.05, lookaheadSegments: 5, ...NO_RESERVE }), { bufferS: 30, segmentIndex: 3, maxRung: TOP });
    const sizes = vbr.segmentSizesBytes[TOP]!.slice(3, 8);
    const sizeKbit = (sizes.reduce((a, b) => a + b, 0) * 8) / 1000;
    expect(p.eq21LookaheadKbps).toBeCloseTo(sizeKbit / (0.05 * (30 + 10)), 6);
    expect(p.floorKbps).toBeCloseTo(Math.max(p.eq21Kbps, p.eq21LookaheadKbps) * 1.1, 6);
  });

  test("with a reserve the floor covers the up-switch's reserve test: S_T / (beta (B_0 + D_T - K))", () => {
    // R = 0.4 x 30 = 12 s, g = 0.25, pace multipliers 1x so that the floor binds.
    const reserved = resolveSammyConfig({ beta: 0.5, lookaheadSegments: 5, bufferReserveFraction: 0.4, reserveFillRate: 0.25, paceEmptyMultiplier: 1, paceFullMultiplier: 1 });
    // B_0 = 4: K = min(4 + 2.5, 12) = 6.5; 10500 / (0.5 x 7.5) = 2800, x 1.1.
    const under = paceFor(ladder, reserved, { bufferS: 4, segmentIndex: 0, maxRung: TOP });
    expect(under.upSwitchKbps).toBeCloseTo(2800, 9);
    expect(under.floorKbps).toBeCloseTo(3080, 9);
    expect(under.bound).toBe('floor');
    // B_0 = 20: K = R = 12; 10500 / (0.5 x 18) = 1166.7 (Eq. 2.1 alone: 700).
    const above = paceFor(ladder, reserved, { bufferS: 20, segmentIndex: 0, maxRung: TOP });
    expect(above.eq21Kbps).toBeCloseTo(700, 9);
    expect(above.upSwitchKbps).toBeCloseTo(10500 / 9, 9);
  });

  test('an estimate at the floor lets the stability rule climb back to the top at any buffer (random inputs)', () => {
    const rnd = seededRandom(19);
    for (let i = 0; i < 2000; i++) {
      const c = resolveSammyConfig({ bufferReserveFraction: rnd() * 0.9, reserveFillRate: rnd() * 0.9, maxBufferS: 10 + rnd() * 230 });
      const bufferS = rnd() * c.maxBufferS;
      const p = paceFor(ladder, c, { bufferS, segmentIndex: 0, maxRung: TOP });
      const choice = stableRung(ladder, { bufferS, segmentIndex: 0, estimateKbps: p.floorKbps, maxRung: TOP, beta: c.beta, lookaheadSegments: c.lookaheadSegments, currentRung: TOP - 1 }, c);
      expect(choice.rung).toBe(TOP);
    }
  });

  test('never below the Eq. 2.1 floor, and rtp never below the pace (random inputs)', () => {
    const rnd = seededRandom(7);
    const vbr = vbrLadder();
    for (let i = 0; i < 2000; i++) {
      const c = resolveSammyConfig({
        beta: 0.02 + rnd() * 0.98,
        paceEmptyMultiplier: rnd() * 12,
        paceFullMultiplier: rnd() * 4,
        lookaheadSegments: 1 + Math.floor(rnd() * 10),
        maxBufferS: 5 + rnd() * 240,
      });
      const maxRung = Math.floor(rnd() * 5);
      const bufferS = rnd() * 300;
      const segmentIndex = Math.floor(rnd() * 70);
      const p = paceFor(vbr, c, { bufferS, segmentIndex, maxRung });
      const dT = lookahead(vbr, maxRung, segmentIndex, c.lookaheadSegments).durationS;
      expect(p.paceKbps).toBeGreaterThanOrEqual(eq21FloorKbps(vbr.bitratesKbps[maxRung]!, c.beta, bufferS, dT) - 1e-9);
      expect(p.rtpKbps).toBeGreaterThanOrEqual(p.paceKbps);
      expect(p.rtpKbps % 100).toBe(0);
    }
  });

  test('rtp rounds up to the CTA-5004 100 kbps step', () => {
    expect(roundRtpKbps(3045, 100)).toBe(3100);
    expect(roundRtpKbps(3000, 100)).toBe(3000);
    expect(roundRtpKbps(3000.0000001, 100)).toBe(3000);
    expect(roundRtpKbps(3000.01, 100)).toBe(3100);
    expect(roundRtpKbps(12, 100)).toBe(100);
  });

  test('the declared floor is the floor rounded up, never above the rtp (a floor a hair over its rounded rtp)', () => {
    expect(declaredFloorKbps(1154.2, 1200)).toBe(1155);
    expect(declaredFloorKbps(1200, 1200)).toBe(1200);
    expect(declaredFloorKbps(3000.0000001, roundRtpKbps(3000.0000001, 100))).toBe(3000);
  });
});
