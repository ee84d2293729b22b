// HTTP/2 (--http2) on one real loopback connection per case, through node:http2 with
// a browser's flow-control windows: the connection's cap is the sum of the rtp of the
// streams with body left to send, none while an unpaced stream sends or none are
// left; HTTP/1.1 clients still get HTTP/1.1 (ALPN), paced as before; resets, malformed
// CMCD and clients that never read leave nothing behind. Measured rates are printed.
import https from 'node:https';
import http2, { type ClientHttp2Session, type IncomingHttpHeaders } from 'node:http2';
import { join } from 'node:path';
import { parseCli } from '../src/args.js';
import { resolveServerOptions } from '../src/options.js';
import { loadSocketControl } from '../src/socket.js';
import {
  MB, makeDir, openFds, makeSelfSignedCert, measureUntil, metricValue, opensslMissing, randomFile, removeDir, sleep, startServer, timedGet, waitFor,
  type RunningServer, type SelfSignedCert,
} from './helpers.js';

const control = loadSocketControl();
const missing = opensslMissing() ?? (control.available ? null : `SO_MAX_PACING_RATE: ${control.unavailableReason}`);
const describeH2 = missing === null ? describe : describe.skip;
if (missing !== null) console.log(`SKIP: HTTP/2 tests need ${missing}`);

/**
 * Chromium's HTTP/2 windows (6 MB per stream, 15 MB per connection). With HTTP/2's
 * default 64 KB the client's WINDOW_UPDATEs, not the cap, set the pace: 4.4-4.6 MB/s
 * at a 5 MB/s cap here.
 */
const STREAM_WINDOW_BYTES = 6 * 1024 * 1024;
const CONNECTION_WINDOW_BYTES = 15 * 1024 * 1024;
/** Rates are measured past this many bytes of a stream (its start shares the connection's unpaced first segments). */
const MARK_BYTES = MB;

function openSession(port: number, cert: SelfSignedCert, o: { browserWindows?: boolean } = {}): Promise<ClientHttp2Session> {
  const browserWindows = o.browserWindows ?? true;
  return new Promise((resolve, reject) => {
    const session = http2.connect(`https://127.0.0.1:${port}`, { ca: cert.cert, ...(browserWindows && { settings: { initialWindowSize: STREAM_WINDOW_BYTES } }) });
    session.once('error', reject);
    session.once('connect', () => {
      if (browserWindows) session.setLocalWindowSize(CONNECTION_WINDOW_BYTES);
      resolve(session);
    });
  });
}

interface StreamResult {
  status: number;
  headers: IncomingHttpHeaders;
  streamId: number;
  bytes: number;
  startMs: number;
  endMs: number;
  /** Bytes per second from MARK_BYTES to the end. */
  rateAfterMarkBytesPerS: number;
  /** When this stream's byte count passed `atBytes` (for rates over a part of it). */
  at: (atBytes: number) => number;
}

/** One GET on the session; `onData` sees the running byte count (and may reset the stream). */
function h2Get(session: ClientHttp2Session, path: string, headers: Record<string, string> = {}, onData?: (bytes: number, stream: http2.ClientHttp2Stream) => void): Promise<StreamResult> {
  return new Promise((resolve, reject) => {
    const startMs = performance.now();
    const stream = session.request({ ':path': path, ...headers });
    let responseHeaders: IncomingHttpHeaders = {};
    let bytes = 0;
    const marks: Array<[number, number]> = [];
    stream.on('response', (h) => (responseHeaders = h));
    stream.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
      marks.push([bytes, performance.now()]);
      onData?.(bytes, stream);
    });
    const at = (atBytes: number): number => marks.find(([b]) => b >= atBytes)?.[1] ?? Infinity;
    const done = (): void => {
      const endMs = performance.now();
      const markMs = at(MARK_BYTES);
      resolve({
        status: Number(responseHeaders[':status']),
        headers: responseHeaders,
        streamId: stream.id!,
        bytes,
        startMs,
        endMs,
        rateAfterMarkBytesPerS: markMs < endMs ? (bytes - marks.find(([b]) => b >= MARK_BYTES)![0]) / ((endMs - markMs) / 1000) : Infinity,
        at,
      });
    };
    stream.on('end', done);
    // A stream the client resets itself ends here.
    stream.on('close', () => {
      if (stream.rstCode !== http2.constants.NGHTTP2_NO_ERROR) done();
    });
    stream.on('error', reject);
    stream.end();
  });
}

const rtp = (kbps: number): Record<string, string> => ({ 'cmcd-status': `rtp=${kbps}` });
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
    session = await openSession(server.port, cert);
    // Past the connection's first ten segments, which the kernel never paces.
    await h2Get(session, '/media/one.m4s');
  });
  afterAll(async () => {
    session.close();
    await server.close();
    removeDir(dir);
  });

  test('one stream with rtp=40000 on 10 MB arrives at 5 MB/s (+-10%); its line says h2, its stream, the cap', async () => {
    const paced = await measureUntil('one paced stream', () => h2Get(session, '/media/big.m4s', rtp(40_000)), (r) => Math.abs(r.rateAfterMarkBytesPerS / (5 * MB) - 1) < 0.1);
    console.log(`h2, one stream at rtp=40000 (5 MB/s): ${mbps(paced.rateAfterMarkBytesPerS)} MB/s`);
    expect([paced.status, paced.bytes, paced.headers['server-timing']]).toEqual([200, 10 * MB, 'pace;dur=40000;desc="paced"']);
    expect(paced.rateAfterMarkBytesPerS / (5 * MB)).toBeGreaterThan(0.9);
    expect(paced.rateAfterMarkBytesPerS / (5 * MB)).toBeLessThan(1.1);
    const line = await server.logs.waitForMedia((t) => t.streamId === paced.streamId && t.remotePort === localPortOf(session));
    expect(line).toMatchObject({ protocol: 'h2', pacing: 'paced', appliedRateKbps: 40_000, bytes: 10 * MB, aborted: false, maxPacingRateBytesPerS: 5 * MB, burstMechanism: 'kernel' });
  });

  test('two streams with rtp=20000 at once arrive together at 5 MB/s (+-10%), each at 2.5 MB/s (+-20%)', async () => {
    const both = () => Promise.all([h2Get(session, '/media/five.m4s', rtp(20_000)), h2Get(session, '/media/five.m4s', rtp(20_000))]);
    const together = (rs: StreamResult[]): number => (rs.length * 5 * MB - MARK_BYTES * rs.length) / ((Math.max(...rs.map((r) => r.endMs)) - Math.max(...rs.map((r) => r.at(MARK_BYTES)))) / 1000);
    const pair = await measureUntil('two paced streams', both, (rs) => Math.abs(together(rs) / (5 * MB) - 1) < 0.1 && rs.every((r) => Math.abs(r.rateAfterMarkBytesPerS / (2.5 * MB) - 1) < 0.2));
    console.log(`h2, two streams at rtp=20000: together ${mbps(together(pair))} MB/s, each ${pair.map((r) => mbps(r.rateAfterMarkBytesPerS)).join(' and ')} MB/s`);
    expect(together(pair) / (5 * MB)).toBeGreaterThan(0.9);
    expect(together(pair) / (5 * MB)).toBeLessThan(1.1);
    for (const r of pair) {
      expect(r.bytes).toBe(5 * MB);
      expect(r.rateAfterMarkBytesPerS / (2.5 * MB)).toBeGreaterThan(0.8);
      expect(r.rateAfterMarkBytesPerS / (2.5 * MB)).toBeLessThan(1.2);
    }
  });

  test('unequal rtp (30000 + 10000): the sum holds; the split is HTTP/2 round-robin, not the rtp ratio (measured, printed)', async () => {
    const [fast, slow] = await Promise.all([h2Get(session, '/media/five.m4s', rtp(30_000)), h2Get(session, '/media/five.m4s', rtp(10_000))]);
    const firstEndMs = Math.min(fast.endMs, slow.endMs);
    // While both send: bytes each had received by the time the first ended, past the mark.
    const shareOf = (r: StreamResult): number => ((r === fast ? 5 * MB : bytesAt(r, firstEndMs)) - MARK_BYTES) / ((firstEndMs - r.at(MARK_BYTES)) / 1000);
    const fastShare = fast.endMs <= slow.endMs ? fast.rateAfterMarkBytesPerS : shareOf(fast);
    const slowShare = slow.endMs <= fast.endMs ? slow.rateAfterMarkBytesPerS : (bytesAt(slow, firstEndMs) - MARK_BYTES) / ((firstEndMs - slow.at(MARK_BYTES)) / 1000);
    console.log(`h2, rtp=30000 beside rtp=10000 (cap 5 MB/s): while both sent, ${mbps(fastShare)} and ${mbps(slowShare)} MB/s`);
    expect(fastShare + slowShare).toBeGreaterThan(0.8 * 5 * MB);
    expect(fastShare + slowShare).toBeLessThan(1.2 * 5 * MB);
  });

  test('a stream without rtp beside a paced one is not slowed to the paced rate', async () => {
    let unpaced: Promise<StreamResult> | null = null;
    let pacedStream: http2.ClientHttp2Stream | null = null;
    // Paced at 1 MB/s; past its first MB the unpaced stream starts.
    const paced = h2Get(session, '/media/big.m4s', rtp(8000), (bytes, stream) => {
      pacedStream = stream;
      if (bytes >= MARK_BYTES && unpaced === null) unpaced = h2Get(session, '/media/five.m4s');
    });
    const beside = await (await waitFor(() => unpaced));
    console.log(`h2, an unpaced 5 MB stream beside one at rtp=8000 (1 MB/s): ${mbps(beside.rateAfterMarkBytesPerS)} MB/s`);
    expect(beside.headers['server-timing']).toBe('pace;dur=0;desc="unpaced"');
    expect(beside.rateAfterMarkBytesPerS).toBeGreaterThan(4 * MB);
    // What is left of the paced one would take seconds.
    pacedStream!.close(http2.constants.NGHTTP2_CANCEL);
    await paced;
  }, 30_000);

  test('a stream reset mid-body takes its share with it: the other goes on at its own rtp', async () => {
    // Two at rtp=20000 (cap 5 MB/s); the first is reset after 1 MB. What it had given
    // the kernel leaves in its share; then the share goes. Kept, the other stream would
    // run at 5 MB/s; taken at once, its queued bytes would leave in the other's 2.5.
    const measure = async (): Promise<{ survivor: StreamResult; cut: StreamResult }> => {
      const [cut, survivor] = await Promise.all([
        h2Get(session, '/media/big.m4s', rtp(20_000), (bytes, stream) => {
          if (bytes >= MARK_BYTES && !stream.destroyed) stream.close(http2.constants.NGHTTP2_CANCEL);
        }),
        h2Get(session, '/media/five.m4s', rtp(20_000)),
      ]);
      return { survivor, cut };
    };
    const { survivor, cut } = await measureUntil('a reset stream', measure, (m) => Math.abs(m.survivor.rateAfterMarkBytesPerS / (2.5 * MB) - 1) < 0.2);
    console.log(`h2, after a stream at rtp=20000 is reset, the other (rtp=20000): ${mbps(survivor.rateAfterMarkBytesPerS)} MB/s`);
    expect(survivor.bytes).toBe(5 * MB);
    expect(survivor.rateAfterMarkBytesPerS / (2.5 * MB)).toBeGreaterThan(0.8);
    expect(survivor.rateAfterMarkBytesPerS / (2.5 * MB)).toBeLessThan(1.2);
    const line = await server.logs.waitForMedia((t) => t.streamId === cut.streamId && t.remotePort === localPortOf(session));
    expect(line).toMatchObject({ protocol: 'h2', pacing: 'paced', aborted: true });
    expect(line.bytes).toBeLessThan(10 * MB);
  }, 30_000);

  test('after the paced streams end, the next stream is unpaced (its line: no cap)', async () => {
    const paced = await h2Get(session, '/media/one.m4s', rtp(8000));
    expect(paced.headers['server-timing']).toBe('pace;dur=8000;desc="paced"');
    const next = await h2Get(session, '/media/five.m4s');
    console.log(`h2, the stream after a paced one (rtp=8000) ended: ${mbps(next.rateAfterMarkBytesPerS)} MB/s`);
    expect(next.rateAfterMarkBytesPerS).toBeGreaterThan(4 * MB);
    const line = await server.logs.waitForMedia((t) => t.streamId === next.streamId && t.remotePort === localPortOf(session));
    expect(line).toMatchObject({ protocol: 'h2', pacing: 'unpaced', maxPacingRateBytesPerS: 'unlimited' });
  });

  test('an HTTP/1.1 client (no h2 in its ALPN) gets HTTP/1.1, paced as before', async () => {
    const agent = new https.Agent({ keepAlive: true, maxSockets: 1 });
    try {
      await timedGet(server.port, '/media/one.m4s', { ca: cert.cert, agent });
      const paced = await measureUntil('HTTP/1.1 beside HTTP/2', () => timedGet(server.port, '/media/five.m4s', { ca: cert.cert, agent, headers: rtp(40_000) }), (r) => Math.abs(r.rateAfterMarkBytesPerS / (5 * MB) - 1) < 0.1);
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

  test('a header block over the limit resets its stream; 100 streams cancelled at once leave no state; the session serves on', async () => {
    const oversized = session.request({ ':path': '/media/one.m4s', 'x-big': 'a'.repeat(20_000) });
    oversized.on('error', () => undefined);
    oversized.end();
    await new Promise((resolve) => oversized.once('close', resolve));
    expect(oversized.rstCode).toBe(http2.constants.NGHTTP2_ENHANCE_YOUR_CALM);
    for (let i = 0; i < 100; i++) {
      const stream = session.request({ ':path': '/media/one.m4s', ...rtp(8000) });
      stream.on('error', () => undefined);
      stream.close(http2.constants.NGHTTP2_CANCEL);
    }
    const after = await h2Get(session, '/media/one.m4s');
    expect([after.status, after.bytes]).toEqual([200, MB]);
    await waitFor(() => (server.app.sammy.http2Pacing!.activeStreams === 0 ? true : null));
  });

  test.each([
    ['rtp=abc', /rtp/],
    ['rtp=-1', /rtp/],
    ['v=3,rtp=5000', /version 3/],
  ])('malformed CMCD (%s) is ignored as over HTTP/1.1: served unpaced, noted, counted', async (header, problem) => {
    const countOf = async (): Promise<number> => {
      const metrics = await h2Text(session, '/metrics');
      return metricValue(metrics, 'sammy_errors_total{kind="cmcd"}') ?? 0;
    };
    const before = await countOf();
    const res = await h2Get(session, '/media/one.m4s', { 'cmcd-status': header });
    expect([res.status, res.bytes, res.headers['server-timing']]).toEqual([200, MB, 'pace;dur=0;desc="unpaced"']);
    const line = await server.logs.waitForMedia((t) => t.streamId === res.streamId && t.remotePort === localPortOf(session));
    expect(line.pacing).toBe('unpaced');
    expect(line.cmcdProblem).toMatch(problem);
    expect(await countOf()).toBe(before + 1);
  });

});

/** A small response's body as text. */
function h2Text(session: ClientHttp2Session, path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const stream = session.request({ ':path': path });
    const chunks: Buffer[] = [];
    stream.on('data', (c: Buffer) => chunks.push(c));
    stream.on('end', () => resolve(Buffer.concat(chunks).toString()));
    stream.on('error', reject);
    stream.end();
  });
}

function localPortOf(session: ClientHttp2Session): number {
  return (session.socket as { localPort?: number }).localPort ?? -1;
}

/** Bytes a stream had received by `atMs`. */
function bytesAt(r: StreamResult, atMs: number): number {
  let lo = 0;
  let hi = r.bytes;
  // r.at is monotonic in bytes: binary search for the last count reached by atMs.
  while (hi - lo > 16 * 1024) {
    const mid = Math.floor((lo + hi) / 2);
    if (r.at(mid) <= atMs) lo = mid;
    else hi = mid;
  }
  return lo;
}

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
    const session = await openSession(server.port, cert, { browserWindows: false });
    const streams = [rtp(8000), {}, rtp(40_000)].map((headers) => {
      const stream = session.request({ ':path': '/media/big.m4s', ...headers });
      stream.pause();
      stream.on('error', () => undefined);
      stream.end();
      return stream;
    });
    await waitFor(() => (server.app.sammy.http2Pacing!.activeStreams === 3 ? true : null));
    await sleep(300);
    const localPort = localPortOf(session);
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
