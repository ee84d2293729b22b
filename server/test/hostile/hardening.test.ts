// Hostile input (issue 3, "Hardening"): every case asserts the status code and that
// the next ordinary request is still served.
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadSocketControl } from '../../src/socket.js';
import {
  activeResources,
  MB,
  metricValue,
  randomFile,
  rawExchange,
  removeDir,
  requestHead,
  sleep,
  startServer,
  timedGet,
  waitFor,
  type ClientExchange,
  type RunningServer,
} from '../helpers.js';

const SECRET = 'top-secret-outside-media';
const SEGMENT_BYTES = 100_000;
const MAX_RATE_KBPS = 1_000_000;
const MIN_RATE_KBPS = 100;

/** <tmp>/secret.txt beside <tmp>/media/{seg.m4s, manifest.mpd, big.m4s}. */
function makeTree(): { root: string; mediaDir: string } {
  const root = mkdtempSync(join(tmpdir(), 'sammy-hostile-'));
  const mediaDir = join(root, 'media');
  mkdirSync(mediaDir);
  writeFileSync(join(root, 'secret.txt'), SECRET);
  writeFileSync(join(mediaDir, 'seg.m4s'), randomFile(SEGMENT_BYTES));
  writeFileSync(join(mediaDir, 'big.m4s'), randomFile(4 * MB));
  writeFileSync(join(mediaDir, 'manifest.mpd'), '<MPD/>');
  return { root, mediaDir };
}

async function expectStillServing(server: RunningServer): Promise<void> {
  const ok = await timedGet(server.port, '/media/seg.m4s');
  expect(ok.status).toBe(200);
  expect(ok.bytes).toBe(SEGMENT_BYTES);
}

const SHORT_LIMITS = { headersTimeoutMs: 1000, requestTimeoutMs: 2000, keepAliveTimeoutMs: 1000, idleTimeoutMs: 5000 };

describe('hostile input', () => {
  let tree: ReturnType<typeof makeTree>;
  let server: RunningServer;

  beforeAll(async () => {
    tree = makeTree();
    server = await startServer({ mediaDir: tree.mediaDir, minRateKbps: MIN_RATE_KBPS, maxRateKbps: MAX_RATE_KBPS, limits: SHORT_LIMITS });
  });
  afterAll(async () => {
    await server.close();
    removeDir(tree.root);
  });

  describe('path traversal never leaves the media folder', () => {
    test.each([
      ['dot-dot', '/media/../secret.txt'],
      ['dot-dot deeper', '/media/x/../../secret.txt'],
      ['percent-encoded dots', '/media/%2e%2e/secret.txt'],
      ['percent-encoded dots and slash', '/media/%2E%2E%2Fsecret.txt'],
      ['double-encoded dots', '/media/%252e%252e/secret.txt'],
      ['double-encoded slash', '/media/..%252fsecret.txt'],
      ['backslash', '/media/..\\secret.txt'],
      ['encoded backslash', '/media/..%5csecret.txt'],
      ['encoded NUL', '/media/seg.m4s%00.txt'],
      ['malformed escape', '/media/%e0%a4%a.m4s'],
      ['from the page root', '/%2e%2e/secret.txt'],
    ])('%s: %s -> 400', async (_name, path) => {
      const res = await rawExchange(server.port, requestHead(path));
      expect(res.status).toBe(400);
      expect(res.text).not.toContain(SECRET);
      await expectStillServing(server);
    });

    test('a literal NUL in the request line is refused by the HTTP parser (400)', async () => {
      const res = await rawExchange(server.port, Buffer.from(requestHead('/media/seg.m4s\0../../secret.txt'), 'latin1'));
      expect(res.status).toBe(400);
      expect(res.text).not.toContain(SECRET);
      await expectStillServing(server);
    });
  });

  describe('malformed CMCD is ignored or clamped, logged, and the segment still served', () => {
    test.each([
      ['not a number', 'rtp=abc', 'pace;dur=0;desc="unpaced"', 'not a positive integer'],
      ['negative', 'rtp=-1', 'pace;dur=0;desc="unpaced"', 'not a positive integer'],
      ['exponent (not RFC 8941)', 'rtp=1e30', 'pace;dur=0;desc="unpaced"', 'not a structured-field dictionary'],
      ['20 digits (over RFC 8941 integers)', 'rtp=99999999999999999999', 'pace;dur=0;desc="unpaced"', 'not a structured-field dictionary'],
      ['decimal', 'rtp=1.5', 'pace;dur=0;desc="unpaced"', 'not a positive integer'],
      ['newer version', 'v=3,rtp=4000', 'pace;dur=0;desc="unpaced"', 'newer than 2'],
      ['huge: clamped to max', 'rtp=999999999999999', `pace;dur=${MAX_RATE_KBPS};desc="paced"`, null],
      ['tiny: clamped to min', 'rtp=1', `pace;dur=${MIN_RATE_KBPS};desc="paced"`, null],
      ['duplicated key', 'rtp=8000,rtp=400000', 'pace;dur=400000;desc="paced"', 'the last value (400000) is used'],
      ['oversized (3 KB)', `rtp=4000,sid="${'x'.repeat(3000)}"`, 'pace;dur=0;desc="unpaced"', 'exceeds'],
      ['tb not a number: no guard floor, the rtp applied', 'rtp=4000,tb=abc', 'pace;dur=4000;desc="paced"', 'tb "abc" is not a positive bitrate'],
      ['negative br: no guard floor', 'rtp=4000,br=-1', 'pace;dur=4000;desc="paced"', 'br -1 is not a positive bitrate'],
      ['huge tb: the guard floor clamped to max', 'rtp=4000,tb=999999999999999', `pace;dur=${MAX_RATE_KBPS};desc="paced"`, null],
    ])('%s', async (_name, cmcd, serverTiming, problem) => {
      const res = await timedGet(server.port, '/media/seg.m4s', { headers: { 'CMCD-Status': cmcd } });
      expect(res.status).toBe(200);
      expect(res.bytes).toBe(SEGMENT_BYTES);
      expect(res.headers['server-timing']).toBe(serverTiming);
      const line = await server.logs.waitForResponse(res);
      if (problem === null) expect(line.cmcdProblem).toBeNull();
      else expect(line.cmcdProblem).toContain(problem);
      await expectStillServing(server);
    });

    test('the same CMCD-Status header twice: the last rtp wins', async () => {
      const res = await rawExchange(
        server.port,
        requestHead('/media/manifest.mpd', 'CMCD-Status: rtp=8000\r\nCMCD-Status: rtp=16000\r\n'),
      );
      expect(res.status).toBe(200);
      expect(res.text).toContain('server-timing: pace;dur=16000;desc="paced"');
      await expectStillServing(server);
    });

    test('malformed query form (?CMCD=rtp%3Dabc) is ignored', async () => {
      const res = await timedGet(server.port, '/media/seg.m4s?CMCD=rtp%3Dabc');
      expect(res.status).toBe(200);
      expect(res.headers['server-timing']).toBe('pace;dur=0;desc="unpaced"');
      await expectStillServing(server);
    });

    test('a request head larger than the limit gets 431 from the HTTP layer', async () => {
      const res = await rawExchange(server.port, requestHead('/media/seg.m4s', `CMCD-Status: rtp=4000,sid="${'y'.repeat(20_000)}"\r\n`));
      expect(res.status).toBe(431);
      await expectStillServing(server);
    });
  });

  test('a malformed head sent while a paced response is under way ends the connection without landing in its body', async () => {
    const data = await new Promise<Buffer>((resolve) => {
      const chunks: Buffer[] = [];
      const socket = net.connect(server.port, '127.0.0.1', () =>
        socket.write('GET /media/big.m4s HTTP/1.1\r\nHost: 127.0.0.1\r\nCMCD-Status: rtp=8000\r\n\r\n'),
      );
      socket.on('data', (c: Buffer) => {
        if (chunks.length === 0) socket.write('NOT HTTP AT ALL\r\n\r\n');
        chunks.push(c);
      });
      socket.on('error', () => undefined);
      socket.on('close', () => resolve(Buffer.concat(chunks)));
    });
    const text = data.toString('latin1');
    expect(text.startsWith('HTTP/1.1 200')).toBe(true);
    expect(text).not.toContain('HTTP/1.1 400');
    // What arrived of the body is the file's own bytes.
    const body = data.subarray(data.indexOf('\r\n\r\n') + 4);
    expect(body.equals(readFileSync(join(tree.mediaDir, 'big.m4s')).subarray(0, body.length))).toBe(true);
    await expectStillServing(server);
  }, 15_000);

  describe('slow clients are cut off (slowloris)', () => {
    test('a request head that never completes is closed after the headers timeout', async () => {
      const res = await rawExchange(server.port, 'GET /media/seg.m4s HTTP/1.1\r\nHost: 127.0.0.1\r\n', 8000);
      expect(res.closed).toBe(true);
      expect(res.status === null || res.status === 408).toBe(true);
      expect(res.elapsedMs).toBeLessThan(SHORT_LIMITS.headersTimeoutMs + 3000);
      await expectStillServing(server);
    }, 15_000);

    test('an idle keep-alive connection is closed after the keep-alive timeout', async () => {
      const keepAlive = 'GET /media/manifest.mpd HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n';
      const res = await rawExchange(server.port, keepAlive, 8000);
      expect(res.status).toBe(200);
      expect(res.closed).toBe(true);
      expect(res.elapsedMs).toBeLessThan(SHORT_LIMITS.keepAliveTimeoutMs + 3000);
      await expectStillServing(server);
    }, 15_000);
  });

  test('a paced response draining longer than the keep-alive timeout is not cut', async () => {
    // 4 MB at 1 MB/s: Node hands the body to the kernel long before it has left.
    const agent = new http.Agent({ keepAlive: true });
    const res = await timedGet(server.port, '/media/big.m4s', { agent, headers: { 'CMCD-Status': 'rtp=8000' } });
    agent.destroy();
    expect(res.status).toBe(200);
    expect(res.bytes).toBe(4 * MB);
    expect(res.elapsedMs).toBeGreaterThan(3 * SHORT_LIMITS.keepAliveTimeoutMs);
    const line = await server.logs.waitForResponse(res);
    expect(line).toMatchObject({ aborted: false, pacing: 'paced', bytes: 4 * MB, maxPacingRateBytesPerS: 1_000_000 });
    await expectStillServing(server);
  }, 15_000);

  describe('same-origin by default', () => {
    test('no CORS headers for a cross-origin request; a preflight finds no route', async () => {
      const get = await timedGet(server.port, '/media/seg.m4s', { headers: { Origin: 'http://elsewhere.example' } });
      expect(get.status).toBe(200);
      expect(get.headers['access-control-allow-origin']).toBeUndefined();
      const preflight = await rawExchange(
        server.port,
        'OPTIONS /media/seg.m4s HTTP/1.1\r\nHost: 127.0.0.1\r\nOrigin: http://elsewhere.example\r\n' +
          'Access-Control-Request-Method: GET\r\nAccess-Control-Request-Headers: cmcd-status\r\nConnection: close\r\n\r\n',
      );
      expect(preflight.status).toBe(404);
      expect(preflight.text.toLowerCase()).not.toContain('access-control-allow-origin');
      await expectStillServing(server);
    });
  });
});

describe('CORS when enabled', () => {
  const ORIGIN = 'http://player.example:8080';
  let tree: ReturnType<typeof makeTree>;
  let server: RunningServer;

  beforeAll(async () => {
    tree = makeTree();
    server = await startServer({ mediaDir: tree.mediaDir, corsOrigin: ORIGIN });
  });
  afterAll(async () => {
    await server.close();
    removeDir(tree.root);
  });

  test('the preflight allows the CMCD headers; responses expose Server-Timing', async () => {
    const preflight = await rawExchange(
      server.port,
      `OPTIONS /media/seg.m4s HTTP/1.1\r\nHost: 127.0.0.1\r\nOrigin: ${ORIGIN}\r\n` +
        'Access-Control-Request-Method: GET\r\nAccess-Control-Request-Headers: cmcd-status, cmcd-request, range\r\nConnection: close\r\n\r\n',
    );
    expect(preflight.status).toBe(204);
    const head = preflight.text.toLowerCase();
    expect(head).toContain(`access-control-allow-origin: ${ORIGIN}`);
    expect(head).toMatch(/access-control-allow-headers: [^\r]*cmcd-status/);
    expect(head).toMatch(/access-control-allow-headers: [^\r]*cmcd-request/);

    const get = await timedGet(server.port, '/media/seg.m4s', { headers: { Origin: ORIGIN, 'CMCD-Status': 'rtp=8000' } });
    expect(get.status).toBe(200);
    expect(get.headers['access-control-allow-origin']).toBe(ORIGIN);
    expect(get.headers['access-control-expose-headers']).toContain('Server-Timing');
    expect(get.headers['timing-allow-origin']).toBe('*');
    await expectStillServing(server);
  });

  test('another origin gets no CORS grant (the allowed origin is named, so its browser refuses)', async () => {
    const get = await timedGet(server.port, '/media/seg.m4s', { headers: { Origin: 'http://elsewhere.example' } });
    expect(get.status).toBe(200);
    expect(get.headers['access-control-allow-origin']).toBe(ORIGIN);
    await expectStillServing(server);
  });
});

const control = loadSocketControl();
const describeLinux = control.available ? describe : describe.skip;
if (!control.available) console.log(`SKIP: aborted-transfer tests need SO_MAX_PACING_RATE: ${control.unavailableReason}`);

/** Reads `readBytes` of a paced body, then drops the connection. Returns the client's local port. */
function readThenAbort(port: number, path: string, rtpKbps: number, readBytes: number): Promise<ClientExchange> {
  return new Promise((resolve, reject) => {
    const startedAtEpochMs = Date.now();
    const socket = net.connect(port, '127.0.0.1', () => {
      socket.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nCMCD-Status: rtp=${rtpKbps}\r\n\r\n`);
    });
    let got = 0;
    socket.on('data', (chunk: Buffer) => {
      got += chunk.length;
      if (got >= readBytes) {
        const localPort = socket.localPort!;
        socket.destroy();
        resolve({ localPort, startedAtEpochMs });
      }
    });
    socket.on('error', reject);
  });
}

describeLinux.each([['kernel'], ['app']] as const)('an aborted paced transfer (--burst-mode %s)', (burstMode) => {
  let tree: ReturnType<typeof makeTree>;
  let server: RunningServer;

  beforeAll(async () => {
    tree = makeTree();
    server = await startServer({ mediaDir: tree.mediaDir, burstMode });
  });
  afterAll(async () => {
    await server.close();
    removeDir(tree.root);
  });

  test('leaves no timer, handle or pacing state behind', async () => {
    await expectStillServing(server);
    await sleep(100);
    const before = activeResources();
    // 4 MB at 1 MB/s: about 3 s left when the client walks away after 1 MB.
    const exchange = await readThenAbort(server.port, '/media/big.m4s', 8000, MB);
    const line = await server.logs.waitForResponse(exchange);
    expect(line).toMatchObject({ aborted: true, pacing: 'paced', appliedRateKbps: 8000 });
    await sleep(200);
    expect(server.app.sammy.pacing.activeResponses).toBe(0);
    const metrics = await timedGet(server.port, '/metrics', { keepBody: true });
    expect(metricValue(metrics.body!.toString(), 'sammy_media_responses_active')).toBe(0);
    // Sockets close asynchronously: wait (bounded) for the counts to settle; a leaked
    // timer or handle never does.
    const settled = (): boolean => {
      const now = activeResources();
      return (now['Timeout'] ?? 0) <= (before['Timeout'] ?? 0) && (now['TCPSocketWrap'] ?? 0) <= (before['TCPSocketWrap'] ?? 0);
    };
    await waitFor(() => (settled() ? true : null), 3000).catch(() => undefined);
    const after = activeResources();
    expect(after['Timeout'] ?? 0).toBeLessThanOrEqual(before['Timeout'] ?? 0);
    expect(after['TCPSocketWrap'] ?? 0).toBeLessThanOrEqual(before['TCPSocketWrap'] ?? 0);
    await expectStillServing(server);
  }, 15_000);
});
