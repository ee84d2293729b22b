// HTTPS (--tls-cert, --tls-key) on real loopback sockets with a certificate made by
// openssl for this run: the same pacing as plain HTTP (the cap is set on the TCP
// socket under the TLS one), the same telemetry, and bad TLS input refused.
import https from 'node:https';
import { requestHead } from '../bench/http1.js';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startServer as startServerProcess, stop } from '../src/process.js';
import { loadSocketControl } from '../src/socket.js';
import type { ResponseTelemetry } from '../src/telemetry.js';
import { plaintextBytesForWire, TLS_RECORD_OVERHEAD_BYTES } from '../src/tls.js';
import {
  MB, makeDir, makeSelfSignedCert, measureUntil, metricValue, opensslMissing, pipelinedExchange, randomFile, rawExchange, removeDir, startServer, timedGet,
  type RunningServer, type SelfSignedCert, type TimedResponse,
} from './helpers.js';

const serverDir = join(dirname(fileURLToPath(import.meta.url)), '..');
const control = loadSocketControl();
const missing = opensslMissing() ?? (control.available ? null : `SO_MAX_PACING_RATE: ${control.unavailableReason}`);
const describeTls = missing === null ? describe : describe.skip;
if (missing !== null) console.log(`SKIP: TLS tests need ${missing}`);

const RTP_KBPS = 40_000;
const RATE_BYTES_PER_S = 5 * MB;
const within10 = (r: TimedResponse): boolean => Math.abs(r.rateAfterMarkBytesPerS / RATE_BYTES_PER_S - 1) < 0.1;

test('a burst of N x MSS on the wire is written as N x MSS less one record overhead per record', () => {
  expect(plaintextBytesForWire(4 * 1448)).toBe(4 * 1448 - TLS_RECORD_OVERHEAD_BYTES);
  // Two records: 40 x 1448 = 57 920 bytes needs four 16 KB records.
  expect(plaintextBytesForWire(40 * 1448)).toBe(40 * 1448 - 4 * TLS_RECORD_OVERHEAD_BYTES);
});

describeTls.each([['kernel'], ['app']] as const)('HTTPS with --burst-mode %s', (burstMode) => {
  let dir: string;
  let cert: SelfSignedCert;
  let server: RunningServer;

  beforeAll(async () => {
    dir = makeDir({ 'media/big.m4s': randomFile(10 * MB), 'media/four.m4s': randomFile(4 * MB) });
    cert = makeSelfSignedCert(dir);
    server = await startServer({ mediaDir: join(dir, 'media'), burstMode, tls: { certFile: cert.certFile, keyFile: cert.keyFile } });
  });
  afterAll(async () => {
    await server.close();
    removeDir(dir);
  });

  test('10 MB at rtp=40000 arrives at 5 MB/s (+-10%), its line counts the body, and unpaced is 10x faster', async () => {
    const get = (headers: Record<string, string> = {}) => timedGet(server.port, '/media/big.m4s', { ca: cert.cert, headers });
    const paced = await measureUntil('paced over TLS', () => get({ 'CMCD-Status': `rtp=${RTP_KBPS}` }), within10);
    expect([paced.status, paced.bytes, paced.headers['server-timing']]).toEqual([200, 10 * MB, `pace;dur=${RTP_KBPS};desc="paced"`]);
    expect(paced.rateAfterMarkBytesPerS / RATE_BYTES_PER_S).toBeGreaterThan(0.9);
    expect(paced.rateAfterMarkBytesPerS / RATE_BYTES_PER_S).toBeLessThan(1.1);
    const line = await server.logs.waitForResponse(paced);
    // Node encrypts every byte: HTTPS bodies take the stream path, whatever --body-path auto finds.
    expect(line).toMatchObject({ pacing: 'paced', appliedRateKbps: RTP_KBPS, burstMechanism: burstMode, bytes: 10 * MB, aborted: false, bodyPath: 'stream' });
    expect(server.app.sammy.sender).toBeNull();
    // The kernel's cap on the TCP socket under the TLS one (twice the rate with app bursts).
    expect(line.maxPacingRateBytesPerS).toBe((burstMode === 'app' ? 2 : 1) * RATE_BYTES_PER_S);

    const unpaced = await measureUntil('unpaced over TLS', () => get(), (r) => r.rateAfterMarkBytesPerS > 10 * paced.rateAfterMarkBytesPerS);
    expect(unpaced.headers['server-timing']).toBe('pace;dur=0;desc="unpaced"');
    expect(unpaced.rateAfterMarkBytesPerS).toBeGreaterThan(10 * paced.rateAfterMarkBytesPerS);
  }, 40_000);

  test('on one keep-alive TLS connection a paced response leaves the next one unpaced', async () => {
    const agent = new https.Agent({ keepAlive: true, maxSockets: 1, ca: cert.cert });
    try {
      const [first, second] = await measureUntil(
        'paced then unpaced over TLS',
        async () => {
          const paced = await timedGet(server.port, '/media/four.m4s', { agent, ca: cert.cert, headers: { 'CMCD-Status': `rtp=${RTP_KBPS}` } });
          return [paced, await timedGet(server.port, '/media/big.m4s', { agent, ca: cert.cert })] as const;
        },
        // The paced rate is the first test's; here only what follows it matters.
        ([, unpaced]) => unpaced.rateAfterMarkBytesPerS > 10 * RATE_BYTES_PER_S,
      );
      expect(second.localPort).toBe(first.localPort);
      expect(second.rateAfterMarkBytesPerS).toBeGreaterThan(10 * RATE_BYTES_PER_S);
      const line = await server.logs.waitForResponse(second, (t) => t.path === '/media/big.m4s');
      expect(line).toMatchObject({ pacing: 'unpaced', maxPacingRateBytesPerS: 'unlimited', bytes: 10 * MB });
    } finally {
      agent.destroy();
    }
  }, 40_000);

  test('two pipelined paced requests over TLS: in order, each at its own rate, each with its own bytes', async () => {
    const range = { Range: `bytes=0-${2 * MB - 1}` };
    const run = () =>
      pipelinedExchange(
        server,
        [
          requestHead('127.0.0.1', '/media/four.m4s', { ...range, 'CMCD-Status': 'rtp=16000' }),
          requestHead('127.0.0.1', '/media/big.m4s', { ...range, 'CMCD-Status': 'rtp=32000' }),
        ],
        { tls: true },
      );
    const ratio = (t: ResponseTelemetry): number => t.achievedRateKbps! / t.appliedRateKbps!;
    const { responses, lines } = await measureUntil('pipelined over TLS', run, (r) => r.lines.every((t) => ratio(t) > 0.85));
    expect(responses.map((r) => [r.status, r.bodyBytes])).toEqual([[206, 2 * MB], [206, 2 * MB]]);
    expect(lines.map((t) => [t.path, t.pacing, t.appliedRateKbps, t.bytes])).toEqual([
      ['/media/four.m4s', 'paced', 16_000, 2 * MB],
      ['/media/big.m4s', 'paced', 32_000, 2 * MB],
    ]);
    for (const t of lines) {
      expect(ratio(t)).toBeGreaterThan(0.85);
      expect(ratio(t)).toBeLessThan(1.3);
    }
  }, 40_000);

  test('plain HTTP to the TLS port is closed and counted; the next TLS request is served', async () => {
    const plain = await rawExchange(server.port, 'GET /media/four.m4s HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    expect(plain.closed).toBe(true);
    expect(plain.status).toBeNull();
    const metrics = await timedGet(server.port, '/metrics', { ca: cert.cert, keepBody: true });
    expect(metricValue(metrics.body!.toString(), 'sammy_errors_total{kind="tls"}')).toBeGreaterThanOrEqual(1);
    const res = await timedGet(server.port, '/media/four.m4s', { ca: cert.cert });
    expect([res.status, res.bytes]).toEqual([200, 4 * MB]);
  }, 30_000);
});

describeTls('npm run serve -- --tls-cert FILE --tls-key FILE', () => {
  test('prints "listening on https://..." and serves over TLS; a key that is not the certificate\'s is refused before start', async () => {
    const dir = makeDir({ 'media/seg.m4s': randomFile(1000) });
    try {
      const cert = makeSelfSignedCert(dir);
      const other = makeSelfSignedCert(dir, 'other');
      const s = await startServerProcess({
        args: ['--media', join(dir, 'media'), '--port', '0', '--workers', '1', '--log-level', 'warn', '--tls-cert', cert.certFile, '--tls-key', cert.keyFile],
        cwd: serverDir,
      });
      try {
        expect(s.url).toBe(`https://127.0.0.1:${s.port}`);
        const res = await timedGet(s.port, '/media/seg.m4s', { ca: cert.cert });
        expect([res.status, res.bytes]).toEqual([200, 1000]);
      } finally {
        expect(await stop(s.process)).toBe(0);
      }
      const err = await startServerProcess({
        args: ['--media', join(dir, 'media'), '--port', '0', '--tls-cert', cert.certFile, '--tls-key', other.keyFile],
        cwd: serverDir,
      }).catch((e: unknown) => e as Error);
      expect((err as Error).message).toContain(`SAMMY_SERVER_INVALID_OPTION: invalid --tls-key: ${JSON.stringify(other.keyFile)}`);
    } finally {
      removeDir(dir);
    }
  }, 60_000);
});
