/**
 * A real Traffic Server edge (`npm run edge`'s command line) in front of a real
 * Node origin (`npm run serve -- --pacing off`), on loopback sockets: what a player
 * sees through the edge. Skipped, with the reason printed, where Traffic Server,
 * its plugin headers or a C compiler are missing (npm test installs them as root).
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer, stop, type ServerProcess } from '@sammy/server/process';
import { makeDir, MB, measureUntil, randomFile, rawExchange, removeDir, requestHead, SPIRAL_GUARD_CASES, timedGet, waitFor, type TimedResponse } from '@sammy/server/test/helpers';
import { readTelemetry, type ResponseTelemetry } from '@sammy/server/telemetry';
import { STATS_PATH } from '../src/ats-config.js';
import { EDGE_CLI, edgeUnavailableReason } from '../src/edge.js';

const unavailable = edgeUnavailableReason();
const describeEdge = unavailable === null ? describe : describe.skip;
if (unavailable !== null) console.log(`SKIP: the edge tests need Traffic Server: ${unavailable}`);

const RTP_KBPS = 40_000;
const RATE_BYTES_PER_S = 5 * MB;
const within10 = (r: TimedResponse): boolean => Math.abs(r.rateAfterMarkBytesPerS / RATE_BYTES_PER_S - 1) < 0.1;
const sha256 = (data: Buffer): string => createHash('sha256').update(data).digest('hex');

describeEdge('pacing through a Traffic Server edge', () => {
  const big = randomFile(10 * MB);
  const small = randomFile(200_000);
  let mediaDir: string;
  let work: string;
  let origin: ServerProcess;
  let edge: ServerProcess;
  let edgeLog: string;
  let originLog: string;

  /**
   * The edge's telemetry line of a response: the `nth` (from 0) for that path on the
   * client's connection, counting lines written after `r` started (a port handed out
   * again may have older ones). On a keep-alive connection pass its first response and
   * count on: the edge may write a paced line after the next request has begun.
   */
  const lineOf = (r: TimedResponse, path: string, nth = 0): Promise<ResponseTelemetry> =>
    waitFor(() => readTelemetry(edgeLog).filter((t) => t.remotePort === r.localPort && t.time >= r.startedAtEpochMs && t.path === path)[nth] ?? null, 5000);

  beforeAll(async () => {
    mediaDir = makeDir({ 'big.m4s': big, 'small.m4s': small, 'other.m4s': randomFile(4 * MB) });
    work = mkdtempSync(join(tmpdir(), 'sammy-edge-test-'));
    originLog = join(work, 'origin.jsonl');
    edgeLog = join(work, 'edge.jsonl');
    origin = await startServer({ name: 'origin', args: ['--media', mediaDir, '--port', '0', '--workers', '1', '--pacing', 'off', '--log', originLog, '--log-level', 'warn'] });
    edge = await startServer({ name: 'edge', cli: EDGE_CLI, args: ['--origin', origin.url, '--port', '0', '--log', edgeLog], timeoutMs: 120_000 });
  }, 180_000);

  afterAll(async () => {
    if (edge) await stop(edge.process, { graceMs: 15_000 });
    if (origin) await stop(origin.process);
    removeDir(mediaDir);
    rmSync(work, { recursive: true, force: true });
  }, 30_000);

  test('10 MB at rtp=40000 arrives at 5 MB/s (+-10%), a cache miss; the same object next on that keep-alive connection without rtp is not paced', async () => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const [paced, unpaced] = await measureUntil(
        'paced then unpaced through the edge',
        async () => {
          const first = await timedGet(edge.port, '/media/big.m4s', { agent, headers: { 'CMCD-Status': `rtp=${RTP_KBPS}` }, keepBody: true });
          return [first, await timedGet(edge.port, '/media/big.m4s', { agent, keepBody: true })] as const;
        },
        ([p, u]) => within10(p) && u.rateAfterMarkBytesPerS > 10 * RATE_BYTES_PER_S,
      );
      expect(paced.localPort).toBe(unpaced.localPort);
      expect(paced.status).toBe(200);
      expect(paced.headers['server-timing']).toBe(`pace;dur=${RTP_KBPS};desc="paced"`);
      expect(paced.rateAfterMarkBytesPerS / RATE_BYTES_PER_S).toBeGreaterThan(0.9);
      expect(paced.rateAfterMarkBytesPerS / RATE_BYTES_PER_S).toBeLessThan(1.1);
      expect(unpaced.headers['server-timing']).toBe('pace;dur=0;desc="unpaced"');
      expect(unpaced.rateAfterMarkBytesPerS).toBeGreaterThan(10 * RATE_BYTES_PER_S);
      // Bytes identical to the origin's file, from the origin (miss) and from the cache (hit).
      expect(sha256(paced.body!)).toBe(sha256(big));
      expect(sha256(unpaced.body!)).toBe(sha256(big));

      const pacedLine = await lineOf(paced, '/media/big.m4s');
      expect(pacedLine).toMatchObject({ pacing: 'paced', rtpKbps: RTP_KBPS, appliedRateKbps: RTP_KBPS, bytes: 10 * MB, maxPacingRateBytesPerS: RATE_BYTES_PER_S, aborted: false, cacheLookup: 'miss' });
      // The line is written when the last byte has left: its duration is the paced transfer's.
      expect(pacedLine.durationMs).toBeGreaterThan(0.85 * 2000 - 200);
      expect(typeof pacedLine.rttUs).toBe('number');
      expect(typeof pacedLine.retransmits).toBe('number');
      const unpacedLine = await lineOf(paced, '/media/big.m4s', 1);
      expect(unpacedLine).toMatchObject({ pacing: 'unpaced', rtpKbps: null, appliedRateKbps: null, maxPacingRateBytesPerS: 'unlimited', cacheLookup: 'hit-fresh' });
    } finally {
      agent.destroy();
    }
  }, 60_000);

  test('cache hits are paced too: the header form and ?CMCD=rtp%3D40000, which reaches neither the cache key nor the origin', async () => {
    await timedGet(edge.port, '/media/other.m4s');
    const viaHeader = await measureUntil('paced hit (header)', () => timedGet(edge.port, '/media/other.m4s', { headers: { 'CMCD-Status': `rtp=${RTP_KBPS}` } }), within10);
    const viaQuery = await measureUntil('paced hit (query)', () => timedGet(edge.port, `/media/other.m4s?CMCD=${encodeURIComponent(`rtp=${RTP_KBPS}`)}`), within10);
    for (const r of [viaHeader, viaQuery]) {
      expect(r.status).toBe(200);
      expect(r.rateAfterMarkBytesPerS / RATE_BYTES_PER_S).toBeGreaterThan(0.9);
      expect(r.rateAfterMarkBytesPerS / RATE_BYTES_PER_S).toBeLessThan(1.1);
      expect(await lineOf(r, '/media/other.m4s')).toMatchObject({ pacing: 'paced', appliedRateKbps: RTP_KBPS, cacheLookup: 'hit-fresh' });
    }
    // The origin served the object once: the query form hit the same cached object.
    expect(readTelemetry(originLog).filter((t) => t.path === '/media/other.m4s')).toHaveLength(1);
  }, 60_000);

  test('a range of a cached object is the origin file bytes', async () => {
    const r = await timedGet(edge.port, '/media/big.m4s', { headers: { Range: 'bytes=1000-1999999', 'CMCD-Status': 'rtp=100000' }, keepBody: true });
    expect(r.status).toBe(206);
    expect(sha256(r.body!)).toBe(sha256(big.subarray(1000, 2_000_000)));
  }, 30_000);

  test('malformed rtp never gives a 5xx: the segment is served unpaced, the problem logged and counted', async () => {
    const malformed = ['rtp=abc', 'rtp=-1', 'rtp=0', 'rtp=1.5', 'rtp=1e30', 'rtp=99999999999999999999', 'rtp=(1 2)', 'rtp=100;x=1', 'rtp', 'rtp=,,', `rtp=1,sid="${'a'.repeat(3000)}"`, 'rtp="5000"', 'rtp=:AAA:'];
    for (const value of malformed) {
      const r = await timedGet(edge.port, '/media/small.m4s', { headers: { 'CMCD-Status': value }, keepBody: true });
      expect({ value, status: r.status, same: sha256(r.body!) === sha256(small) }).toEqual({ value, status: 200, same: true });
      expect(r.headers['server-timing']).toBe('pace;dur=0;desc="unpaced"');
      expect((await lineOf(r, '/media/small.m4s')).cmcdProblem).toMatch(/ignored$/);
    }
    // A newer CMCD version, a query of junk, bytes no client should send.
    const odd = [
      requestHead('/media/small.m4s', 'CMCD-Status: rtp=5000\r\nCMCD-Session: v=3\r\n'),
      requestHead('/media/small.m4s?CMCD=%FF%00rtp%3D%3D&CMCD=(', ''),
      requestHead('/media/small.m4s', 'CMCD-Status: rtp=\x01\xff\xfe\r\n'),
      requestHead('/media/small.m4s', 'CMCD-Status: rtp=5000\r\nCMCD-Status: rtp=\r\n'),
    ];
    for (const head of odd) {
      const r = await rawExchange(edge.port, Buffer.from(head, 'latin1'), 5000);
      expect(r.status).not.toBeNull();
      expect(r.status!).toBeLessThan(500);
    }
    // Counted: the plugin's counter (Traffic Server publishes plugin stats every few seconds).
    const counted = await pollStat('plugin.sammy_edge.cmcd_ignored', (n) => n >= malformed.length, 20_000);
    expect(counted).toBeGreaterThanOrEqual(malformed.length);
    // And the edge still paces the next request as asked.
    const after = await measureUntil('paced after hostile input', () => timedGet(edge.port, '/media/big.m4s', { headers: { 'CMCD-Status': `rtp=${RTP_KBPS}` } }), within10);
    expect(after.rateAfterMarkBytesPerS / RATE_BYTES_PER_S).toBeGreaterThan(0.9);
  }, 90_000);

  test("the spiral guard decides as the Node server's (SPIRAL_GUARD_CASES), and counts what it raised", async () => {
    for (const c of SPIRAL_GUARD_CASES) {
      const r = await timedGet(edge.port, '/media/small.m4s', { headers: c.headers });
      expect({ name: c.name, serverTiming: r.headers['server-timing'] }).toEqual({ name: c.name, serverTiming: c.serverTiming });
      expect(await lineOf(r, '/media/small.m4s')).toMatchObject(c.line);
    }
    const raised = SPIRAL_GUARD_CASES.filter((c) => c.line.guardRaised).length;
    expect(await pollStat('plugin.sammy_edge.spiral_guard_raised', (n) => n >= raised, 20_000)).toBeGreaterThanOrEqual(raised);
  }, 60_000);

  test('clients that vanish mid-response or before it: the edge keeps pacing the others, the line says aborted', async () => {
    // A player that goes away 2 MB into a paced 10 MB response (a reset: the quickest way out).
    const startedAtEpochMs = Date.now();
    const vanished = await new Promise<number>((resolve, reject) => {
      let gone = false;
      const req = http.get({ host: '127.0.0.1', port: edge.port, path: '/media/big.m4s', agent: false, headers: { 'CMCD-Status': `rtp=${RTP_KBPS}` } }, (res) => {
        let bytes = 0;
        res.on('data', (chunk: Buffer) => {
          bytes += chunk.length;
          if (bytes > 2 * MB && !gone) {
            gone = true;
            resolve(res.socket.localPort!);
            (res.socket as net.Socket).resetAndDestroy();
          }
        });
        res.on('error', () => {});
      });
      req.on('error', (err) => gone || reject(err));
    });
    const line = await waitFor(() => readTelemetry(edgeLog).find((t) => t.remotePort === vanished && t.time >= startedAtEpochMs) ?? null, 10_000);
    expect(line).toMatchObject({ path: '/media/big.m4s', pacing: 'paced', aborted: true });
    expect(line.bytes).toBeLessThan(10 * MB);
    // 50 connections that send a request and reset at once.
    await Promise.all(
      Array.from({ length: 50 }, () => new Promise<void>((done) => {
        const socket = net.connect(edge.port, '127.0.0.1', () => {
          socket.write(requestHead('/media/small.m4s', 'CMCD-Status: rtp=5000\r\n'));
          socket.resetAndDestroy();
          done();
        });
        socket.on('error', () => done());
      })),
    );
    const after = await measureUntil('paced after vanishing clients', () => timedGet(edge.port, '/media/big.m4s', { headers: { 'CMCD-Status': `rtp=${RTP_KBPS}` } }), within10);
    expect(after.rateAfterMarkBytesPerS / RATE_BYTES_PER_S).toBeGreaterThan(0.9);
    expect(after.rateAfterMarkBytesPerS / RATE_BYTES_PER_S).toBeLessThan(1.1);
  }, 60_000);

  async function pollStat(name: string, good: (n: number) => boolean, timeoutMs: number): Promise<number> {
    const deadline = Date.now() + timeoutMs;
    let value = -1;
    while (Date.now() < deadline) {
      const r = await timedGet(edge.port, `/${STATS_PATH}`, { keepBody: true });
      const stats = JSON.parse(r.body!.toString()) as { global: Record<string, string> };
      value = Number(stats.global[name]);
      if (good(value)) return value;
      await new Promise((done) => setTimeout(done, 500));
    }
    return value;
  }

  test('SIGTERM stops Traffic Server and removes the folder the edge wrote', async () => {
    const extra = await startServer({ name: 'edge 2', cli: EDGE_CLI, args: ['--origin', origin.url, '--port', '0', '--query-cmcd', 'off'], timeoutMs: 60_000 });
    const folder = /telemetry lines in (\S+)\/log\//.exec(extra.process.stderr())?.[1];
    expect(folder).toBeDefined();
    expect(existsSync(folder!)).toBe(true);
    // --query-cmcd off: the query form is not read (the header form still is).
    const viaQuery = await timedGet(extra.port, `/media/small.m4s?CMCD=${encodeURIComponent('rtp=1000')}`);
    expect(viaQuery.headers['server-timing']).toBe('pace;dur=0;desc="unpaced"');
    const viaHeader = await timedGet(extra.port, '/media/small.m4s', { headers: { 'CMCD-Status': 'rtp=1000' } });
    expect(viaHeader.headers['server-timing']).toBe('pace;dur=1000;desc="paced"');
    expect(await stop(extra.process, { graceMs: 15_000 })).toBe(0);
    expect(existsSync(folder!)).toBe(false);
    // Nothing answers on its port any more.
    await expect(timedGet(extra.port, '/media/small.m4s')).rejects.toThrow();
  }, 60_000);
});
