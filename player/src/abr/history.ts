/**
 * The device's initial-phase throughput history (thesis 2.4.1). Sammy paces the
 * playing phase, so playing-phase throughput says little about how fast a new session
 * can start; the history therefore keeps, per session, only the throughput of the
 * chunks fetched before the first frame (unpaced). Experiments reset it for every arm
 * (thesis 2.5.6: a missing history biased an A/B test for a week).
 *
 * Storage sits behind {@link KeyValueStore} (the browser's `localStorage` has this
 * shape); when it is missing, throws, or holds something unreadable, the estimate is
 * null and the caller applies the no-history rule.
 */
import { aggregateKbps, harmonicMean, isUsableSample, type ThroughputSample } from './throughput.js';

/** The subset of the Web Storage API the history needs. */
export interface KeyValueStore {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
  removeItem(key: string): void;
}

export const HISTORY_KEY = 'sammy.initialThroughputHistory';
const FORMAT_VERSION = 1;

interface StoredHistory {
  v: typeof FORMAT_VERSION;
  /** One entry per session, oldest first. */
  sessionsKbps: number[];
}

/** An in-memory store (tests, the simulator, browsers without storage). */
export function memoryStore(): KeyValueStore {
  const map = new Map<string, string>();
  return {
    getItem: (key) => map.get(key) ?? null,
    setItem: (key, value) => void map.set(key, value),
    removeItem: (key) => void map.delete(key),
  };
}

function parseStored(text: string | null): number[] | null {
  if (text === null) return [];
  try {
    const obj = JSON.parse(text) as Partial<StoredHistory>;
    if (obj?.v !== FORMAT_VERSION || !Array.isArray(obj.sessionsKbps)) return null;
    if (!obj.sessionsKbps.every((x) => typeof x === 'number' && Number.isFinite(x) && x > 0)) return null;
    return obj.sessionsKbps;
  } catch {
    return null;
  }
}

export class InitialThroughputHistory {
  /** Why the last read or write failed (for logs); null when storage works. */
  problem: string | null = null;

  constructor(
    private readonly store: KeyValueStore | null,
    private readonly historySize: number,
    private readonly key: string = HISTORY_KEY,
  ) {}

  /** Stored sessions' initial throughputs, oldest first; null when storage is unavailable or corrupt. */
  sessionsKbps(): number[] | null {
    if (!this.store) {
      this.problem = 'no storage';
      return null;
    }
    let text: string | null;
    try {
      text = this.store.getItem(this.key);
    } catch (err) {
      this.problem = `storage unreadable: ${(err as Error).message}`;
      return null;
    }
    const sessions = parseStored(text);
    this.problem = sessions === null ? 'stored history is corrupt' : null;
    return sessions;
  }

  /** Harmonic mean of the stored sessions; null (no history) when there are none. */
  estimateKbps(): number | null {
    const sessions = this.sessionsKbps();
    return sessions ? harmonicMean(sessions) : null;
  }

  /**
   * Adds one session: the aggregate throughput of its initial-phase samples. Samples of
   * any other phase are dropped here, whatever the caller passes: paced throughput must
   * never enter the history. Returns the recorded value, or null if nothing was recorded.
   */
  recordSession(samples: readonly ThroughputSample[]): number | null {
    const initial = samples.filter((s) => s.phase === 'initial' && isUsableSample(s));
    const kbps = aggregateKbps(initial);
    if (kbps === null || !this.store) return null;
    // A corrupt record is replaced, not merged.
    const kept = (this.sessionsKbps() ?? []).concat(kbps).slice(-this.historySize);
    try {
      this.store.setItem(this.key, JSON.stringify({ v: FORMAT_VERSION, sessionsKbps: kept } satisfies StoredHistory));
    } catch (err) {
      this.problem = `storage unwritable: ${(err as Error).message}`;
      return null;
    }
    return kbps;
  }

  reset(): void {
    try {
      this.store?.removeItem(this.key);
    } catch (err) {
      this.problem = `storage unwritable: ${(err as Error).message}`;
    }
  }
}
