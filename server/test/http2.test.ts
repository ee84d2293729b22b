// HTTP/2 (--http2) on one real loopback connection per case, through node:http2 with
// a browser's flow-control windows: the connection's cap is the sum of the rtp of the
// streams with body left to send, none while an unpaced stream sends or none are
// left (h2-contract.ts, the tests nginx's module runs too); HTTP/1.1 clients still get
// HTTP/1.1 (ALPN), paced as before; resets, malformed CMCD and clients that never read
// leave nothing behind. Measured rates are printed.
import https from 'node:https';
import http2, { type ClientHttp2Session } from 'node:http2';
import { join } from 'node:path';
import { parseCli } from '../src/args.js';
import { resolveServerOptions } from '../src/options.js';
import { loadSocketControl } from '../src/socket.js';
import { h2PacingContract } from './h2-contract.js';
import {
  MB, h2Get, h2LocalPort, h2RequestsNeverRead, h2Rtp, makeDir, openFds, makeSelfSignedCert, measureUntil, metricValue, openH2Session, opensslMissing, randomFile, removeDir,
  sleep, startServer, timedGet, waitFor, type RunningServer, type SelfSignedCert,
} from './helpers.js';

const control = loadSocketControl();
const missing = opensslMissing() ?? (control.available ? null : `SO_MAX_PACING_RATE: ${control.unavailableReason}`);
const describeH2 = missing === null ? describe : describe.skip;
if (missing !== null) console.log(`SKIP: HTTP/2 tests need ${missing}`);

const mbps = (bytesPerS: number): string => (bytesPerS / MB).toFixed(2);

describeH2('HTTP/2 (--http2): streams share their connection by the sum of their rtp', () => {
  let dir: string;
  let cert: SelfSignedCert;
  let server: RunningServer;
  let session: ClientHttp2Session;

  beforeAll(async () => {
    dir = makeDir({ 'media/big.m4s': randomFile(10 * MB), 'media/five.m4s': randomFile(5 * MB), 'media/one.m4s': randomFile(MB) });
    cert = makeSelfSignedCert(dir);
    server = await startServer({ mediaDir: join(dir, 'media'), http2: true, tls: { certFile: cert.certFile, keyFile: cert.keyFile } });
    session = await openH2Session(server.port, cert.cert);
    // Past the connection's first ten segments, which the kernel never paces.
    await h2Get(session, '/media/one.m4s');
  });
  afterAll(async () => {
    session.close();
    await server.close();
    removeDir(dir);
  });

  h2PacingContract({
    name: 'h2',
    session: () => session,
    lineOf: (streamId) => server.logs.waitForMedia((t) => t.streamId === streamId && t.remotePort === h2LocalPort(session)),
    activeStreams: async () => server.app.sammy.http2Pacing!.activeStreams,
  });

  test('an HTTP/1.1 client (no h2 in its ALPN) gets HTTP/1.1, paced as before', async () => {
    const agent = new https.Agent({ keepAlive: true, maxSockets: 1 });
    try {
      await timedGet(server.port, '/media/one.m4s', { ca: cert.cert, agent });
      const paced = await measureUntil('HTTP/1.1 beside HTTP/2', () => timedGet(server.port, '/media/five.m4s', { ca: cert.cert, agent, headers: h2Rtp(40_000) }), (r) => Math.abs(r.rateAfterMarkBytesPerS / (5 * MB) - 1) < 0.1);
      console.log(`HTTP/1.1 by ALPN on the --http2 port, rtp=40000: ${mbps(paced.rateAfterMarkBytesPerS)} MB/s`);
      expect(paced.rateAfterMarkBytesPerS / (5 * MB)).toBeGreaterThan(0.9);
      expect(paced.rateAfterMarkBytesPerS / (5 * MB)).toBeLessThan(1.1);
      const line = await server.logs.waitForResponse(paced, (t) => t.path === '/media/five.m4s');
      expect(line).toMatchObject({ protocol: 'http/1.1', streamId: null, pacing: 'paced', appliedRateKbps: 40_000, maxPacingRateBytesPerS: 5 * MB });
    } finally {
      agent.destroy();
    }
  });

  test('Range, conditional requests, HEAD and hostile paths answer as over HTTP/1.1', async () => {
    const range = await h2Get(session, '/media/one.m4s', { range: 'bytes=100-199' });
    expect([range.status, range.bytes, range.headers['content-range']]).toEqual([206, 100, `bytes 100-199/${MB}`]);
    const etag = String(range.headers['etag']);
    const notModified = await h2Get(session, '/media/one.m4s', { 'if-none-match': etag });
    expect([notModified.status, notModified.bytes]).toEqual([304, 0]);
    const head = await h2Get(session, '/media/one.m4s', { ':method': 'HEAD' });
    expect([head.status, head.bytes, head.headers['content-length']]).toEqual([200, 0, String(MB)]);
    const outside = await h2Get(session, '/media/%2e%2e/%2e%2e/etc/passwd');
    expect(outside.status).toBe(400);
    const unsatisfiable = await h2Get(session, '/media/one.m4s', { range: `bytes=${2 * MB}-` });
    expect(unsatisfiable.status).toBe(416);
  });

  test('a header block over the limit resets its stream; the session serves on', async () => {
    const oversized = session.request({ ':path': '/media/one.m4s', 'x-big': 'a'.repeat(20_000) });
    oversized.on('error', () => undefined);
    oversized.end();
    await new Promise((resolve) => oversized.once('close', resolve));
    expect(oversized.rstCode).toBe(http2.constants.NGHTTP2_ENHANCE_YOUR_CALM);
    const after = await h2Get(session, '/media/one.m4s');
    expect([after.status, after.bytes]).toEqual([200, MB]);
  });
});

describeH2('HTTP/2: a client that never reads', () => {
  let dir: string;
  let cert: SelfSignedCert;
  let server: RunningServer;

  beforeAll(async () => {
    dir = makeDir({ 'media/big.m4s': randomFile(10 * MB) });
    cert = makeSelfSignedCert(dir);
    server = await startServer({ mediaDir: join(dir, 'media'), http2: true, tls: { certFile: cert.certFile, keyFile: cert.keyFile }, logLevel: 'info' });
  });
  afterAll(async () => {
    await server.close();
    removeDir(dir);
  });

  test('leaves no stream state, share or descriptor behind once it goes', async () => {
    const fdsBefore = openFds();
    // HTTP/2's default 64 KB windows: the server fills them and waits.
    const session = await openH2Session(server.port, cert.cert, { browserWindows: false });
    const streams = h2RequestsNeverRead(session, '/media/big.m4s', [h2Rtp(8000), {}, h2Rtp(40_000)]);
    await waitFor(() => (server.app.sammy.http2Pacing!.activeStreams === 3 ? true : null));
    await sleep(300);
    const localPort = h2LocalPort(session);
    session.destroy();
    await waitFor(() => (server.app.sammy.http2Pacing!.activeStreams === 0 ? true : null));
    const lines = await waitFor(() => {
      const mine = server.logs.media().filter((t) => t.remotePort === localPort);
      return mine.length === streams.length ? mine : null;
    });
    expect(lines.map((t) => t.aborted)).toEqual([true, true, true]);
    const metrics = await timedGet(server.port, '/metrics', { ca: cert.cert, keepBody: true });
    expect(metricValue(metrics.body!.toString(), 'sammy_h2_streams_active')).toBe(0);
    expect(metricValue(metrics.body!.toString(), 'sammy_errors_total{kind="server"}') ?? 0).toBe(0);
    if (fdsBefore !== null) await waitFor(() => (openFds()! <= fdsBefore ? true : null));
  });
});

describe('--http2 needs TLS', () => {
  test('without --tls-cert/--tls-key it is refused, naming the option and what to give', () => {
    const dir = makeDir({ 'media/one.m4s': 'x' });
    try {
      expect(() => resolveServerOptions({ mediaDir: join(dir, 'media'), http2: true })).toThrow(/invalid http2: true \(accepted: .*--tls-cert\/--tls-key/);
      expect(parseCli(['--media', dir, '--http2'], '/')).toMatchObject({ http2: true });
    } finally {
      removeDir(dir);
    }
  });
});
