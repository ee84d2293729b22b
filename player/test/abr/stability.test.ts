import { bufferReserve, resolveSammyConfig } from '../../src/abr/config.js';
import { hybRung } from '../../src/abr/hyb.js';
import { SammySession } from '../../src/abr/session.js';
import { keptBufferS, stableRung, type StabilityRule } from '../../src/abr/stability.js';
import { lookahead } from '../../src/abr/ladder.js';
import { cbrLadder, playLoop, seededRandom, vbrLadder } from './fixtures.js';

const ladder = cbrLadder();
const base = { segmentIndex: 0, maxRung: 4, beta: 0.5, lookaheadSegments: 5 };
const rule: StabilityRule = { upSwitchSafety: 1, bufferReserveFraction: 0, reserveFillRate: 0, maxBufferS: 30 };

describe('stable rung choice', () => {
  test('an up-switch HYB would make on buffer alone is held when the link does not sustain the rung', () => {
    // beta x = 400, r <= 400 (1 + 20 / 10) = 1200: HYB takes the top, but 1050 > x = 800.
    expect(hybRung(ladder, { ...base, bufferS: 20, estimateKbps: 800 }).rung).toBe(4);
    expect(stableRung(ladder, { ...base, bufferS: 20, estimateKbps: 800, currentRung: 3 }, rule)).toEqual({
      rung: 3,
      predictedBufferS: 20 + 10 - 7500 / 400,
      noSafeRung: false,
      heldBelowRung: 4,
    });
  });

  test('a sustained up-switch goes through; upSwitchSafety discounts the estimate', () => {
    const up = stableRung(ladder, { ...base, bufferS: 20, estimateKbps: 1100, currentRung: 3 }, rule);
    expect(up).toEqual({ rung: 4, predictedBufferS: 20 + 10 - 10500 / 550, noSafeRung: false, heldBelowRung: null });
    expect(stableRung(ladder, { ...base, bufferS: 20, estimateKbps: 1100, currentRung: 3 }, { ...rule, upSwitchSafety: 0.9 }).rung).toBe(3);
  });

  test('it jumps to the highest sustained rung at once, within HYB', () => {
    // beta x = 400, B_0 = 10: HYB allows 750 (B_T = 1.25 s); 750 <= 800 is sustained.
    expect(stableRung(ladder, { ...base, bufferS: 10, estimateKbps: 800, currentRung: 0 }, rule)).toEqual({ rung: 3, predictedBufferS: 1.25, noSafeRung: false, heldBelowRung: null });
    // At x = 700 HYB allows 750 (B_T = 30 - 7500 / 350 = 8.6 s; 1050 gives exactly 0); the link sustains only 500.
    expect(stableRung(ladder, { ...base, bufferS: 20, estimateKbps: 700, currentRung: 0 }, rule)).toEqual({
      rung: 2,
      predictedBufferS: 20 + 10 - 5000 / 350,
      noSafeRung: false,
      heldBelowRung: 3,
    });
  });

  test('down-switches and the first chunk are HYB\'s own', () => {
    // beta x = 400, B_0 = 2: 500 drains (B_T = -0.5 s), 300 keeps 4.5 s.
    expect(stableRung(ladder, { ...base, bufferS: 2, estimateKbps: 800, currentRung: 4 }, rule)).toEqual({ rung: 1, predictedBufferS: 4.5, noSafeRung: false, heldBelowRung: null });
    expect(stableRung(ladder, { ...base, bufferS: 20, estimateKbps: 800, currentRung: null }, rule).rung).toBe(4);
    expect(stableRung(ladder, { ...base, bufferS: 0, estimateKbps: 100, currentRung: 2 }, rule)).toMatchObject({ rung: 0, noSafeRung: true });
  });

  test('Theorem 1 safety: never above HYB, and a rung it keeps is one HYB finds safe (random inputs)', () => {
    const random = seededRandom(11);
    const vbr = vbrLadder();
    for (let i = 0; i < 2000; i++) {
      const input = {
        ...base,
        segmentIndex: Math.floor(random() * 60),
        bufferS: random() * 40,
        estimateKbps: 50 + random() * 3000,
        currentRung: Math.floor(random() * 5),
      };
      const r = { ...rule, upSwitchSafety: 0.5 + random() };
      const hyb = hybRung(vbr, input);
      const stable = stableRung(vbr, input, r);
      expect(stable.rung).toBeLessThanOrEqual(hyb.rung);
      if (!hyb.noSafeRung) expect(stable.predictedBufferS).toBeGreaterThan(0);
    }
  });
});

describe("the up-switch's reserve (R = 0.4 x 30 s = 12 s, g = 0.25)", () => {
  const reserved: StabilityRule = { ...rule, bufferReserveFraction: 0.4, reserveFillRate: 0.25 };

  test('under R an up-switch must grow the buffer by g per second of lookahead', () => {
    // beta x = 1000, B_0 = 2, D_T = 10: K = min(2 + 2.5, 12) = 4.5. B_T: 1050 -> 1.5, 750 -> 4.5 (not > 4.5), 500 -> 7.
    const input = { ...base, bufferS: 2, estimateKbps: 2000, currentRung: 0 };
    expect(stableRung(ladder, input, rule).rung).toBe(4);
    expect(stableRung(ladder, input, reserved)).toEqual({ rung: 2, predictedBufferS: 7, noSafeRung: false, heldBelowRung: 4 });
  });

  test('above R an up-switch may spend the buffer down to R, not below', () => {
    // beta x = 550, D_T = 10: the top leaves B_0 + 10 - 19.09; it needs B_0 > 21.09 to keep 12 s.
    expect(stableRung(ladder, { ...base, bufferS: 20, estimateKbps: 1100, currentRung: 3 }, reserved)).toMatchObject({ rung: 3, heldBelowRung: 4 });
    expect(stableRung(ladder, { ...base, bufferS: 22, estimateKbps: 1100, currentRung: 3 }, reserved)).toMatchObject({ rung: 4, heldBelowRung: null });
  });

  test('holds and down-switches stay HYB\'s: the reserve never forces a switch down', () => {
    // beta x = 400, B_0 = 20: HYB keeps the top (B_T = 3.75 s > 0) though it leaves less than R.
    expect(stableRung(ladder, { ...base, bufferS: 20, estimateKbps: 800, currentRung: 4 }, reserved)).toMatchObject({ rung: 4, predictedBufferS: 3.75 });
    expect(stableRung(ladder, { ...base, bufferS: 2, estimateKbps: 800, currentRung: 4 }, reserved)).toEqual(stableRung(ladder, { ...base, bufferS: 2, estimateKbps: 800, currentRung: 4 }, rule));
  });

  test('never above the choice without it, and every up-switch keeps the reserve (random inputs)', () => {
    const random = seededRandom(23);
    const vbr = vbrLadder();
    for (let i = 0; i < 2000; i++) {
      const input = { ...base, segmentIndex: Math.floor(random() * 60), bufferS: random() * 40, estimateKbps: 50 + random() * 3000, currentRung: Math.floor(random() * 5) };
      const r = { ...reserved, bufferReserveFraction: random() * 0.9, reserveFillRate: random() * 0.9 };
      const withReserve = stableRung(vbr, input, r);
      expect(withReserve.rung).toBeLessThanOrEqual(stableRung(vbr, input, { ...r, bufferReserveFraction: 0 }).rung);
      if (withReserve.rung > input.currentRung) {
        const dT = lookahead(vbr, withReserve.rung, input.segmentIndex, input.lookaheadSegments).durationS;
        expect(withReserve.predictedBufferS).toBeGreaterThan(keptBufferS(input.bufferS, dT, bufferReserve(r)));
      }
    }
  });
});

describe('a session on a constant link between two rungs (VBR chunks)', () => {
  /** Rung switches over 300 chunks at 800 kbps, 30 s target. */
  function switches(config: Partial<ReturnType<typeof resolveSammyConfig>>): number {
    const vbr = vbrLadder(undefined, 300);
    const session = new SammySession({ ladder: vbr, config });
    const chunks = playLoop({
      ladder: vbr,
      linkKbps: 800,
      maxBufferS: 30,
      segments: 300,
      choose: ({ index, bufferS }) => {
        const d = session.decide({ bufferS, segmentIndex: index });
        return { rung: d.rung, paceKbps: d.rtpKbps };
      },
      downloaded: (_chunk, sizeBytes, downloadS, playing) => {
        session.addSample({ sizeBytes, downloadS, phase: playing ? 'playing' : 'initial' });
        if (!playing) session.firstFrame();
      },
    });
    let n = 0;
    for (let i = 1; i < chunks.length; i++) if (chunks[i]!.rung !== chunks[i - 1]!.rung) n++;
    return n;
  }

  test('HYB alone flaps; the stable rule settles', () => {
    // upSwitchSafety 100 never binds and no reserve: HYB's own choice.
    const hybOnly = switches({ upSwitchSafety: 100, bufferReserveFraction: 0 });
    const stable = switches({ bufferReserveFraction: 0 });
    expect(hybOnly).toBe(9);
    expect(stable).toBe(2);
    // With the reserve and its cautious estimate (every chunk here measures the link): no flapping either.
    expect(switches({})).toBe(2);
  });
});
