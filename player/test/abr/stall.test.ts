import { resolveSammyConfig } from '../../src/abr/config.js';
import { SammySession } from '../../src/abr/session.js';
import { stallVerdict, type DownloadProgress, type StallRule } from '../../src/abr/stall.js';
import { cbrLadder } from './fixtures.js';

// Lab rungs 150, 300, 500, 750, 1050 kbps, 2 s segments: 300, 600, 1000, 1500, 2100 kbit each.
const ladder = cbrLadder();
const rule: StallRule = { stallAbandon: 1, stallReserveS: 2, stallMinElapsedS: 2 };
const kbitToBytes = (kbit: number) => (kbit * 1000) / 8;
const topChunk = (over: Partial<DownloadProgress>): DownloadProgress => ({ segmentIndex: 5, rung: 4, loadedBytes: 0, elapsedS: 2, bufferS: 10, ...over });

describe('the stalled-download rule', () => {
  test('a chunk that arrives with the reserve left runs on', () => {
    // 2000 of 2100 kbit in 2 s (1000 kbps): the rest in 0.1 s, 9.9 s left.
    expect(stallVerdict(ladder, rule, topChunk({ loadedBytes: kbitToBytes(2000) }))).toBeNull();
  });

  test('a chunk that would drain the buffer is given up for the lowest rung when no rung arrives in time', () => {
    // 50 kbit in 4 s: 12.5 kbps, the rest (2050 kbit) in 164 s; even rung 0 takes 24 s, sooner than 164.
    const v = stallVerdict(ladder, rule, topChunk({ loadedBytes: kbitToBytes(50), elapsedS: 4 }));
    expect(v).toMatchObject({ rung: 0, rateKbps: 12.5, finishS: 164 });
    expect(v!.reason).toContain('refetch at rung 0');
  });

  test('it takes the highest rung that leaves the reserve', () => {
    // 500 kbps, the rest (1100 kbit) in 2.2 s: 4 - 2.2 < 2. Rung 3 leaves 4 - 3 = 1 s, rung 2 leaves 4 - 2 = 2 s.
    expect(stallVerdict(ladder, rule, topChunk({ loadedBytes: kbitToBytes(1000), bufferS: 4 }))?.rung).toBe(2);
    // With 5 s buffered rung 3 leaves the reserve too, but 5 - 2.2 = 2.8 s: the chunk itself does.
    expect(stallVerdict(ladder, rule, topChunk({ loadedBytes: kbitToBytes(1000), bufferS: 5 }))).toBeNull();
  });

  test('it does not start over when the rest of the chunk comes sooner than any refetch', () => {
    // 2000 kbit in 4 s (500 kbps): the rest in 0.2 s; rung 0 anew would take 0.6 s.
    expect(stallVerdict(ladder, rule, topChunk({ loadedBytes: kbitToBytes(2000), elapsedS: 4, bufferS: 1 }))).toBeNull();
  });

  test('no byte at all since the request: the lowest rung', () => {
    expect(stallVerdict(ladder, rule, topChunk({ loadedBytes: 0, elapsedS: 3, bufferS: 20 }))).toMatchObject({ rung: 0, rateKbps: 0, finishS: Infinity });
  });

  test('it waits stallMinElapsedS, is off with stallAbandon 0, and leaves the lowest rung and bad input alone', () => {
    const stalled = topChunk({ loadedBytes: kbitToBytes(50), elapsedS: 4 });
    expect(stallVerdict(ladder, rule, { ...stalled, elapsedS: 1.9 })).toBeNull();
    expect(stallVerdict(ladder, { ...rule, stallAbandon: 0 }, stalled)).toBeNull();
    expect(stallVerdict(ladder, rule, { ...stalled, rung: 0 })).toBeNull();
    expect(stallVerdict(ladder, rule, { ...stalled, segmentIndex: 999 })).toBeNull();
    expect(stallVerdict(ladder, rule, { ...stalled, elapsedS: Number.NaN })).toBeNull();
    expect(stallVerdict(ladder, rule, { ...stalled, loadedBytes: kbitToBytes(2100) })).toBeNull();
  });

  test('the config checks its fields', () => {
    expect(() => resolveSammyConfig({ stallAbandon: 2 })).toThrow(/stallAbandon/);
    expect(() => resolveSammyConfig({ stallReserveS: -1 })).toThrow(/stallReserveS/);
  });
});

describe('SammySession.checkDownload', () => {
  const stalled = { segmentIndex: 3, rung: 4, loadedBytes: kbitToBytes(50), elapsedS: 4, bufferS: 10 };

  function playingSession(): SammySession {
    const s = new SammySession({ ladder, config: { stallReserveS: 2, stallMinElapsedS: 2 } });
    for (let i = 0; i < 3; i++) s.addSample({ sizeBytes: kbitToBytes(2100), downloadS: 0.5, phase: i === 0 ? 'initial' : 'playing' });
    s.firstFrame();
    return s;
  }

  test('not before the first frame: the buffer does not drain yet', () => {
    const s = new SammySession({ ladder });
    expect(s.checkDownload(stalled)).toBeNull();
  });

  test('once per segment; the partial download becomes a sample, so the next rung is low', () => {
    const s = playingSession();
    expect(s.decide({ bufferS: 10, segmentIndex: 3 }).rung).toBe(4);
    expect(s.checkDownload(stalled)?.rung).toBe(0);
    expect(s.checkDownload(stalled)).toBeNull();
    // The latest sample is 12.5 kbps: the estimate is capped at 1.5 x that.
    expect(s.estimate().kbps).toBeCloseTo(18.75, 6);
    expect(s.decide({ bufferS: 8, segmentIndex: 4 }).rung).toBe(0);
    expect(s.checkDownload({ ...stalled, segmentIndex: 4 })?.rung).toBe(0);
  });
});
