// The zero-copy body path (README "Body path") on real sockets: the kernel sends the
// file, and what arrives must be the file's bytes exactly (sha256) for whole files,
// ranges, transfers cut and retried, pipelined and keep-alive responses; Node's idle
// timer must neither cut a slow transfer that moves nor spare one that stalls; and
// where the sender cannot start, `auto` streams and `sendfile` refuses to start.
import { createHash } from 'node:crypto';
import { readdirSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { buildApp } from '../src/app.js';
import type { BurstMode } from '../src/options.js';
import { loadSendfileBinding } from '../src/sendfile-binding.js';
import { LogCapture, MB, makeDir, metricValue, randomFile, removeDir, sleep, startServer, timedGet, waitFor, type ClientExchange, type RunningServer } from './helpers.js';

const sha256 = (data: Buffer): string => createHash('sha256').update(data).digest('hex');

const binding = loadSendfileBinding();
const describeZeroCopy = binding.available ? describe : describe.skip;
if (!binding.available) console.log(`SKIP: zero-copy tests need sendfile and epoll: ${binding.reason}`);

const FILES: Record<string, Buffer> = {
  'empty.m4s': Buffer.alloc(0),
  'one.m4s': randomFile(1),
  'packet.m4s': randomFile(1448),
  'seg.m4s': randomFile(300_000),
  'big.m4s': randomFile(6 * MB),
};
const BIG = FILES['big.m4s']!;
/** 10 MB/s: past loopback's unpaced first 10 segments, the 6 MB file takes about 0.6 s. */
const FAST_RTP = 'rtp=80000';

function openFds(): number {
  return readdirSync('/proc/self/fd').length;
}

/** Waits until no response holds pacing state and the sender holds no transfer. */
async function expectIdle(server: RunningServer): Promise<void> {
  const idle = (): true | null => (server.app.sammy.pacing.activeResponses === 0 && server.app.sammy.sender?.inFlight === 0 ? true : null);
  await waitFor(idle, 5000).catch(() => undefined);
  expect(server.app.sammy.pacing.activeResponses).toBe(0);
  expect(server.app.sammy.sender?.inFlight).toBe(0);
}

async function get(server: RunningServer, path: string, headers: Record<string, string> = {}, agent?: http.Agent) {
  return timedGet(server.port, path, { headers, keepBody: true, ...(agent ? { agent } : {}) });
}

/** Reads a response until `stopAtBodyBytes` body bytes have come, then resets the connection. */
function readThenReset(port: number, path: string, headers: string, stopAtBodyBytes: number): Promise<{ body: Buffer } & ClientExchange> {
  return new Promise((resolve, reject) => {
    const startedAtEpochMs = Date.now();
    const socket = net.connect(port, '127.0.0.1', () => socket.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n${headers}\r\n`));
    let data = Buffer.alloc(0);
    socket.on('data', (chunk: Buffer) => {
      data = Buffer.concat([data, chunk]);
      const headEnd = data.indexOf('\r\n\r\n');
      if (headEnd === -1 || data.length - headEnd - 4 < stopAtBodyBytes || socket.destroyed) return;
      const localPort = socket.localPort!;
      socket.resetAndDestroy();
      resolve({ body: data.subarray(headEnd + 4), localPort, startedAtEpochMs });
    });
    socket.on('error', reject);
  });
}

interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

/** Splits what came back on one connection into responses (no body for HEAD and 304). */
function parseResponses(data: Buffer, methods: string[]): RawResponse[] {
  const out: RawResponse[] = [];
  let at = 0;
  for (const method of methods) {
    const headEnd = data.indexOf('\r\n\r\n', at);
    if (headEnd === -1) break;
    const [statusLine, ...lines] = data.subarray(at, headEnd).toString('latin1').split('\r\n');
    const headers: Record<string, string> = {};
    for (const line of lines) headers[line.slice(0, line.indexOf(':')).toLowerCase()] = line.slice(line.indexOf(':') + 1).trim();
    const status = Number(statusLine!.split(' ')[1]);
    const length = method === 'HEAD' || status === 304 ? 0 : Number(headers['content-length']);
    out.push({ status, headers, body: data.subarray(headEnd + 4, headEnd + 4 + length) });
    at = headEnd + 4 + length;
  }
  return out;
}

/** Writes every request in one write and collects the answers until the server closes (the last asks it to). */
function pipelined(port: number, requests: string[]): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.write(requests.join('')));
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('end', () => resolve(Buffer.concat(chunks)));
    socket.on('error', reject);
  });
}

describeZeroCopy.each([['kernel'], ['app']] as Array<[BurstMode]>)('zero-copy bodies (--burst-mode %s)', (burstMode) => {
  let mediaDir: string;
  let server: RunningServer;

  beforeAll(async () => {
    mediaDir = makeDir(FILES);
    server = await startServer({ mediaDir, burstMode, bodyPath: 'sendfile' });
  });
  afterAll(async () => {
    await server.close();
    removeDir(mediaDir);
  });

  test('whole files, paced and unpaced, arrive byte-identical (sha256), each line saying sendfile', async () => {
    for (const [name, content] of Object.entries(FILES)) {
      for (const headers of [{}, { 'CMCD-Status': FAST_RTP }] as Array<Record<string, string>>) {
        const res = await get(server, `/media/${name}`, headers);
        expect([name, res.status, res.bytes]).toEqual([name, 200, content.length]);
        expect(sha256(res.body!)).toBe(sha256(content));
        const line = await server.logs.waitForResponse(res);
        expect(line).toMatchObject({ bodyPath: 'sendfile', bytes: content.length, aborted: false });
      }
    }
    const metrics = (await get(server, '/metrics')).body!.toString();
    expect(metricValue(metrics, 'sammy_media_body_responses_total{body_path="sendfile"}')).toBe(2 * Object.keys(FILES).length);
    expect(metricValue(metrics, 'sammy_media_body_responses_total{body_path="stream"}')).toBeNull();
    await expectIdle(server);
  }, 30_000);

  test('a paced line says what TCP did once the last byte left, also when the client sent Connection: close', async () => {
    // Node closes its own descriptor as soon as it has written the last byte; the sender
    // reads TCP_INFO on its duplicate when that byte has left.
    const res = await get(server, '/media/big.m4s', { 'CMCD-Status': 'rtp=40000', Connection: 'close' });
    expect(sha256(res.body!)).toBe(sha256(BIG));
    const line = await server.logs.waitForResponse(res);
    expect(line).toMatchObject({ bodyPath: 'sendfile', pacing: 'paced', aborted: false, bytes: BIG.length });
    expect(line.maxPacingRateBytesPerS).toBe((burstMode === 'app' ? 2 : 1) * 5 * MB);
    expect(line.bytesSent).toBeGreaterThanOrEqual(BIG.length);
    expect(line.rttUs).toBeGreaterThan(0);
    // Logged once the last byte had left: not before the paced body could have.
    expect(line.durationMs).toBeGreaterThan(0.8 * ((BIG.length - 64 * 1024) / (5 * MB)) * 1000);
    await expectIdle(server);
  }, 30_000);

  test('ranges get 206 with exactly the bytes asked for (sha256)', async () => {
    const size = BIG.length;
    const cases: Array<[string, number, number]> = [
      ['bytes=0-0', 0, 1],
      ['bytes=1448-2895', 1448, 2896],
      ['bytes=1000-2999999', 1000, 3_000_000],
      ['bytes=-1000', size - 1000, size],
      [`bytes=${size - 5000}-`, size - 5000, size],
    ];
    for (const [range, from, to] of cases) {
      for (const headers of [{ range }, { range, 'CMCD-Status': FAST_RTP }] as Array<Record<string, string>>) {
        const res = await get(server, '/media/big.m4s', headers);
        expect([range, res.status, res.headers['content-range']]).toEqual([range, 206, `bytes ${from}-${to - 1}/${size}`]);
        expect(sha256(res.body!)).toBe(sha256(BIG.subarray(from, to)));
        const line = await server.logs.waitForResponse(res);
        expect(line).toMatchObject({ bodyPath: 'sendfile', status: 206, bytes: to - from, aborted: false });
      }
    }
    await expectIdle(server);
  }, 30_000);

  test('a paced transfer cut mid-body, then retried from where it stopped and whole, is byte-identical', async () => {
    await get(server, '/media/seg.m4s');
    await expectIdle(server);
    const fdsBefore = openFds();
    // 5 MB/s: the client leaves about 0.4 s into a 1.2 s transfer.
    const cut = await readThenReset(server.port, '/media/big.m4s', 'CMCD-Status: rtp=40000\r\n', 2 * MB);
    const cutLine = await server.logs.waitForResponse(cut);
    expect(cutLine).toMatchObject({ bodyPath: 'sendfile', aborted: true, pacing: 'paced' });
    expect(cutLine.bytes).toBeGreaterThanOrEqual(cut.body.length);
    expect(cutLine.bytes).toBeLessThan(BIG.length);
    expect(sha256(cut.body)).toBe(sha256(BIG.subarray(0, cut.body.length)));

    const rest = await get(server, '/media/big.m4s', { range: `bytes=${cut.body.length}-`, 'CMCD-Status': 'rtp=40000' });
    expect(rest.status).toBe(206);
    expect(sha256(Buffer.concat([cut.body, rest.body!]))).toBe(sha256(BIG));
    const whole = await get(server, '/media/big.m4s', { 'CMCD-Status': FAST_RTP });
    expect(sha256(whole.body!)).toBe(sha256(BIG));
    await expectIdle(server);
    // The sender has closed its duplicate of the cut socket and its file.
    await waitFor(() => (openFds() <= fdsBefore ? true : null), 5000).catch(() => undefined);
    expect(openFds()).toBeLessThanOrEqual(fdsBefore);
  }, 30_000);
});

describeZeroCopy('zero-copy responses sharing a connection', () => {
  let mediaDir: string;
  let server: RunningServer;

  beforeAll(async () => {
    mediaDir = makeDir(FILES);
    server = await startServer({ mediaDir, bodyPath: 'sendfile' });
  });
  afterAll(async () => {
    await server.close();
    removeDir(mediaDir);
  });

  test('pipelined: whole, range, HEAD, 304 and paced bodies come back in order, each byte-identical', async () => {
    const etag = (await get(server, '/media/seg.m4s')).headers['etag'] as string;
    const head = (method: string, path: string, extra = ''): string => `${method} ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n${extra}\r\n`;
    const requests: Array<[string, string, string]> = [
      ['GET', '/media/big.m4s', 'CMCD-Status: rtp=80000\r\n'],
      ['GET', '/media/seg.m4s', 'Range: bytes=100-199\r\n'],
      ['HEAD', '/media/big.m4s', ''],
      ['GET', '/media/seg.m4s', `If-None-Match: ${etag}\r\n`],
      ['GET', '/media/empty.m4s', ''],
      ['GET', '/media/seg.m4s', 'CMCD-Status: rtp=20000\r\n'],
      ['GET', '/media/packet.m4s', 'Connection: close\r\n'],
    ];
    const data = await pipelined(
      server.port,
      requests.map(([method, path, extra]) => head(method, path, extra)),
    );
    const responses = parseResponses(
      data,
      requests.map(([method]) => method),
    );
    expect(responses.map((r) => r.status)).toEqual([200, 206, 200, 304, 200, 200, 200]);
    const expected = [BIG, FILES['seg.m4s']!.subarray(100, 200), Buffer.alloc(0), Buffer.alloc(0), Buffer.alloc(0), FILES['seg.m4s']!, FILES['packet.m4s']!];
    expect(responses.map((r) => sha256(r.body))).toEqual(expected.map(sha256));
    // Nothing beyond the last response: no body overlapped or repeated.
    expect(data.length).toBe(data.lastIndexOf(responses.at(-1)!.body) + responses.at(-1)!.body.length);
    await expectIdle(server);
  }, 30_000);

  test('keep-alive: 20 requests on one connection, paced and not, each body byte-identical', async () => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const ports = new Set<number>();
      for (let i = 0; i < 20; i++) {
        const name = i % 3 === 0 ? 'big.m4s' : 'seg.m4s';
        const res = await get(server, `/media/${name}`, i % 2 === 0 ? { 'CMCD-Status': FAST_RTP } : {}, agent);
        ports.add(res.localPort);
        expect(sha256(res.body!)).toBe(sha256(FILES[name]!));
      }
      expect(ports.size).toBe(1);
    } finally {
      agent.destroy();
    }
    await expectIdle(server);
  }, 30_000);
});

describeZeroCopy("Node's idle timer while the kernel sends", () => {
  let mediaDir: string;
  let server: RunningServer;
  const IDLE_MS = 1000;

  beforeAll(async () => {
    mediaDir = makeDir(FILES);
    server = await startServer({ mediaDir, bodyPath: 'sendfile', limits: { idleTimeoutMs: IDLE_MS, keepAliveTimeoutMs: IDLE_MS } });
  });
  afterAll(async () => {
    await server.close();
    removeDir(mediaDir);
  });

  test('a paced transfer three idle timeouts long that keeps moving is not cut', async () => {
    // 6 MB at 2 MB/s: about 3 s during which Node itself writes nothing.
    const res = await get(server, '/media/big.m4s', { 'CMCD-Status': 'rtp=16000' });
    expect(res.elapsedMs).toBeGreaterThan(2 * IDLE_MS);
    expect(sha256(res.body!)).toBe(sha256(BIG));
    await expectIdle(server);
  }, 30_000);

  test('a client that stops reading is cut within two idle timeouts of stalling, leaving nothing behind', async () => {
    const startMs = performance.now();
    const startedAtEpochMs = Date.now();
    const socket = net.connect(server.port, '127.0.0.1', () => {
      socket.write('GET /media/big.m4s HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
      // Read nothing: the kernel fills both buffers, then the transfer stalls.
      socket.pause();
    });
    socket.on('error', () => undefined);
    await new Promise((resolve) => socket.once('connect', resolve));
    const localPort = socket.localPort!;
    try {
      const line = await server.logs.waitForResponse({ localPort, startedAtEpochMs }, () => true, 10_000);
      expect(performance.now() - startMs).toBeLessThan(4 * IDLE_MS);
      expect(line).toMatchObject({ bodyPath: 'sendfile', aborted: true });
      expect(line.bytes).toBeLessThan(BIG.length);
      await expectIdle(server);
    } finally {
      socket.destroy();
    }
    const ok = await get(server, '/media/seg.m4s');
    expect(sha256(ok.body!)).toBe(sha256(FILES['seg.m4s']!));
  }, 30_000);
});

describe('where the zero-copy sender cannot start', () => {
  const noSender = async (): Promise<never> => {
    throw new Error('cannot load libc through koffi: test');
  };

  test('auto: every body streams, the reason is logged once, /healthz says stream', async () => {
    const dir = makeDir({ 'seg.m4s': FILES['seg.m4s']! });
    const logs = new LogCapture();
    const app = await buildApp({ mediaDir: dir, logLevel: 'info', bodyPath: 'auto' }, { logStream: logs, startSender: noSender });
    await app.listen({ host: '127.0.0.1', port: 0 });
    const server = { app, port: (app.server.address() as net.AddressInfo).port, logs, close: () => app.close() };
    try {
      for (let i = 0; i < 2; i++) {
        const res = await get(server, '/media/seg.m4s', { 'CMCD-Status': 'rtp=8000' });
        expect(sha256(res.body!)).toBe(sha256(FILES['seg.m4s']!));
        expect(await logs.waitForResponse(res)).toMatchObject({ bodyPath: 'stream' });
      }
      expect(logs.lines.filter((l) => String(l['msg']).includes('zero-copy sender unavailable'))).toHaveLength(1);
      expect(JSON.parse((await get(server, '/healthz')).body!.toString())).toMatchObject({ bodyPath: 'stream' });
      expect(app.sammy.sender).toBeNull();
    } finally {
      await app.close();
      removeDir(dir);
    }
  });

  test('sendfile: the server refuses to start, naming the option and the reason', async () => {
    const dir = makeDir({ 'seg.m4s': FILES['seg.m4s']! });
    try {
      await expect(buildApp({ mediaDir: dir, logLevel: 'silent', bodyPath: 'sendfile' }, { startSender: noSender })).rejects.toMatchObject({
        code: 'SAMMY_SERVER_SENDFILE_UNAVAILABLE',
        option: 'bodyPath',
        message: expect.stringContaining('cannot load libc through koffi: test'),
      });
    } finally {
      removeDir(dir);
    }
  });

  test('stream: no sender is started and every line says stream', async () => {
    const dir = makeDir({ 'seg.m4s': FILES['seg.m4s']! });
    const server = await startServer({ mediaDir: dir, bodyPath: 'stream' });
    try {
      expect(server.app.sammy.sender).toBeNull();
      const res = await get(server, '/media/seg.m4s');
      expect(await server.logs.waitForResponse(res)).toMatchObject({ bodyPath: 'stream' });
    } finally {
      await server.close();
      removeDir(dir);
    }
  });
});

describeZeroCopy('stopping the sender', () => {
  test('transfers in flight end (aborted), their connections close, the server still stops', async () => {
    const dir = makeDir({ 'big.m4s': BIG });
    const server = await startServer({ mediaDir: dir, bodyPath: 'sendfile' });
    let received = 0;
    const closed = new Promise<void>((resolve) => {
      const request = http.get({ host: '127.0.0.1', port: server.port, path: '/media/big.m4s', headers: { 'CMCD-Status': 'rtp=4000' } }, (res) => {
        res.on('data', (c: Buffer) => (received += c.length));
        res.on('error', () => resolve());
        res.on('close', () => resolve());
      });
      request.on('error', () => resolve());
    });
    await waitFor(() => (received > 100_000 ? true : null));
    await server.close();
    await closed;
    expect(received).toBeLessThan(BIG.length);
    expect(server.app.sammy.sender?.inFlight).toBe(0);
    expect(server.app.sammy.sender?.available).toBe(false);
    expect(server.logs.media().at(-1)).toMatchObject({ aborted: true, bodyPath: 'sendfile' });
    await sleep(10);
    removeDir(dir);
  }, 30_000);
});
