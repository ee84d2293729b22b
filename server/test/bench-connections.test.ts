// The connections bench's reading of a server's telemetry lines (bench/connections.ts ratesOf)
// and the bench's quantiles (bench/kit.ts).
import { ratesOf, RTP_KBPS } from '../bench/connections.js';
import { median, quantile } from '../bench/kit.js';
import type { ResponseTelemetry } from '../src/telemetry.js';

/** A whole paced response of `bytes` over `durationMs` on the client port `port`, written at `time`. */
const line = (port: number, time: number, bytes: number, durationMs: number, extra: Partial<ResponseTelemetry> = {}): ResponseTelemetry =>
  ({
    msg: 'media response',
    time,
    bytes,
    durationMs,
    pacing: 'paced',
    appliedRateKbps: RTP_KBPS,
    remoteAddress: '10.77.0.2',
    remotePort: port,
    aborted: false,
    ...extra,
  }) as ResponseTelemetry;

/** Milliseconds `bytes` take at `ratio` x the bench's rate. */
const msAt = (bytes: number, ratio: number): number => (bytes * 8) / (RTP_KBPS * ratio);

describe('connections bench rates', () => {
  test("each connection's first response is apart from its later ones, whatever the order of the lines", () => {
    const lines = [
      line(2, 300, 32_000, msAt(32_000, 1.0)),
      line(1, 100, 32_000, msAt(32_000, 1.8)),
      line(1, 200, 32_000, msAt(32_000, 0.9)),
      line(2, 150, 32_000, msAt(32_000, 1.6)),
      line(1, 400, 32_000, msAt(32_000, 1.1)),
    ];
    const rates = ratesOf(lines);
    expect(rates.firstMedian).toBeCloseTo(1.7, 9);
    expect(rates.later!.median).toBeCloseTo(1.0, 9);
    expect(rates.later!.p10).toBeCloseTo(0.92, 9);
    expect(rates.later!.p90).toBeCloseTo(1.08, 9);
    expect(rates).toMatchObject({ lines: 5, aborted: 0, notPacedAtRate: 0 });
  });

  test('responses cut short are counted apart, and a whole one not paced at the rate is counted and left out', () => {
    const lines = [
      line(1, 100, 32_000, msAt(32_000, 1)),
      line(1, 200, 9_000, 300, { aborted: true }),
      line(2, 100, 32_000, 2, { pacing: 'unpaced', appliedRateKbps: null }),
      line(3, 100, 32_000, msAt(32_000, 2), { appliedRateKbps: 100 }),
    ];
    expect(ratesOf(lines)).toEqual({ lines: 4, aborted: 1, notPacedAtRate: 2, firstMedian: 1, later: null });
    expect(ratesOf([])).toEqual({ lines: 0, aborted: 0, notPacedAtRate: 0, firstMedian: null, later: null });
  });
});

describe('bench quantiles', () => {
  test('interpolate between the nearest values; the median of an even count is the mean of the middle two', () => {
    expect(quantile([4, 1, 3, 2], 0)).toBe(1);
    expect(quantile([4, 1, 3, 2], 1)).toBe(4);
    expect(quantile([4, 1, 3, 2], 0.25)).toBeCloseTo(1.75, 9);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([5, 1, 3])).toBe(3);
    expect(median([])).toBeNaN();
  });
});
