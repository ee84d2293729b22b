/**
 * ngx_http_sammy_module in a real nginx (`startNginx`, what `npm run nginx` runs), on
 * loopback sockets: the pace a player asks for, the next response on the same
 * connection, the bytes, the held tail, and hostile requests. Skipped, with the reason
 * printed, where nginx, its source tree or a C compiler are missing (npm test
 * installs them as root).
 */
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readTelemetry, type ResponseTelemetry } from '@sammy/server/telemetry';
import { MB, measureUntil, metricValue, randomFile, rawExchange, requestHead, sleep, SPIRAL_GUARD_CASES, timedGet, waitFor, type TimedResponse } from '@sammy/server/test/helpers';
import { nginxUnavailableReason, startNginx, type RunningNginx } from '../src/nginx.js';
import { crashesIn } from './helpers.js';

const unavailable = nginxUnavailableReason();
const describeNginx = unavailable === null ? describe : describe.skip;
if (unavailable !== null) console.log(`SKIP: the nginx module tests need nginx and its source tree: ${unavailable}`);

const RTP_KBPS = 40_000;
const RATE_BYTES_PER_S = 5 * MB;
const MIN_RATE_KBPS = 100;
const MAX_RATE_KBPS = 1_000_000;
const within10 = (r: TimedResponse): boolean => Math.abs(r.rateAfterMarkBytesPerS / RATE_BYTES_PER_S - 1) < 0.1;
const sha256 = (data: Buffer): string => createHash('sha256').update(data).digest('hex');
const SECRET = 'top-secret-outside-media';

describeNginx('pacing inside nginx (ngx_http_sammy_module)', () => {
  const big = randomFile(10 * MB);
  const mid = randomFile(MB);
  const seg = randomFile(100_000);
  let root: string;
  let nginx: RunningNginx;

  /** The module's line for a response: on the client's port, written after it started (ports are handed out again). */
  const lineOf = (r: { localPort: number; startedAtEpochMs: number }, path: string, nth = 0): Promise<ResponseTelemetry> =>
    waitFor(() => readTelemetry(nginx.telemetryLog).filter((t) => t.remotePort === r.localPort && t.time >= r.startedAtEpochMs && t.path === path)[nth] ?? null, 5000);

  const stillServing = async (): Promise<void> => {
    const ok = await timedGet(nginx.port, '/media/seg.m4s', { keepBody: true });
    expect(ok.status).toBe(200);
    expect(sha256(ok.body!)).toBe(sha256(seg));
  };

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'sammy-nginx-module-'));
    const mediaDir = join(root, 'media');
    const playerDir = join(root, 'player');
    for (const dir of [mediaDir, playerDir]) mkdirSync(dir);
    writeFileSync(join(mediaDir, 'big.m4s'), big);
    writeFileSync(join(mediaDir, 'mid.m4s'), mid);
    writeFileSync(join(mediaDir, 'seg.m4s'), seg);
    writeFileSync(join(playerDir, 'index.html'), '<!doctype html><title>player</title>');
    writeFileSync(join(root, 'secret.txt'), SECRET);
    symlinkSync(join(root, 'secret.txt'), join(mediaDir, 'link.m4s'));
    nginx = await startNginx({ mediaDir, playerDir, port: 0, workers: 1, minRateKbps: MIN_RATE_KBPS, maxRateKbps: MAX_RATE_KBPS, logFile: join(root, 'telemetry.jsonl') });
  }, 180_000);

  afterAll(async () => {
    if (nginx) await nginx.stop();
    rmSync(root, { recursive: true, force: true });
  }, 30_000);

  test('10 MB at rtp=40000 arrives at 5 MB/s (+-10%); the next response on that keep-alive connection, without rtp, is at least 5x faster; bytes identical', async () => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const [paced, unpaced] = await measureUntil(
        'paced then unpaced through nginx',
        async () => {
          const first = await timedGet(nginx.port, '/media/big.m4s', { agent, headers: { 'CMCD-Status': `rtp=${RTP_KBPS}` }, keepBody: true });
          return [first, await timedGet(nginx.port, '/media/big.m4s', { agent, keepBody: true })] as const;
        },
        ([p, u]) => within10(p) && u.rateAfterMarkBytesPerS > 5 * p.rateAfterMarkBytesPerS,
      );
      expect(paced.localPort).toBe(unpaced.localPort);
      expect(paced.status).toBe(200);
      expect(paced.headers['server-timing']).toBe(`pace;dur=${RTP_KBPS};desc="paced"`);
      expect(paced.headers['timing-allow-origin']).toBe('*');
      expect(paced.rateAfterMarkBytesPerS / RATE_BYTES_PER_S).toBeGreaterThan(0.9);
      expect(paced.rateAfterMarkBytesPerS / RATE_BYTES_PER_S).toBeLessThan(1.1);
      expect(unpaced.headers['server-timing']).toBe('pace;dur=0;desc="unpaced"');
      expect(unpaced.rateAfterMarkBytesPerS).toBeGreaterThan(5 * paced.rateAfterMarkBytesPerS);
      expect(sha256(paced.body!)).toBe(sha256(big));
      expect(sha256(unpaced.body!)).toBe(sha256(big));

      const pacedLine = await lineOf(paced, '/media/big.m4s');
      expect(pacedLine).toMatchObject({
        pacing: 'paced',
        rtpKbps: RTP_KBPS,
        appliedRateKbps: RTP_KBPS,
        bytes: 10 * MB,
        bodyPath: 'sendfile',
        maxPacingRateBytesPerS: RATE_BYTES_PER_S,
        burstMechanism: 'kernel',
        aborted: false,
        protocol: 'http/1.1',
        server: 'nginx',
      });
      // The line is written when the held last byte went out: its duration is the paced transfer's.
      expect(pacedLine.durationMs).toBeGreaterThan(0.85 * 2000 - 200);
      expect(typeof pacedLine.rttUs).toBe('number');
      const unpacedLine = await lineOf(paced, '/media/big.m4s', 1);
      expect(unpacedLine).toMatchObject({ pacing: 'unpaced', rtpKbps: null, appliedRateKbps: null, maxPacingRateBytesPerS: 'unlimited', bytes: 10 * MB });
    } finally {
      agent.destroy();
    }
  }, 60_000);

  test('?CMCD=rtp%3D40000 paces the same; the header form wins over the query form', async () => {
    const viaQuery = await measureUntil('paced by the query form', () => timedGet(nginx.port, `/media/big.m4s?CMCD=${encodeURIComponent(`rtp=${RTP_KBPS}`)}`), within10);
    expect(viaQuery.headers['server-timing']).toBe(`pace;dur=${RTP_KBPS};desc="paced"`);
    expect(viaQuery.rateAfterMarkBytesPerS / RATE_BYTES_PER_S).toBeGreaterThan(0.9);
    expect(viaQuery.rateAfterMarkBytesPerS / RATE_BYTES_PER_S).toBeLessThan(1.1);
    expect(await lineOf(viaQuery, '/media/big.m4s')).toMatchObject({ pacing: 'paced', appliedRateKbps: RTP_KBPS, cmcdProblem: null });
    const both = await timedGet(nginx.port, '/media/seg.m4s?CMCD=rtp%3D2000', { headers: { 'CMCD-Status': 'rtp=8000' } });
    expect(both.headers['server-timing']).toBe('pace;dur=8000;desc="paced"');
  }, 60_000);

  test('ranges are the file bytes, paced or not: single, open-ended, suffix and multipart', async () => {
    const cases: [string, Buffer][] = [
      ['bytes=1000-1999999', big.subarray(1000, 2_000_000)],
      ['bytes=9000000-', big.subarray(9_000_000)],
      ['bytes=-500000', big.subarray(10 * MB - 500_000)],
      ['bytes=0-0', big.subarray(0, 1)],
    ];
    for (const [range, expected] of cases) {
      for (const headers of [{ Range: range }, { Range: range, 'CMCD-Status': 'rtp=200000' }] as Record<string, string>[]) {
        const r = await timedGet(nginx.port, '/media/big.m4s', { headers, keepBody: true });
        expect(r.status).toBe(206);
        expect(r.bytes).toBe(expected.length);
        expect(sha256(r.body!)).toBe(sha256(expected));
      }
    }
    const multipart = await timedGet(nginx.port, '/media/mid.m4s', { headers: { Range: 'bytes=0-99,500000-500099', 'CMCD-Status': 'rtp=200000' }, keepBody: true });
    expect(multipart.status).toBe(206);
    const body = multipart.body!;
    expect(body.includes(mid.subarray(0, 100))).toBe(true);
    expect(body.includes(mid.subarray(500_000, 500_100))).toBe(true);
    // The multipart body ends with its closing boundary: the held last byte went out after it.
    expect(body.toString('latin1').trimEnd().endsWith('--')).toBe(true);
  }, 60_000);

  test('a HEAD, a 304 and a 404 are answered and logged unpaced', async () => {
    const head = await timedGet(nginx.port, '/media/seg.m4s', { method: 'HEAD', headers: { 'CMCD-Status': 'rtp=4000' } });
    expect(head.status).toBe(200);
    expect(head.headers['server-timing']).toBe('pace;dur=0;desc="unpaced"');
    const etag = head.headers['etag']!;
    const notModified = await timedGet(nginx.port, '/media/seg.m4s', { headers: { 'If-None-Match': etag, 'CMCD-Status': 'rtp=4000' } });
    expect(notModified.status).toBe(304);
    const missing = await timedGet(nginx.port, '/media/none.m4s', { headers: { 'CMCD-Status': 'rtp=4000' } });
    expect(missing.status).toBe(404);
    expect(await lineOf(head, '/media/seg.m4s')).toMatchObject({ pacing: 'unpaced', rtpKbps: 4000, bytes: 0, bodyPath: null });
    expect(await lineOf(missing, '/media/none.m4s')).toMatchObject({ status: 404, pacing: 'unpaced' });
  }, 30_000);

  test("the spiral guard decides as the Node server's (SPIRAL_GUARD_CASES), and counts what it raised", async () => {
    for (const c of SPIRAL_GUARD_CASES) {
      const r = await timedGet(nginx.port, '/media/seg.m4s', { headers: c.headers });
      expect({ name: c.name, serverTiming: r.headers['server-timing'] }).toEqual({ name: c.name, serverTiming: c.serverTiming });
      expect(await lineOf(r, '/media/seg.m4s')).toMatchObject(c.line);
    }
    const metrics = await timedGet(nginx.port, '/metrics', { keepBody: true });
    expect(metricValue(metrics.body!.toString(), 'sammy_spiral_guard_raised_total{basis="tb"}')).toBeGreaterThanOrEqual(1);
    expect(metricValue(metrics.body!.toString(), 'sammy_spiral_guard_raised_total{basis="br"}')).toBeGreaterThanOrEqual(1);
  }, 30_000);

  test('the held tail keeps a paced response at its rate to its last byte', async () => {
    // 1 MB at 500 kB/s: loopback sends the connection's first ten 64 KB segments unpaced, the rest at the cap.
    const r = await timedGet(nginx.port, '/media/mid.m4s', { headers: { 'CMCD-Status': 'rtp=4000' }, keepBody: true });
    expect(sha256(r.body!)).toBe(sha256(mid));
    const pacedBytes = MB - 10 * 65_483;
    expect(r.elapsedMs).toBeGreaterThan((0.85 * pacedBytes * 1000) / 500_000);
    const line = await lineOf(r, '/media/mid.m4s');
    expect(line).toMatchObject({ pacing: 'paced', bytes: MB, maxPacingRateBytesPerS: 500_000 });
  }, 30_000);

  describe('hostile requests: no 5xx, nothing served from outside the media folder, nginx keeps serving', () => {
    test.each([
      ['not a number', 'rtp=abc', 'pace;dur=0;desc="unpaced"'],
      ['negative', 'rtp=-1', 'pace;dur=0;desc="unpaced"'],
      ['exponent (not RFC 8941)', 'rtp=1e30', 'pace;dur=0;desc="unpaced"'],
      ['20 digits', 'rtp=99999999999999999999', 'pace;dur=0;desc="unpaced"'],
      ['decimal', 'rtp=1.5', 'pace;dur=0;desc="unpaced"'],
      ['newer version', 'v=3,rtp=4000', 'pace;dur=0;desc="unpaced"'],
      ['huge: clamped to max', 'rtp=999999999999999', `pace;dur=${MAX_RATE_KBPS};desc="paced"`],
      ['tiny: clamped to min', 'rtp=1', `pace;dur=${MIN_RATE_KBPS};desc="paced"`],
      ['duplicated key', 'rtp=8000,rtp=400000', 'pace;dur=400000;desc="paced"'],
      ['oversized (3 KB)', `rtp=4000,sid="${'x'.repeat(3000)}"`, 'pace;dur=0;desc="unpaced"'],
      ['tb not a number', 'rtp=4000,tb=abc', 'pace;dur=4000;desc="paced"'],
      ['huge tb: the guard floor clamped to max', 'rtp=4000,tb=999999999999999', `pace;dur=${MAX_RATE_KBPS};desc="paced"`],
      ['an inner list', 'rtp=(1 2)', 'pace;dur=0;desc="unpaced"'],
      ['binary', 'rtp=:AAA:', 'pace;dur=0;desc="unpaced"'],
    ])('CMCD %s', async (_name, cmcd, serverTiming) => {
      const res = await timedGet(nginx.port, '/media/seg.m4s', { headers: { 'CMCD-Status': cmcd }, keepBody: true });
      expect(res.status).toBe(200);
      expect(res.headers['server-timing']).toBe(serverTiming);
      expect(sha256(res.body!)).toBe(sha256(seg));
    });

    test('500 generated CMCD headers and queries: every answer a 200 with the file', async () => {
      let seed = 7;
      const random = (): number => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
      const pieces = ['rtp', '=', ',', ';', '(', ')', '"', '\\', ':', '?1', '-', '.', '0', '9', '40000', 'tb', 'br', 'v=3', ' ', 'x', '%', '%00', '\u00e9'];
      for (let i = 0; i < 500; i++) {
        const text = Array.from({ length: 1 + Math.floor(random() * 12) }, () => pieces[Math.floor(random() * pieces.length)]).join('');
        const asQuery = i % 2 === 1;
        const path = asQuery ? `/media/seg.m4s?CMCD=${encodeURIComponent(text)}` : '/media/seg.m4s';
        const head = requestHead(path, asQuery ? '' : `CMCD-Status: ${text.replace(/[\r\n]/g, '')}\r\n`);
        const res = await rawExchange(nginx.port, Buffer.from(head, 'latin1'), 3000);
        expect([200, 400]).toContain(res.status);
      }
      await stillServing();
    }, 120_000);

    test.each([
      ['dot-dot', '/media/../secret.txt'],
      ['percent-encoded dots', '/media/%2e%2e/secret.txt'],
      ['percent-encoded slash', '/media/..%2fsecret.txt'],
      ['double-encoded', '/media/%252e%252e/secret.txt'],
      ['backslash', '/media/..\\secret.txt'],
      ['encoded NUL', '/media/seg.m4s%00.txt'],
      ['malformed escape', '/media/%e0%a4%a.m4s'],
      ['a symlink out of the folder', '/media/link.m4s'],
    ])('path %s: %s', async (_name, path) => {
      const res = await rawExchange(nginx.port, requestHead(path, 'CMCD-Status: rtp=4000\r\n'));
      expect(res.status).not.toBeNull();
      expect(res.status!).toBeLessThan(500);
      expect(res.status).not.toBe(200);
      expect(res.text).not.toContain(SECRET);
      await stillServing();
    });

    test('malformed heads get a 4xx, never a 5xx', async () => {
      const heads = [
        'GET /media/seg.m4s HTTP/1.1\r\nHost: x\r\nCMCD-Status: rtp=4000\r\nContent-Length: -1\r\n\r\n',
        'GET /media/seg.m4s HTTP/1.1\r\nHost: x\r\nRange: bytes=5-1\r\n\r\n',
        'GET /media/seg.m4s HTTP/1.1\r\nHost: x\r\nRange: bytes=999999999-\r\nCMCD-Status: rtp=4000\r\n\r\n',
        `GET /media/seg.m4s HTTP/1.1\r\nHost: x\r\nCMCD-Status: ${'a'.repeat(40_000)}\r\n\r\n`,
        'POST /media/seg.m4s HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nCMCD-Status: rtp=4000\r\n\r\nabc',
      ];
      for (const head of heads) {
        const res = await rawExchange(nginx.port, head);
        expect({ head: head.slice(0, 80), status: res.status === null || res.status < 500 }).toEqual({ head: head.slice(0, 80), status: true });
      }
      // An unknown protocol version: nginx's parser answers 505 itself, as RFC 9110 section 15.6.6 has it.
      expect((await rawExchange(nginx.port, 'GET /media/seg.m4s HTTP/9.9\r\nHost: x\r\n\r\n')).status).toBe(505);
      await stillServing();
    }, 30_000);

    test('clients that vanish: before the response, mid-body while paced, and while the tail is held', async () => {
      const vanish = (afterBytes: number, rtp: number): Promise<void> =>
        new Promise((done) => {
          const socket = net.connect(nginx.port, '127.0.0.1');
          let got = 0;
          socket.on('data', (c: Buffer) => {
            got += c.length;
            if (got >= afterBytes) socket.resetAndDestroy();
          });
          socket.on('close', () => done());
          socket.on('error', () => done());
          socket.write(requestHead('/media/big.m4s', `CMCD-Status: rtp=${rtp}\r\n`).replace('Connection: close\r\n', ''));
          if (afterBytes === 0) socket.resetAndDestroy();
        });
      for (let i = 0; i < 5; i++) {
        await vanish(0, 40_000);
        await vanish(2 * MB, 40_000);
        await vanish(10 * MB - 100_000, 80_000);
      }
      await sleep(300);
      await stillServing();
    }, 60_000);

    test('pipelined requests, paced and not, are each answered in full at their own rate', async () => {
      const heads = [
        'GET /media/mid.m4s HTTP/1.1\r\nHost: x\r\nCMCD-Status: rtp=16000\r\n\r\n',
        'GET /media/mid.m4s HTTP/1.1\r\nHost: x\r\nCMCD-Status: rtp=32000\r\n\r\n',
        'GET /media/seg.m4s HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n',
      ];
      const startedAtEpochMs = Date.now();
      const res = await rawExchange(nginx.port, heads.join(''), 10_000);
      expect(res.closed).toBe(true);
      // Each status line follows the previous body directly (no line break before it).
      expect(res.text.match(/HTTP\/1\.1 200 OK\r\n/g)).toHaveLength(3);
      const lines = await waitFor(() => {
        const found = readTelemetry(nginx.telemetryLog).filter((t) => t.time >= startedAtEpochMs && (t.path === '/media/mid.m4s' || t.path === '/media/seg.m4s'));
        const last = found.at(-1);
        return found.length >= 3 && last?.path === '/media/seg.m4s' ? found.slice(-3) : null;
      }, 10_000);
      expect(lines.map((l) => [l.appliedRateKbps, l.bytes])).toEqual([
        [16_000, MB],
        [32_000, MB],
        [null, 100_000],
      ]);
    }, 30_000);

    afterAll(() => {
      expect(crashesIn(nginx.errorLog)).toEqual([]);
    });
  });

  test('the counters: responses by outcome, bytes and held tails, summed in /metrics', async () => {
    const metrics = await timedGet(nginx.port, '/metrics', { keepBody: true });
    const text = metrics.body!.toString();
    expect(metrics.headers['content-type']).toMatch(/^text\/plain/);
    expect(metricValue(text, 'sammy_media_responses_total{pacing="paced"}')).toBeGreaterThan(10);
    expect(metricValue(text, 'sammy_media_responses_total{pacing="unpaced"}')).toBeGreaterThan(10);
    expect(metricValue(text, 'sammy_tails_held_total')).toBeGreaterThan(5);
    expect(metricValue(text, 'sammy_media_bytes_total')).toBeGreaterThan(50 * MB);
    expect(metricValue(text, 'sammy_errors_total{kind="cmcd"}')).toBeGreaterThan(5);
  });
});
