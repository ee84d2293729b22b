// Pacing on real loopback sockets: the rate a client sees, and the kernel's own
// record of the cap (TCP_INFO max_pacing_rate in the telemetry line).
import http from 'node:http';
import { loadSocketControl } from '../src/socket.js';
import { MB, makeDir, measureUntil, waitFor, randomFile, removeDir, startServer, timedGet, type RunningServer, type TimedResponse } from './helpers.js';

const control = loadSocketControl();
const describeLinux = control.available ? describe : describe.skip;
if (!control.available) console.log(`SKIP: pacing tests need SO_MAX_PACING_RATE: ${control.unavailableReason}`);

const RTP_KBPS = 40_000;
const RATE_BYTES_PER_S = 5 * MB; // 40 000 kbps

/** Achieved over expected rate, within 10%. */
const within10 = (r: TimedResponse, rateBytesPerS = RATE_BYTES_PER_S): boolean => Math.abs(r.rateAfterMarkBytesPerS / rateBytesPerS - 1) < 0.1;

describeLinux('pacing a response at the CMCD rtp (kernel mechanism)', () => {
  let mediaDir: string;
  let server: RunningServer;

  beforeAll(async () => {
    mediaDir = makeDir({ 'big.m4s': randomFile(10 * MB), 'four.m4s': randomFile(4 * MB) });
    server = await startServer({ mediaDir });
  });
  afterAll(async () => {
    await server.close();
    removeDir(mediaDir);
  });

  test('10 MB at rtp=40000 arrives at 5 MB/s (+-10%) past the initial window; unpaced is 10x faster', async () => {
    const paced = await measureUntil('paced 10 MB', () => timedGet(server.port, '/media/big.m4s', { headers: { 'CMCD-Status': `rtp=${RTP_KBPS}` } }), within10);
    expect(paced.status).toBe(200);
    expect(paced.bytes).toBe(10 * MB);
    expect(paced.headers['server-timing']).toBe(`pace;dur=${RTP_KBPS};desc="paced"`);
    expect(paced.rateAfterMarkBytesPerS / RATE_BYTES_PER_S).toBeGreaterThan(0.9);
    expect(paced.rateAfterMarkBytesPerS / RATE_BYTES_PER_S).toBeLessThan(1.1);

    const unpaced = await measureUntil(
      'unpaced 10 MB',
      () => timedGet(server.port, '/media/big.m4s'),
      (r) => r.rateAfterMarkBytesPerS > 10 * paced.rateAfterMarkBytesPerS,
    );
    expect(unpaced.headers['server-timing']).toBe('pace;dur=0;desc="unpaced"');
    expect(unpaced.rateAfterMarkBytesPerS).toBeGreaterThan(10 * paced.rateAfterMarkBytesPerS);

    const line = await server.logs.waitForResponse(paced);
    expect(line).toMatchObject({ pacing: 'paced', rtpKbps: RTP_KBPS, appliedRateKbps: RTP_KBPS, burstMechanism: 'kernel', bytes: 10 * MB });
    expect(line.maxPacingRateBytesPerS).toBe(RATE_BYTES_PER_S);
  }, 30_000);

  test('on one keep-alive connection a paced response leaves the next one unpaced', async () => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const [first, second] = await measureUntil(
        'paced then unpaced on one connection',
        async () => {
          const paced = await timedGet(server.port, '/media/four.m4s', { agent, headers: { 'CMCD-Status': `rtp=${RTP_KBPS}` } });
          return [paced, await timedGet(server.port, '/media/big.m4s', { agent })] as const;
        },
        ([paced, unpaced]) => within10(paced) && unpaced.rateAfterMarkBytesPerS > 10 * RATE_BYTES_PER_S,
      );
      expect(second.localPort).toBe(first.localPort);
      expect(first.rateAfterMarkBytesPerS / RATE_BYTES_PER_S).toBeGreaterThan(0.9);
      expect(first.rateAfterMarkBytesPerS / RATE_BYTES_PER_S).toBeLessThan(1.1);
      expect(second.rateAfterMarkBytesPerS).toBeGreaterThan(10 * RATE_BYTES_PER_S);

      // The last attempt's two lines: one per request on this connection and attempt.
      const lines = await waitFor(() => {
        const mine = server.logs.mediaOf(first);
        const four = mine.filter((t) => t.path === '/media/four.m4s');
        const big = mine.filter((t) => t.path === '/media/big.m4s');
        return big.length > 0 && big.length === four.length ? ([four.at(-1)!, big.at(-1)!] as const) : null;
      });
      expect(lines[0].maxPacingRateBytesPerS).toBe(RATE_BYTES_PER_S);
      // TCP_INFO read at the end of the second response: the kernel holds no cap.
      expect(lines[1].maxPacingRateBytesPerS).toBe('unlimited');
      expect(lines[1].pacing).toBe('unpaced');
    } finally {
      agent.destroy();
    }
  }, 30_000);

  test('the query form (?CMCD=rtp%3D...) paces too, and the header wins over it', async () => {
    const query = await measureUntil(
      'query form',
      () => timedGet(server.port, `/media/four.m4s?CMCD=${encodeURIComponent('rtp=80000')}`),
      (r) => within10(r, 10 * MB),
    );
    expect(query.headers['server-timing']).toBe('pace;dur=80000;desc="paced"');
    expect(query.rateAfterMarkBytesPerS / (10 * MB)).toBeGreaterThan(0.9);
    expect(query.rateAfterMarkBytesPerS / (10 * MB)).toBeLessThan(1.1);
    const both = await timedGet(server.port, `/media/four.m4s?CMCD=${encodeURIComponent('rtp=80000')}`, {
      headers: { 'CMCD-Status': 'rtp=160000' },
    });
    expect(both.headers['server-timing']).toBe('pace;dur=160000;desc="paced"');
  }, 30_000);
});

describeLinux('pacing with application-timed bursts (--burst-mode app)', () => {
  let mediaDir: string;
  let server: RunningServer;

  beforeAll(async () => {
    mediaDir = makeDir({ 'five.m4s': randomFile(5 * MB) });
    server = await startServer({ mediaDir, burstMode: 'app', burstPackets: 4 });
  });
  afterAll(async () => {
    await server.close();
    removeDir(mediaDir);
  });

  test('holds the rate within 10% and reports N-packet trains', async () => {
    const paced = await measureUntil('app bursts', () => timedGet(server.port, '/media/five.m4s', { headers: { 'CMCD-Status': `rtp=${RTP_KBPS}` } }), within10);
    expect(paced.bytes).toBe(5 * MB);
    expect(paced.rateAfterMarkBytesPerS / RATE_BYTES_PER_S).toBeGreaterThan(0.9);
    expect(paced.rateAfterMarkBytesPerS / RATE_BYTES_PER_S).toBeLessThan(1.1);
    const line = await server.logs.waitForResponse(paced);
    // The writer holds the rate; the kernel's cap sits at twice it (APP_KERNEL_CAP_FACTOR).
    expect(line).toMatchObject({ burstMechanism: 'app', trainPackets: 4, maxPacingRateBytesPerS: 2 * RATE_BYTES_PER_S, bytes: 5 * MB });
  }, 30_000);
});
