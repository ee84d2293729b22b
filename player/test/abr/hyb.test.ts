import { hybRung, predictedBufferS } from '../../src/abr/hyb.js';
import { lookahead } from '../../src/abr/ladder.js';
import { cbrLadder, seededRandom, vbrLadder } from './fixtures.js';

const ladder = cbrLadder();
const base = { segmentIndex: 0, maxRung: 4, beta: 0.5, lookaheadSegments: 5 };

describe('HYB with lookahead (thesis 2.4.2)', () => {
  test('exact rungs for constructed inputs', () => {
    // beta * x = 1000 kbps, D_T = 10 s: B_T = B_0 + 10 - r * 10 / 1000 > 0.
    expect(hybRung(ladder, { ...base, bufferS: 0, estimateKbps: 2000 })).toEqual({ rung: 3, predictedBufferS: 2.5, noSafeRung: false });
    expect(hybRung(ladder, { ...base, bufferS: 1, estimateKbps: 2000 }).rung).toBe(4); // 1 + 10 - 10.5 = 0.5
    expect(hybRung(ladder, { ...base, bufferS: 0.5, estimateKbps: 2000 }).rung).toBe(3); // 0.5 + 10 - 10.5 = 0: not > 0
    expect(hybRung(ladder, { ...base, bufferS: 0, estimateKbps: 700 }).rung).toBe(1); // 350 kbps: 300 fits, 500 does not
  });

  test('the buffer lets a low estimate carry a high rung: r <= beta x (1 + B_0 / D_T)', () => {
    // beta x = 200, (1 + 20 / 10) = 3: r <= 600 -> rung 2 (500).
    expect(hybRung(ladder, { ...base, bufferS: 20, estimateKbps: 400 }).rung).toBe(2);
    // (1 + 50 / 10) = 6: r <= 1200 -> top.
    expect(hybRung(ladder, { ...base, bufferS: 50, estimateKbps: 400 }).rung).toBe(4);
  });

  test('no rung keeps B_T > 0: the lowest, flagged', () => {
    const r = hybRung(ladder, { ...base, bufferS: 0, estimateKbps: 100 });
    expect(r.rung).toBe(0);
    expect(r.noSafeRung).toBe(true);
    expect(r.predictedBufferS).toBeCloseTo(10 - 1500 / 50, 9);
  });

  test('a cap is respected', () => {
    expect(hybRung(ladder, { ...base, maxRung: 2, bufferS: 30, estimateKbps: 1e6 }).rung).toBe(2);
  });

  test('uses the real sizes of the upcoming chunks, not the nominal bitrate', () => {
    const vbr = vbrLadder();
    // Find a window whose top-rung chunks are over nominal: there, nominal math says "top" but the sizes do not.
    const heavy = [...Array(50).keys()].find((i) => lookahead(vbr, 4, i, 5).sizeKbit > 1.15 * 1050 * 10)!;
    expect(heavy).toBeDefined();
    const x = 2 * 1050 * 1.05; // nominal: B_T = 10 - 10500 / 1102.5 = 0.48 > 0
    expect(hybRung(ladder, { ...base, segmentIndex: heavy, bufferS: 0, estimateKbps: x }).rung).toBe(4);
    expect(hybRung(vbr, { ...base, segmentIndex: heavy, bufferS: 0, estimateKbps: x }).rung).toBeLessThan(4);
  });

  test('the lookahead shortens at the end of the video', () => {
    const la = lookahead(ladder, 4, 58, 5);
    expect(la.segments).toBe(2);
    expect(la.durationS).toBe(4);
    expect(lookahead(ladder, 4, 99, 5).segments).toBe(1);
  });
});

describe("Theorem 1 (thesis 2.4.3): B_{T+1} = B_0 + D_T - D_T * rbar / xbar", () => {
  test('holds for any chunk durations, sizes and download times', () => {
    const rnd = seededRandom(42);
    for (let trial = 0; trial < 200; trial++) {
      const T = 1 + Math.floor(rnd() * 30);
      const B0 = rnd() * 60;
      let b = B0;
      let D = 0;
      let S = 0;
      let downloadTotalS = 0;
      for (let t = 0; t < T; t++) {
        const d = 1 + rnd() * 5;
        const s = 100 + rnd() * 20_000; // kbit
        const delta = 0.05 + rnd() * 8;
        b = b + d - delta; // Eq. 2.2 (no stall, no full buffer: the theorem's setting)
        D += d;
        S += s;
        downloadTotalS += delta;
      }
      const rbar = S / D; // Eq. 2.8
      const xbar = S / downloadTotalS; // Eq. 2.9
      expect(b).toBeCloseTo(B0 + D - (D * rbar) / xbar, 9);
      expect(b).toBeCloseTo(predictedBufferS(B0, D, S, xbar), 9);
    }
  });

  test("HYB's prediction is the buffer a player would have if every chunk came at beta * x", () => {
    const vbr = vbrLadder();
    const beta = 0.5;
    const x = 3000;
    for (const rung of [0, 2, 4]) {
      let b = 4;
      for (let i = 10; i < 15; i++) b += 2 - (vbr.segmentSizesBytes[rung]![i]! * 8) / 1000 / (beta * x);
      const la = lookahead(vbr, rung, 10, 5);
      expect(predictedBufferS(4, la.durationS, la.sizeKbit, beta * x)).toBeCloseTo(b, 9);
    }
  });
});
