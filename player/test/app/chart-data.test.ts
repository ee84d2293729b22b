import {
  chunkScales,
  downloadRate,
  latestIndex,
  logTicks,
  rateRange,
  shortKbps,
  THROUGHPUT_SPLIT_FACTOR,
  trailingMean,
  transferOf,
  videoTransfers,
  type ResourceEntryLike,
} from '../../src/app/chart-data.js';

/** A Resource Timing entry of a body that crossed the network, ms on the page's clock. */
function entry(name: string, requestStart: number, responseStart: number, responseEnd: number, bytes: number, over: Partial<ResourceEntryLike> = {}): ResourceEntryLike {
  return { name, startTime: requestStart - 1, requestStart, responseStart, responseEnd, transferSize: bytes + 300, encodedBodySize: bytes, ...over };
}

describe('transferOf', () => {
  test('the body from its first byte to its last, moved onto another clock by the offset', () => {
    expect(transferOf(entry('a', 100, 150, 1150, 125_000))).toEqual({ startMs: 150, endMs: 1150, bytes: 125_000 });
    expect(transferOf(entry('a', 100, 150, 1150, 125_000), 40)).toEqual({ startMs: 190, endMs: 1190, bytes: 125_000 });
  });

  test('no first byte recorded: from the request, else from the start', () => {
    expect(transferOf(entry('a', 100, 0, 900, 1000))?.startMs).toBe(100);
    expect(transferOf(entry('a', 0, 0, 900, 1000, { startTime: 80 }))?.startMs).toBe(80);
  });

  test('none for what did not cross the network or does not say: a cache hit, a 304-revalidated hit, a hidden cross-origin entry, an unfinished one', () => {
    expect(transferOf(entry('a', 100, 150, 160, 125_000, { transferSize: 0 }))).toBeNull();
    expect(transferOf(entry('a', 100, 150, 160, 125_000, { transferSize: 310 }))).toBeNull();
    expect(transferOf(entry('a', 100, 150, 160, 0, { transferSize: 0 }))).toBeNull();
    expect(transferOf(entry('a', 100, 150, 0, 125_000))).toBeNull();
  });
});

describe('downloadRate', () => {
  test('a paced chunk: its bytes spread over its bins, at the pace', () => {
    // 250 kB over 1 s = 2000 kbit/s, in 200 ms bins.
    const r = downloadRate([{ startMs: 1000, endMs: 2000, bytes: 250_000 }], 1000, 2400, 200);
    expect(r.t).toEqual([0, 0.2, 0.4, 0.6, 0.8, 1, 1.2, 1.4]);
    expect(r.kbps.map(Math.round)).toEqual([2000, 2000, 2000, 2000, 2000, 0, 0, 0]);
  });

  test('an unpaced chunk: a burst in one bin, then nothing (the on-off picture)', () => {
    const r = downloadRate([{ startMs: 1210, endMs: 1212, bytes: 250_000 }], 1000, 1800, 200);
    expect(r.kbps.map(Math.round)).toEqual([0, 10_000, 0, 0, 0]);
    // The same bytes, so the same mean as the paced chunk over the same time.
    const sum = (xs: number[]) => xs.slice(0, -1).reduce((a, b) => a + b, 0);
    expect(sum(r.kbps)).toBeCloseTo(sum(downloadRate([{ startMs: 1000, endMs: 1800, bytes: 250_000 }], 1000, 1800, 200).kbps));
  });

  test('a transfer across a bin edge is split by time; one of no length lands in the bin of its start', () => {
    const r = downloadRate(
      [
        { startMs: 150, endMs: 250, bytes: 1000 },
        { startMs: 300, endMs: 300, bytes: 500 },
      ],
      0,
      400,
      200,
    );
    expect(r.kbps).toEqual([20, 40, 40]); // 500 B in bin 0, 500 + 500 B in bin 1; the last point closes bin 1
  });

  test('bytes before the origin or after the end are left out; the last bin may be shorter', () => {
    const r = downloadRate([{ startMs: 0, endMs: 400, bytes: 4000 }], 200, 500, 200);
    // 2000 B fall after the origin, all in [200, 400); none in the 100 ms [400, 500).
    expect(r.t).toEqual([0, 0.2, 0.3]);
    expect(r.kbps).toEqual([80, 0, 0]);
    expect(downloadRate([{ startMs: 600, endMs: 600, bytes: 4000 }], 200, 500, 200).kbps).toEqual([0, 0, 0]);
  });

  test('the mean of the trailing window at each bin', () => {
    const r = downloadRate([{ startMs: 0, endMs: 0, bytes: 1000 }], 0, 800, 200, 400);
    expect(r.kbps).toEqual([40, 0, 0, 0, 0]);
    expect(r.meanKbps).toEqual([40, 20, 0, 0, 0]);
  });

  test('nothing before the play request has a span; a bin must have a length', () => {
    expect(downloadRate([], 1000, 1000, 200)).toEqual({ t: [], kbps: [], meanKbps: [] });
    expect(() => downloadRate([], 0, 1000, 0)).toThrow(/binMs/);
  });
});

test('trailingMean: fewer values at the start', () => {
  expect(trailingMean([2, 4, 6, 8], 2)).toEqual([2, 3, 5, 7]);
  expect(trailingMean([], 3)).toEqual([]);
});

describe('videoTransfers', () => {
  const requests = [
    { path: '/media/chunk-4-00002.m4s', mediaType: 'video', type: 'MediaSegment' },
    { path: '/media/chunk-5-00002.m4s', mediaType: 'audio', type: 'MediaSegment' },
    { path: '/media/init-4.m4s', mediaType: 'video', type: 'InitializationSegment' },
  ];

  test("only the video's media segments, matched by path whatever the query", () => {
    const entries = [
      entry('http://h/media/chunk-4-00002.m4s?sammy-session=compare', 10, 20, 30, 1000),
      entry('http://h/media/chunk-5-00002.m4s', 10, 20, 30, 1000),
      entry('http://h/media/init-4.m4s', 10, 20, 30, 1000),
      entry('http://h/main.js', 10, 20, 30, 1000),
    ];
    expect(videoTransfers(entries, requests, 5)).toEqual([{ startMs: 25, endMs: 35, bytes: 1000 }]);
  });

  test("a segment the browser's cache answered is no transfer", () => {
    expect(videoTransfers([entry('http://h/media/chunk-4-00002.m4s', 10, 20, 21, 1000, { transferSize: 0 })], requests)).toEqual([]);
  });
});

test('rateRange: from 0 past the largest value of any series, so two sessions share it', () => {
  expect(rateRange([0, 1000, 500], [2000, Number.NaN])).toEqual([0, 2200]);
  expect(rateRange()).toEqual([0, 1000]);
  expect(rateRange([0, 0])).toEqual([0, 1000]);
});

describe('chunkScales', () => {
  const bitrates = [150, 1050, 1050, 1050];

  test("the player's own ABR on a fast link: the throughput gets its own scale, the bitrate keeps the chart's height", () => {
    const s = chunkScales([...bitrates, null, null], [12_000, 30_000, 41_000, 156_000]);
    expect(s.split).toBe(true);
    expect(s.main[0]).toBeLessThan(150);
    expect(s.main[1]).toBeLessThan(1050 * 2);
    expect(s.throughput[0]).toBeLessThan(12_000);
    expect(s.throughput[1]).toBeGreaterThan(156_000);
  });

  test("Sammy: the throughput near the rtp shares the scale, the unpaced startup chunks only widen it", () => {
    const s = chunkScales([...bitrates, 10_900, 3200, 3200], [85_000, 30_000, 3600, 3500, 3400, 3550]);
    expect(s.split).toBe(false);
    expect(s.main).toEqual(s.throughput);
    expect(s.main[0]).toBeLessThan(150);
    expect(s.main[1]).toBeGreaterThan(85_000);
  });

  test('split when most of the throughput lies more than the factor beyond the others, either way', () => {
    expect(chunkScales([1000], [1000 * THROUGHPUT_SPLIT_FACTOR * 1.01]).split).toBe(true);
    expect(chunkScales([1000], [1000 * THROUGHPUT_SPLIT_FACTOR * 0.99]).split).toBe(false);
    expect(chunkScales([1000], [1000 / THROUGHPUT_SPLIT_FACTOR / 1.01]).split).toBe(true);
  });

  test('no values, or only one kind: one scale', () => {
    expect(chunkScales([], [])).toEqual({ main: [100, 10_000], throughput: [100, 10_000], split: false });
    expect(chunkScales([null, 0, Number.NaN], [2000]).split).toBe(false);
    expect(chunkScales([1000], []).main).toEqual(chunkScales([1000], []).throughput);
  });
});

test('logTicks: 1-2-5 steps, only the powers of 10 over many decades, finer steps within one', () => {
  expect(logTicks(120, 13_000)).toEqual([200, 500, 1000, 2000, 5000, 10_000]);
  expect(logTicks(90, 2_000_000)).toEqual([100, 1000, 10_000, 100_000, 1_000_000]);
  expect(logTicks(560, 1300)).toEqual([600, 700, 800, 900, 1000]);
  expect(logTicks(0, 100)).toEqual([]);
});

test('shortKbps', () => {
  expect([150, 1000, 1500, 20_000, 1_250_000].map(shortKbps)).toEqual(['150', '1k', '1.5k', '20k', '1.25M']);
});

test('latestIndex', () => {
  expect(latestIndex([])).toBeNull();
  expect(latestIndex([0, 0.2, 0.4])).toBe(2);
});
