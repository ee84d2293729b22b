/**
 * Thesis 2.2.3: pacing can drive a throughput-based ABR into a downward spiral. The
 * example rule (dash.js's default at a low buffer) takes the minimum throughput x of
 * the last few chunks and picks the highest bitrate below c * x; paced at 1.5x the
 * *current* bitrate it measures 1.5 B, picks below 0.75 B, and steps down to the
 * lowest rung. Sammy paces relative to the *top* bitrate and never below Eq. 2.1, the
 * least throughput with which HYB keeps the top rung, so it does not spiral.
 */
import { spiralRung } from '../../src/abr/arms/spiral.js';
import { resolveSammyConfig } from '../../src/abr/config.js';
import { paceFor } from '../../src/abr/pace.js';
import { SammySession } from '../../src/abr/session.js';
import { cbrLadder, playLoop, vbrLadder, type LoopChunk } from './fixtures.js';

const LINK_KBPS = 40_000; // the thesis lab link
const TOP = 4;

function runThroughputRule(pace: (rung: number, bufferS: number, index: number) => number): LoopChunk[] {
  const ladder = cbrLadder();
  const measured: number[] = [];
  return playLoop({
    ladder,
    linkKbps: LINK_KBPS,
    maxBufferS: 30,
    segments: 40,
    choose: ({ index, bufferS }) => {
      const rung = spiralRung(ladder.bitratesKbps, measured);
      return { rung, paceKbps: pace(rung, bufferS, index) };
    },
    downloaded: (chunk) => void measured.push(chunk.throughputKbps),
  });
}

describe('downward spiral (thesis 2.2.3)', () => {
  test("dash.js's low-buffer rule paced at 1.5x the current bitrate spirals down to the lowest rung", () => {
    const ladder = cbrLadder();
    const chunks = runThroughputRule((rung) => 1.5 * ladder.bitratesKbps[rung]!);
    const rungs = chunks.map((c) => c.rung);
    expect(rungs.slice(0, 6)).toEqual([4, 3, 2, 1, 0, 0]);
    expect(rungs.slice(4).every((r) => r === 0)).toBe(true);
  });

  test('the same rule paced as Sammy paces (a multiple of the top bitrate) stays at the top', () => {
    const ladder = cbrLadder();
    const cfg = resolveSammyConfig();
    const chunks = runThroughputRule((_rung, bufferS, index) => paceFor(ladder, cfg, { bufferS, segmentIndex: index, maxRung: TOP }).rtpKbps);
    expect(chunks.every((c) => c.rung === TOP)).toBe(true);
  });

  /** Plays Sammy with the buffer-based rate switched off, so every paced chunk goes at the floor. */
  function sammyAtFloor(ladder: ReturnType<typeof cbrLadder>, floorHeadroom?: number): { chunks: LoopChunk[]; bounds: string[] } {
    const session = new SammySession({ ladder, config: { paceEmptyMultiplier: 0, paceFullMultiplier: 0, ...(floorHeadroom ? { floorHeadroom } : {}) } });
    const bounds: string[] = [];
    const chunks = playLoop({
      ladder,
      linkKbps: LINK_KBPS,
      maxBufferS: 30,
      segments: 55,
      choose: ({ index, bufferS }) => {
        const d = session.decide({ bufferS, segmentIndex: index });
        if (d.phase === 'playing') bounds.push(d.pace.bound);
        return { rung: d.rung, paceKbps: d.rtpKbps };
      },
      downloaded: (chunk, sizeBytes, downloadS, playing) => {
        session.addSample({ sizeBytes, downloadS, phase: playing ? 'playing' : 'initial' });
        if (!playing) session.firstFrame();
      },
    });
    return { chunks, bounds };
  }

  for (const [name, ladder] of [
    ['CBR', cbrLadder()],
    ['VBR', vbrLadder()],
  ] as const) {
    test(`Sammy paced exactly at its Eq. 2.1 floor keeps the top rung (${name} chunks)`, () => {
      const { chunks, bounds } = sammyAtFloor(ladder);
      const paced = chunks.slice(1);
      expect(chunks[0]!.rung).toBe(0); // no history: the no-history rule
      expect(bounds.every((b) => b === 'floor')).toBe(true);
      expect(paced.every((c) => c.paceKbps !== null && c.throughputKbps === c.paceKbps)).toBe(true);
      expect(paced.map((c) => c.rung)).toEqual(paced.map(() => TOP));
      // Paced at the floor the buffer settles where the floor meets the bitrate: no stall.
      expect(Math.min(...paced.map((c) => c.bufferAfterS))).toBeGreaterThan(0);
    });
  }

  test('without the floor headroom it still holds the top rung: the floor includes what an up-switch to the top needs', () => {
    const paced = sammyAtFloor(vbrLadder(), 1).chunks.slice(1);
    // The floor is at least the top rung's bitrate / upSwitchSafety, so the estimate at the
    // floor always lets the stability rule (back) up to the top, and Eq. 2.1 lets HYB keep it.
    expect(paced.map((c) => c.rung)).toEqual(paced.map(() => TOP));
  });
});
