// What the server answers: content types, ranges, validators, cache headers, the
// page, health and metrics. (Real sockets: fastify's inject needs light-my-request,
// which requires an ES-module-only package jest 29 cannot load.)
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { join } from 'node:path';
import { encodeLadder } from '@sammy/encoder/encode';
import { LAB_LADDER } from '@sammy/encoder/ladder';
import { parseSegmentsSidecar } from '@sammy/encoder/sidecar';
import { buildApp } from '../src/app.js';
import { NOT_BUILT_PAGE } from '../src/player.js';
import { LogCapture, makeDir, metricValue, removeDir, startServer, timedGet, waitFor, type GetOptions, type RunningServer, type TimedResponse } from './helpers.js';

const SEGMENT = Buffer.alloc(50_000, 7);

interface Answer extends TimedResponse {
  text: string;
}

async function call(server: RunningServer, path: string, o: GetOptions = {}): Promise<Answer> {
  const res = await timedGet(server.port, path, { ...o, keepBody: true });
  return { ...res, text: res.body!.toString() };
}

describe('media, page, health and metrics', () => {
  let mediaDir: string;
  let server: RunningServer;

  beforeAll(async () => {
    mediaDir = makeDir({
      'manifest.mpd': '<?xml version="1.0"?><MPD/>',
      'manifest.m3u8': '#EXTM3U\n',
      'segments.json': '{"segmentDurationS":2}',
      'init-0.m4s': Buffer.alloc(800, 1),
      'chunk-0-00001.m4s': SEGMENT,
      'movie.mp4': Buffer.alloc(100, 2),
      '.hidden': 'x',
    });
    server = await startServer({ mediaDir, playerDir: join(mediaDir, 'no-player-here'), logLevel: 'silent' });
  });
  afterAll(async () => {
    await server.close();
    removeDir(mediaDir);
  });

  test.each([
    ['manifest.mpd', 'application/dash+xml', 'no-cache'],
    ['manifest.m3u8', 'application/vnd.apple.mpegurl', 'no-cache'],
    ['segments.json', 'application/json', 'no-cache'],
    ['init-0.m4s', 'video/mp4', 'public, max-age=3600'],
    ['chunk-0-00001.m4s', 'video/mp4', 'public, max-age=3600'],
    ['movie.mp4', 'video/mp4', 'public, max-age=3600'],
  ])('/media/%s: %s, cache-control %s, validators, Server-Timing', async (file, type, cacheControl) => {
    const res = await call(server, `/media/${file}`);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe(type);
    expect(res.headers['cache-control']).toBe(cacheControl);
    expect(res.headers['etag']).toMatch(/^W\/"/);
    expect(res.headers['last-modified']).toBeDefined();
    expect(res.headers['accept-ranges']).toBe('bytes');
    expect(res.headers['server-timing']).toBe('pace;dur=0;desc="unpaced"');
    expect(res.headers['timing-allow-origin']).toBe('*');
  });

  test('Range requests get 206 with the exact bytes; an unsatisfiable range 416', async () => {
    const res = await call(server, '/media/chunk-0-00001.m4s', { headers: { range: 'bytes=100-1099' } });
    expect(res.status).toBe(206);
    expect(res.headers['content-range']).toBe(`bytes 100-1099/${SEGMENT.length}`);
    expect(res.body!.equals(SEGMENT.subarray(100, 1100))).toBe(true);
    const bad = await call(server, '/media/chunk-0-00001.m4s', { headers: { range: 'bytes=90000-' } });
    expect(bad.status).toBe(416);
  });

  test('conditional requests: If-None-Match and If-Modified-Since give 304', async () => {
    const first = await call(server, '/media/manifest.mpd');
    const etag = await call(server, '/media/manifest.mpd', { headers: { 'if-none-match': first.headers['etag'] as string } });
    expect(etag.status).toBe(304);
    const since = await call(server, '/media/manifest.mpd', { headers: { 'if-modified-since': first.headers['last-modified'] as string } });
    expect(since.status).toBe(304);
  });

  test('HEAD gives the headers without a body', async () => {
    const res = await call(server, '/media/chunk-0-00001.m4s', { method: 'HEAD' });
    expect(res.status).toBe(200);
    expect(res.headers['content-length']).toBe(String(SEGMENT.length));
    expect(res.body!.length).toBe(0);
  });

  test('missing files and folders are 404, dotfiles are not served', async () => {
    expect((await call(server, '/media/nope.m4s')).status).toBe(404);
    expect((await call(server, '/media/')).status).toBe(404);
    expect((await call(server, '/media/.hidden')).status).toBe(403);
  });

  test('/ says how to build the player when it is not built', async () => {
    const res = await call(server, '/');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(res.text).toBe(NOT_BUILT_PAGE);
    expect(res.text).toContain('npm run build');
  });

  test('GET /healthz', async () => {
    const res = await call(server, '/healthz');
    expect(res.status).toBe(200);
    expect(JSON.parse(res.text)).toMatchObject({ status: 'ok', burstPackets: 4, burstMode: 'auto', activeResponses: 0 });
  });

  test('GET /metrics: Prometheus text with requests, bytes, paced responses, rates and errors', async () => {
    await call(server, '/media/%2e%2e/x');
    const res = await call(server, '/metrics');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toContain('text/plain');
    for (const name of [
      'sammy_http_requests_total',
      'sammy_media_bytes_total',
      'sammy_paced_responses_total',
      'sammy_media_responses_active',
      'sammy_pace_requested_kbps',
      'sammy_pace_achieved_kbps',
      'sammy_pace_achieved_ratio',
      'sammy_errors_total',
    ]) {
      expect(res.text).toContain(`# TYPE ${name}`);
    }
    expect(metricValue(res.text, 'sammy_errors_total{kind="bad_path"}')).toBe(1);
    expect(res.text).toMatch(/sammy_http_requests_total\{route="\/media\/\*",status="200"\} \d+/);
  });
});

describe('the built player page', () => {
  let dir: string;
  let server: RunningServer;

  beforeAll(async () => {
    dir = makeDir({ 'player/index.html': '<!doctype html><title>player</title>', 'player/app.js': 'console.log(1)', 'media/a.m4s': 'a' });
    server = await startServer({ mediaDir: join(dir, 'media'), playerDir: join(dir, 'player'), logLevel: 'silent' });
  });
  afterAll(async () => {
    await server.close();
    removeDir(dir);
  });

  test('/ is index.html and its assets are served beside it, revalidated on every load', async () => {
    const page = await call(server, '/?arm=sammy');
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toContain('text/html');
    expect(page.text).toContain('<title>player</title>');
    expect(page.headers['cache-control']).toBe('no-cache');
    const js = await call(server, '/app.js');
    expect(js.status).toBe(200);
    expect(js.headers['content-type']).toContain('javascript');
  });
});

describe('telemetry to --log FILE', () => {
  test('one JSON line per media response, with the agreed fields', async () => {
    const dir = makeDir({ 'media/seg.m4s': SEGMENT });
    const logFile = join(dir, 'out', 'server.jsonl');
    const server = await startServer({ mediaDir: join(dir, 'media'), logFile, logLevel: 'silent' });
    try {
      const res = await timedGet(server.port, '/media/seg.m4s', { headers: { 'CMCD-Status': 'rtp=20000' } });
      expect(res.status).toBe(200);
      await timedGet(server.port, '/healthz');
    } finally {
      await server.close();
    }
    const lines = readFileSync(logFile, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    const media = lines.filter((l) => l['msg'] === 'media response');
    expect(media).toHaveLength(1);
    const line = media[0]!;
    for (const field of [
      'path', 'bytes', 'durationMs', 'rtpKbps', 'appliedRateKbps', 'burstPackets', 'rttUs', 'minRttUs', 'retransmits',
      'totalRetrans', 'deliveryRateBytesPerS', 'bytesRetrans', 'bytesSent', 'remotePort', 'time',
    ]) {
      expect(line).toHaveProperty(field);
    }
    expect(line).toMatchObject({ path: '/media/seg.m4s', bytes: SEGMENT.length, rtpKbps: 20000, burstPackets: 4, aborted: false });
    expect(typeof line['time']).toBe('number');
    removeDir(dir);
  });
});

describe('shutdown', () => {
  test('a response cut by close() still gets its line, with TCP fields, marked aborted', async () => {
    // More than the kernel's send buffer holds (4 MB), so Node is still writing when cut.
    const dir = makeDir({ 'big.m4s': Buffer.alloc(12_000_000, 5) });
    const server = await startServer({ mediaDir: dir });
    let received = 0;
    const request = http.get({ host: '127.0.0.1', port: server.port, path: '/media/big.m4s', headers: { 'CMCD-Status': 'rtp=8000' } }, (res) => {
      res.on('data', (c: Buffer) => (received += c.length));
      res.on('error', () => {});
    });
    request.on('error', () => {});
    await waitFor(() => (received > 200_000 ? true : null));
    await server.close();
    const line = server.logs.media().at(-1);
    expect(line).toMatchObject({ path: '/media/big.m4s', aborted: true, pacing: 'paced', maxPacingRateBytesPerS: 1_000_000 });
    expect(line!.rttUs).not.toBeNull();
    expect(server.app.sammy.pacing.activeResponses).toBe(0);
    removeDir(dir);
  });
});

const hasFfmpeg = spawnSync('ffmpeg', ['-version'], { stdio: 'ignore' }).status === 0;
if (!hasFfmpeg) console.log('SKIP: serving an encoded ladder needs ffmpeg (apt-get install -y ffmpeg)');
const describeWithFfmpeg = hasFfmpeg ? describe : describe.skip;

describeWithFfmpeg('a ladder from the encoder', () => {
  let dir: string;
  let server: RunningServer;

  beforeAll(async () => {
    dir = makeDir({});
    await encodeLadder({ syntheticS: 2, outDir: join(dir, 'ladder'), ladder: LAB_LADDER, segmentS: 2 });
    server = await startServer({ mediaDir: join(dir, 'ladder') });
  }, 120_000);
  afterAll(async () => {
    await server.close();
    removeDir(dir);
  });

  test('every file segments.json lists is served whole, with the DASH and HLS content types', async () => {
    const mpd = await timedGet(server.port, '/media/manifest.mpd');
    expect(mpd.headers['content-type']).toBe('application/dash+xml');
    for (const playlist of ['manifest.m3u8', 'media-0.m3u8']) {
      const res = await timedGet(server.port, `/media/${playlist}`);
      expect([res.status, res.headers['content-type']]).toEqual([200, 'application/vnd.apple.mpegurl']);
    }
    const sidecarRes = await timedGet(server.port, '/media/segments.json', { keepBody: true });
    const sidecar = parseSegmentsSidecar(JSON.parse(sidecarRes.body!.toString()));
    for (const rep of [...sidecar.representations, ...(sidecar.audio ? [sidecar.audio] : [])]) {
      const init = await timedGet(server.port, `/media/init-${rep.id}.m4s`);
      expect([init.status, init.bytes, init.headers['content-type']]).toEqual([200, rep.initSizeBytes, 'video/mp4']);
      for (const [index, sizeBytes] of rep.segmentSizesBytes.entries()) {
        const number = String(index + 1).padStart(5, '0');
        const seg = await timedGet(server.port, `/media/chunk-${rep.id}-${number}.m4s`, { headers: { 'CMCD-Status': 'rtp=4000' } });
        expect([seg.status, seg.bytes, seg.headers['content-type']]).toEqual([200, sizeBytes, 'video/mp4']);
        expect(seg.headers['server-timing']).toBe('pace;dur=4000;desc="paced"');
      }
    }
  });
});

describe('without a working setsockopt (another platform, or a refusing kernel)', () => {
  const unavailable = {
    available: false,
    unavailableReason: 'SO_MAX_PACING_RATE is Linux-only (platform test)',
    setMaxPacingRate: () => ({ ok: false as const, error: 'unavailable' }),
    readTcpInfo: () => null,
  };
  const refusing = {
    available: true,
    unavailableReason: null,
    setMaxPacingRate: () => ({ ok: false as const, error: 'setsockopt(SO_MAX_PACING_RATE) failed: EPERM' }),
    readTcpInfo: () => null,
  };

  test.each([
    ['unavailable binding', unavailable, 'pacing unavailable, serving unpaced'],
    ['failing setsockopt', refusing, 'setsockopt(SO_MAX_PACING_RATE) failed: EPERM: serving unpaced'],
  ])('%s: served unpaced, logged once', async (_name, socketControl, warning) => {
    const dir = makeDir({ 'seg.m4s': SEGMENT });
    const logs = new LogCapture();
    const app = await buildApp({ mediaDir: dir, logLevel: 'info' }, { socketControl, logStream: logs });
    await app.listen({ host: '127.0.0.1', port: 0 });
    const port = (app.server.address() as { port: number }).port;
    try {
      for (let i = 0; i < 3; i++) {
        const res = await timedGet(port, '/media/seg.m4s', { headers: { 'CMCD-Status': 'rtp=8000' } });
        expect(res.status).toBe(200);
        expect(res.bytes).toBe(SEGMENT.length);
        expect(res.headers['server-timing']).toBe('pace;dur=0;desc="unavailable"');
      }
      expect(logs.lines.filter((l) => l['level'] === 40 && String(l['msg']).includes(warning))).toHaveLength(1);
    } finally {
      await app.close();
      removeDir(dir);
    }
  });
});
