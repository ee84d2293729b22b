import { HISTORY_KEY, InitialThroughputHistory, memoryStore, type KeyValueStore } from '../../src/abr/history.js';
import type { ThroughputSample } from '../../src/abr/throughput.js';

/** 1 MB in `s` seconds = 8000 / s kbps. */
const chunk = (s: number, phase: ThroughputSample['phase']): ThroughputSample => ({ sizeBytes: 1_000_000, downloadS: s, phase });

describe('initial-phase throughput history (thesis 2.4.1)', () => {
  test('records each session as its aggregate initial throughput and estimates the harmonic mean', () => {
    const store = memoryStore();
    const h = new InitialThroughputHistory(store, 10);
    expect(h.estimateKbps()).toBeNull();
    expect(h.recordSession([chunk(1, 'initial'), chunk(3, 'initial')])).toBeCloseTo(4000, 9); // 16000 kbit / 4 s
    expect(h.recordSession([chunk(1, 'initial')])).toBeCloseTo(8000, 9);
    expect(h.estimateKbps()).toBeCloseTo(2 / (1 / 4000 + 1 / 8000), 9);
    // Persisted: a second reader of the same store sees it.
    expect(new InitialThroughputHistory(store, 10).sessionsKbps()).toEqual([4000, 8000]);
  });

  test('never takes a playing-phase sample', () => {
    const store = memoryStore();
    const h = new InitialThroughputHistory(store, 10);
    expect(h.recordSession([chunk(100, 'playing'), chunk(100, 'playing')])).toBeNull();
    expect(store.getItem(HISTORY_KEY)).toBeNull();
    expect(h.recordSession([chunk(1, 'initial'), chunk(100, 'playing')])).toBeCloseTo(8000, 9);
    expect(h.sessionsKbps()).toEqual([8000]);
  });

  test('keeps the last historySize sessions', () => {
    const h = new InitialThroughputHistory(memoryStore(), 3);
    for (const s of [1, 2, 4, 8]) h.recordSession([chunk(s, 'initial')]);
    expect(h.sessionsKbps()).toEqual([4000, 2000, 1000]);
  });

  test('corrupt storage falls back to no history, and the next session replaces it', () => {
    for (const bad of ['{', '[]', '{"v":1,"sessionsKbps":[1,"x"]}', '{"v":2,"sessionsKbps":[1]}', '{"v":1,"sessionsKbps":[-5]}', 'null']) {
      const store = memoryStore();
      store.setItem(HISTORY_KEY, bad);
      const h = new InitialThroughputHistory(store, 10);
      expect(h.estimateKbps()).toBeNull();
      expect(h.problem).toBe('stored history is corrupt');
      h.recordSession([chunk(2, 'initial')]);
      expect(h.sessionsKbps()).toEqual([4000]);
      expect(h.problem).toBeNull();
    }
  });

  test('unavailable storage (absent, or throwing like a blocked localStorage) means no history, never an exception', () => {
    expect(new InitialThroughputHistory(null, 10).estimateKbps()).toBeNull();
    expect(new InitialThroughputHistory(null, 10).recordSession([chunk(1, 'initial')])).toBeNull();
    const throwing: KeyValueStore = {
      getItem: () => {
        throw new Error('SecurityError');
      },
      setItem: () => {
        throw new Error('QuotaExceededError');
      },
      removeItem: () => {
        throw new Error('SecurityError');
      },
    };
    const h = new InitialThroughputHistory(throwing, 10);
    expect(h.estimateKbps()).toBeNull();
    expect(h.problem).toMatch(/unreadable: SecurityError/);
    expect(h.recordSession([chunk(1, 'initial')])).toBeNull();
    expect(() => h.reset()).not.toThrow();
  });

  test('reset empties it', () => {
    const h = new InitialThroughputHistory(memoryStore(), 10);
    h.recordSession([chunk(1, 'initial')]);
    h.reset();
    expect(h.estimateKbps()).toBeNull();
    expect(h.sessionsKbps()).toEqual([]);
  });

  test('ignores unusable samples (no bytes, no time)', () => {
    const h = new InitialThroughputHistory(memoryStore(), 10);
    expect(h.recordSession([{ sizeBytes: 0, downloadS: 1, phase: 'initial' }, { sizeBytes: 10, downloadS: 0, phase: 'initial' }])).toBeNull();
  });
});
