// The spiral guard: the floor from tb/br (pure), and on real sockets what the kernel
// was told, the telemetry line, Server-Timing and the metric, with the guard on, off
// and at another multiplier.
import { applyGuard, DEFAULT_SPIRAL_GUARD_MULTIPLIER, guardFloor } from '../src/spiral-guard.js';
import { loadSocketControl } from '../src/socket.js';
import { kbpsToBytesPerS } from '../src/units.js';
import { MB, makeDir, metricValue, randomFile, removeDir, SPIRAL_GUARD_CASES, startServer, timedGet, type RunningServer } from './helpers.js';

describe('guardFloor and applyGuard', () => {
  test('the floor is the multiplier x tb, else x br, rounded up to an integer kbps', () => {
    expect(guardFloor({ topBitrateKbps: 1050, bitrateKbps: 300, declaredFloorKbps: null }, 2.5)).toEqual({ floorKbps: 2625, basis: 'tb' });
    expect(guardFloor({ topBitrateKbps: null, bitrateKbps: 300, declaredFloorKbps: null }, 2.5)).toEqual({ floorKbps: 750, basis: 'br' });
    expect(guardFloor({ topBitrateKbps: 1001, bitrateKbps: null, declaredFloorKbps: null }, 2.5)).toEqual({ floorKbps: 2503, basis: 'tb' });
    expect(guardFloor({ topBitrateKbps: null, bitrateKbps: null, declaredFloorKbps: null }, 2.5)).toBeNull();
  });

  test('a floor the player declares (sammy-floor) replaces the multiple of tb and br, rounded up', () => {
    expect(guardFloor({ topBitrateKbps: 1050, bitrateKbps: 300, declaredFloorKbps: 1154.2 }, 2.5)).toEqual({ floorKbps: 1155, basis: 'sammy-floor' });
    expect(guardFloor({ topBitrateKbps: null, bitrateKbps: null, declaredFloorKbps: 4000 }, 2.5)).toEqual({ floorKbps: 4000, basis: 'sammy-floor' });
  });

  test('it raises a lower request to the floor and leaves a higher one alone', () => {
    const floor = { floorKbps: 2625, basis: 'tb' } as const;
    expect(applyGuard(500, floor)).toEqual({ rateKbps: 2625, floor, raised: true });
    expect(applyGuard(3100, floor)).toEqual({ rateKbps: 3100, floor, raised: false });
    expect(applyGuard(2625, floor)).toEqual({ rateKbps: 2625, floor, raised: false });
    expect(applyGuard(500, null)).toEqual({ rateKbps: 500, floor: null, raised: false });
  });

  test('the default multiplier covers Eq. 2.1 at an empty buffer for beta 0.8 (1 / beta)', () => {
    expect(DEFAULT_SPIRAL_GUARD_MULTIPLIER).toBeGreaterThanOrEqual(1 / 0.8);
  });
});

const control = loadSocketControl();
const describeLinux = control.available ? describe : describe.skip;
if (!control.available) console.log(`SKIP: spiral guard socket tests need SO_MAX_PACING_RATE: ${control.unavailableReason}`);

const TB_KBPS = 16_000;
const FLOOR_KBPS = 2.5 * TB_KBPS; // 40 000 kbps = 5 MB/s

describeLinux('the spiral guard on real sockets', () => {
  let mediaDir: string;
  const servers: RunningServer[] = [];

  beforeAll(() => {
    mediaDir = makeDir({ 'seg.m4s': randomFile(2 * MB), 'small.m4s': randomFile(20_000) });
  });
  afterAll(async () => {
    await Promise.all(servers.map((s) => s.close()));
    removeDir(mediaDir);
  });

  async function server(input: Record<string, unknown> = {}): Promise<RunningServer> {
    const s = await startServer({ mediaDir, ...input });
    servers.push(s);
    return s;
  }

  async function get(s: RunningServer, headers: Record<string, string>) {
    const res = await timedGet(s.port, '/media/seg.m4s', { headers });
    expect(res.status).toBe(200);
    expect(res.bytes).toBe(2 * MB);
    return { res, line: await s.logs.waitForResponse(res) };
  }

  async function raisedCount(s: RunningServer, basis: string): Promise<number> {
    const text = await (await fetch(`http://127.0.0.1:${s.port}/metrics`)).text();
    return metricValue(text, `sammy_spiral_guard_raised_total{basis="${basis}"}`) ?? 0;
  }

  test('on by default: an rtp below multiplier x tb is paced at the floor, and says so', async () => {
    const s = await server();
    const { res, line } = await get(s, { 'CMCD-Object': `br=400,tb=${TB_KBPS}`, 'CMCD-Status': 'rtp=1000' });
    expect(res.headers['server-timing']).toBe(`pace;dur=${FLOOR_KBPS};desc="paced"`);
    expect(line).toMatchObject({ rtpKbps: 1000, appliedRateKbps: FLOOR_KBPS, pacing: 'paced', guardFloorKbps: FLOOR_KBPS, guardBasis: 'tb', guardRaised: true });
    // The kernel's own record of the cap.
    expect(line.maxPacingRateBytesPerS).toBe(kbpsToBytesPerS(FLOOR_KBPS));
    expect(await raisedCount(s, 'tb')).toBe(1);
  });

  test('an rtp at or above the floor is applied as sent', async () => {
    const s = await server();
    const { res, line } = await get(s, { 'CMCD-Object': `br=400,tb=${TB_KBPS}`, 'CMCD-Status': 'rtp=46400' });
    expect(res.headers['server-timing']).toBe('pace;dur=46400;desc="paced"');
    expect(line).toMatchObject({ rtpKbps: 46_400, appliedRateKbps: 46_400, guardFloorKbps: FLOOR_KBPS, guardRaised: false });
    expect(line.maxPacingRateBytesPerS).toBe(kbpsToBytesPerS(46_400));
    expect(await raisedCount(s, 'tb')).toBe(0);
  });

  test('without tb the floor comes from br; without either there is none', async () => {
    const s = await server();
    const fromBr = await get(s, { 'CMCD-Object': `br=${TB_KBPS}`, 'CMCD-Status': 'rtp=1000' });
    expect(fromBr.line).toMatchObject({ appliedRateKbps: FLOOR_KBPS, guardFloorKbps: FLOOR_KBPS, guardBasis: 'br', guardRaised: true });
    expect(await raisedCount(s, 'br')).toBe(1);
    const neither = await get(s, { 'CMCD-Status': 'rtp=8000' });
    expect(neither.line).toMatchObject({ appliedRateKbps: 8000, guardFloorKbps: null, guardBasis: null, guardRaised: false });
    // The query form counts as well.
    const query = await timedGet(s.port, `/media/seg.m4s?CMCD=${encodeURIComponent(`rtp=1000,tb=${TB_KBPS}`)}`);
    expect(query.headers['server-timing']).toBe(`pace;dur=${FLOOR_KBPS};desc="paced"`);
  });

  test('a request that asks for no rate stays unpaced: the guard only raises a pace', async () => {
    const s = await server();
    const { res, line } = await get(s, { 'CMCD-Object': `tb=${TB_KBPS}` });
    expect(res.headers['server-timing']).toBe('pace;dur=0;desc="unpaced"');
    expect(line).toMatchObject({ pacing: 'unpaced', guardFloorKbps: null, guardRaised: false });
  });

  test('the floor is clamped to --max-rate-kbps like any rate; an unusable tb falls back to br', async () => {
    const s = await server({ maxRateKbps: 30_000 });
    const clamped = await get(s, { 'CMCD-Object': `tb=${TB_KBPS}`, 'CMCD-Status': 'rtp=1000' });
    expect(clamped.line).toMatchObject({ appliedRateKbps: 30_000, guardFloorKbps: FLOOR_KBPS, guardRaised: true });
    const badTb = await get(s, { 'CMCD-Object': 'br=2000,tb=-7', 'CMCD-Status': 'rtp=1000' });
    expect(badTb.line).toMatchObject({ appliedRateKbps: 5000, guardFloorKbps: 5000, guardBasis: 'br', guardRaised: true });
    expect(badTb.line.cmcdProblem).toContain('tb -7 is not a positive bitrate');
  });

  test('--spiral-guard off applies the request exactly as sent', async () => {
    const s = await server({ spiralGuard: false });
    const { res, line } = await get(s, { 'CMCD-Object': `br=400,tb=${TB_KBPS}`, 'CMCD-Status': 'rtp=8000' });
    expect(res.headers['server-timing']).toBe('pace;dur=8000;desc="paced"');
    expect(line).toMatchObject({ rtpKbps: 8000, appliedRateKbps: 8000, guardFloorKbps: null, guardBasis: null, guardRaised: false });
    expect(line.maxPacingRateBytesPerS).toBe(kbpsToBytesPerS(8000));
    expect(await raisedCount(s, 'tb')).toBe(0);
    const health = (await (await fetch(`http://127.0.0.1:${s.port}/healthz`)).json()) as Record<string, unknown>;
    expect(health).toMatchObject({ spiralGuard: false, spiralGuardMultiplier: 2.5 });
  }, 30_000);

  test.each(SPIRAL_GUARD_CASES.map((c) => [c.name, c] as const))('the cases every server decides alike: %s', async (_name, c) => {
    const s = await server();
    const res = await timedGet(s.port, '/media/small.m4s', { headers: c.headers });
    expect(res.headers['server-timing']).toBe(c.serverTiming);
    expect(await s.logs.waitForResponse(res)).toMatchObject(c.line);
  });

  test('--spiral-guard-multiplier sets the floor', async () => {
    const s = await server({ spiralGuardMultiplier: 3 });
    const { line } = await get(s, { 'CMCD-Object': `tb=${TB_KBPS}`, 'CMCD-Status': 'rtp=46400' });
    expect(line).toMatchObject({ appliedRateKbps: 48_000, guardFloorKbps: 48_000, guardRaised: true });
  });
});
