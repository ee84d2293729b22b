import { pairedDifference } from '../../src/analysis/paired.js';
import type { TrialRecord } from '../../src/analysis/result.js';

function session(trial: number, arm: string, metrics: Record<string, number | null>, over: Partial<TrialRecord> = {}): TrialRecord {
  return { trial, arm, neighbour: 'none', experiment: 'none', error: null, metrics, ...over } as unknown as TrialRecord;
}

describe('pairedDifference', () => {
  test("each arm's session against control's of the same trial and experiment: the mean difference, its t interval and the signs", () => {
    const trials = [
      session(1, 'control', { rebufferS: 10 }), session(1, 'sammy', { rebufferS: 4 }),
      session(2, 'sammy', { rebufferS: 1 }), session(2, 'control', { rebufferS: 0 }),
      session(3, 'control', { rebufferS: 2 }), session(3, 'sammy', { rebufferS: 0 }),
      // Another experiment's sessions are not paired with these.
      session(1, 'control', { rebufferS: 100 }, { neighbour: 'udp', experiment: 'udp' }),
    ];
    const d = pairedDifference(trials, 'none', 'sammy', 'rebufferS');
    // Differences -6, +1, -2: mean -7/3, s = sqrt(((-6+7/3)^2 + (1+7/3)^2 + (-2+7/3)^2) / 2).
    expect(d).toMatchObject({ n: 3, lower: 2, higher: 1 });
    expect(d.mean).toBeCloseTo(-7 / 3, 9);
    const sd = Math.sqrt(((-6 + 7 / 3) ** 2 + (1 + 7 / 3) ** 2 + (-2 + 7 / 3) ** 2) / 2);
    const half = 4.302652729911275 * (sd / Math.sqrt(3)); // t(0.975, 2)
    expect(d.ci95![0]).toBeCloseTo(-7 / 3 - half, 6);
    expect(d.ci95![1]).toBeCloseTo(-7 / 3 + half, 6);
    expect(pairedDifference(trials, 'udp', 'sammy', 'rebufferS')).toMatchObject({ n: 0, mean: null, ci95: null });
  });

  test('a trial without both sessions, a failed session or a missing value is left out', () => {
    const trials = [
      session(1, 'control', { avgBitrateKbps: 500 }), session(1, 'sammy', { avgBitrateKbps: 700 }),
      session(2, 'sammy', { avgBitrateKbps: 900 }),
      session(3, 'control', { avgBitrateKbps: 500 }), session(3, 'sammy', { avgBitrateKbps: 100 }, { error: 'boom' }),
      session(4, 'control', { avgBitrateKbps: null }), session(4, 'sammy', { avgBitrateKbps: 600 }),
    ];
    expect(pairedDifference(trials, 'none', 'sammy', 'avgBitrateKbps')).toEqual({ mean: 200, ci95: [200, 200], n: 1, lower: 0, higher: 1 });
  });
});
