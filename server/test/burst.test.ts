import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { BurstPacer } from '../src/burst-pacer.js';
import {
  APP_MIN_BURST_INTERVAL_MS,
  BurstClock,
  DEFAULT_DEVICE_GSO,
  DEFAULT_KERNEL_TSO,
  planBursts,
  predictKernelTrainPackets,
  type KernelTrainInputs,
} from '../src/burst.js';
import { activeResources, sleep } from './helpers.js';

const MSS = 1448;
const BBR = { ...DEFAULT_KERNEL_TSO, congestionControl: 'bbr' };
const veth = (o: Partial<KernelTrainInputs>): KernelTrainInputs => ({
  rateBytesPerS: 2_000_000,
  mssBytes: MSS,
  minRttUs: 40,
  kernel: BBR,
  device: DEFAULT_DEVICE_GSO,
  ...o,
});

describe('predictKernelTrainPackets (tcp_tso_autosize)', () => {
  test('microsecond RTT: a full 64 KB skb (45 packets) at any rate, as measured on veth (server/README.md)', () => {
    expect(predictKernelTrainPackets(veth({ rateBytesPerS: 2_000_000 }))).toBe(45);
    expect(predictKernelTrainPackets(veth({ rateBytesPerS: 8_000_000 }))).toBe(45);
  });

  test('5 ms RTT: about 1 ms of the rate, at least bbr\'s 2 segments (measured: 2-packet trains at 2 MB/s)', () => {
    expect(predictKernelTrainPackets(veth({ minRttUs: 5000 }))).toBe(2);
    expect(predictKernelTrainPackets(veth({ minRttUs: 5000, rateBytesPerS: 8_000_000 }))).toBe(5);
    expect(predictKernelTrainPackets(veth({ minRttUs: 5000, rateBytesPerS: 100_000 }))).toBe(1);
  });

  test('cubic honours tcp_min_tso_segs; gso_max_segs caps every train', () => {
    const cubic = { ...DEFAULT_KERNEL_TSO, congestionControl: 'cubic', minTsoSegs: 8 };
    expect(predictKernelTrainPackets(veth({ minRttUs: 5000, kernel: cubic }))).toBe(8);
    expect(predictKernelTrainPackets(veth({ device: { gsoMaxSize: 65536, gsoMaxSegs: 4 } }))).toBe(4);
    expect(predictKernelTrainPackets(veth({ device: { gsoMaxSize: 65536, gsoMaxSegs: 1 } }))).toBe(1);
  });

  test('loopback (64 KB MSS): one or two segments', () => {
    expect(predictKernelTrainPackets(veth({ mssBytes: 65483, minRttUs: 10, rateBytesPerS: 5_000_000 }))).toBe(2);
  });
});

describe('planBursts', () => {
  const base = { burstPackets: 4, rateBytesPerS: 2_000_000, mssBytes: MSS, kernelTrainPackets: 45 };

  test('auto: the kernel when its trains are short enough, else N x MSS writes', () => {
    expect(planBursts({ ...base, mode: 'auto', kernelTrainPackets: 4 })).toEqual({ mechanism: 'kernel', trainPackets: 4 });
    const app = planBursts({ ...base, mode: 'auto' });
    expect(app).toMatchObject({ mechanism: 'app', chunkBytes: 4 * MSS, trainPackets: 4, strict: true });
    expect(app.mechanism === 'app' && app.intervalMs).toBeCloseTo(((4 * MSS) / 2_000_000) * 1000, 6);
  });

  test('too fast for timers: about 1 ms of data per write, or the kernel if that is no worse', () => {
    const fast = planBursts({ ...base, mode: 'auto', rateBytesPerS: 8_000_000 });
    expect(fast).toMatchObject({ mechanism: 'app', strict: false, chunkBytes: 6 * MSS, trainPackets: 12 });
    expect(planBursts({ ...base, mode: 'auto', rateBytesPerS: 8_000_000, kernelTrainPackets: 10 })).toEqual({ mechanism: 'kernel', trainPackets: 10 });
    expect(((4 * MSS) / 8_000_000) * 1000).toBeLessThan(APP_MIN_BURST_INTERVAL_MS);
  });

  test('forced modes', () => {
    expect(planBursts({ ...base, mode: 'kernel' })).toEqual({ mechanism: 'kernel', trainPackets: 45 });
    expect(planBursts({ ...base, mode: 'app', kernelTrainPackets: 2 })).toMatchObject({ mechanism: 'app', trainPackets: 4, strict: true });
  });
});

/** Pipes `bytes` through a pacer; returns the write sizes and times (ms) downstream saw. */
async function paced(bytes: number, pacer: BurstPacer): Promise<{ sizes: number[]; timesMs: number[] }> {
  const sizes: number[] = [];
  const timesMs: number[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _e, cb) {
      sizes.push(chunk.length);
      timesMs.push(performance.now());
      cb();
    },
  });
  const source = Readable.from([Buffer.alloc(bytes / 2, 1), Buffer.alloc(bytes / 2, 2)]);
  await pipeline(source, pacer, sink);
  return { sizes, timesMs };
}

describe('BurstClock (the schedule both body paths follow)', () => {
  test('strict: one chunk per interval; a burst sent early keeps the schedule, so the rate holds', () => {
    const chunk = 4 * MSS;
    const clock = new BurstClock({ rateBytesPerS: 2_000_000, chunkBytes: chunk, strict: true, mssBytes: MSS });
    const intervalMs = (chunk / 2_000_000) * 1000;
    expect(clock.waitMs(0)).toBe(0);
    expect(clock.take(0, 100 * chunk)).toBe(chunk);
    expect(clock.dueMs).toBeCloseTo(intervalMs);
    expect(clock.earlyMs).toBeCloseTo(intervalMs / 4);
    // Sent a quarter interval early: the next is still due one interval after this one was.
    expect(clock.take(intervalMs - clock.earlyMs, 100 * chunk)).toBe(chunk);
    expect(clock.dueMs).toBeCloseTo(2 * intervalMs);
    // Late: never sooner than half an interval after it.
    expect(clock.take(5 * intervalMs, 100 * chunk)).toBe(chunk);
    expect(clock.dueMs).toBeCloseTo(5.5 * intervalMs);
    // The end of the body: what is left.
    expect(clock.take(6 * intervalMs, 1000)).toBe(1000);
  });

  test('non-strict: what the schedule owes in whole packets, one to two chunks, never early', () => {
    const chunk = 6 * MSS;
    const clock = new BurstClock({ rateBytesPerS: 8_000_000, chunkBytes: chunk, strict: false, mssBytes: MSS });
    expect(clock.earlyMs).toBe(0);
    expect(clock.take(0, 1e9)).toBe(chunk);
    // 3 ms late at 8 MB/s owes 24 KB: capped at two chunks.
    expect(clock.take(4, 1e9)).toBe(2 * chunk);
    const owed = clock.take(4 + 1.5 * clock.intervalMs, 1e9);
    expect(owed % MSS).toBe(0);
    expect(owed).toBeGreaterThanOrEqual(chunk);
    expect(owed).toBeLessThanOrEqual(2 * chunk);
  });
});

describe('BurstPacer', () => {
  test('strict: writes of exactly N x MSS, spaced by N x MSS / rate, content intact', async () => {
    const chunk = 4 * MSS;
    const rate = 1_000_000; // 5.8 ms per chunk
    const { sizes, timesMs } = await paced(20 * chunk, new BurstPacer({ rateBytesPerS: rate, chunkBytes: chunk, strict: true, mssBytes: MSS }));
    expect(sizes).toEqual(Array(20).fill(chunk));
    const gaps = timesMs.slice(1).map((t, i) => t - timesMs[i]!);
    const intervalMs = (chunk / rate) * 1000;
    // Never two bursts together: a late timer shortens the next wait to no less than half.
    for (const gap of gaps) expect(gap).toBeGreaterThanOrEqual(intervalMs / 2 - 0.5);
    // And never faster than the rate overall.
    expect(timesMs.at(-1)! - timesMs[0]!).toBeGreaterThanOrEqual(19 * intervalMs - 1);
  });

  test('non-strict: whole-packet writes of one to two chunks', async () => {
    const chunk = 6 * MSS;
    const { sizes } = await paced(60 * chunk, new BurstPacer({ rateBytesPerS: 8_000_000, chunkBytes: chunk, strict: false, mssBytes: MSS }));
    expect(sizes.reduce((a, b) => a + b, 0)).toBe(60 * chunk);
    for (const size of sizes.slice(0, -1)) {
      expect(size % MSS).toBe(0);
      expect(size).toBeGreaterThanOrEqual(chunk);
      expect(size).toBeLessThanOrEqual(2 * chunk);
    }
  });

  test('destroyed mid-body: its timer is gone', async () => {
    const pacer = new BurstPacer({ rateBytesPerS: 10_000, chunkBytes: 1000, strict: true, mssBytes: 1000 });
    pacer.on('error', () => {});
    pacer.write(Buffer.alloc(10_000));
    await sleep(20);
    // Read just before and just after the destroy, with no turn of the event loop between:
    // no other timer in the process (an earlier test's, jest's) can fire or start there.
    const during = activeResources()['Timeout'] ?? 0;
    pacer.destroy();
    expect(activeResources()['Timeout'] ?? 0).toBe(during - 1);
  });
});
