/**
 * `npm run nginx`'s command line with a real nginx on loopback: what it serves and
 * how (types, cache headers, the pace header, the routes beside /media/), what it
 * refuses, the listening line and the exit codes, HTTPS and HTTP/2, and the folder
 * it leaves behind (none). Skipped, with the reason printed, where nginx, its source
 * tree or a C compiler are missing (npm test installs them as root). The module's own
 * behaviour (rates, the held tail, hostile CMCD) is test/module.test.ts's.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import http2 from 'node:http2';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { buildNginxModule } from '@sammy/native/build';
import { childPids, start, startServer, stop, type ServerProcess } from '@sammy/server/process';
import { makeSelfSignedCert, metricValue, opensslMissing, rawExchange, requestHead, timedGet, waitFor } from '@sammy/server/test/helpers';
import { readTelemetry, type ResponseTelemetry } from '@sammy/server/telemetry';
import { nginxLayout, renderNginxConfig } from '../src/config.js';
import { checkNginxConfig, NGINX_CLI, nginxUnavailableReason, removeStaleFolders, startNginx } from '../src/nginx.js';
import { resolveNginxOptions } from '../src/options.js';

const unavailable = nginxUnavailableReason();
const describeNginx = unavailable === null ? describe : describe.skip;
if (unavailable !== null) console.log(`SKIP: the nginx launcher tests need nginx and its source tree: ${unavailable}`);
const noOpenssl = opensslMissing();
const describeTls = unavailable === null && noOpenssl === null ? describe : describe.skip;
if (unavailable === null && noOpenssl !== null) console.log(`SKIP: the HTTPS and HTTP/2 tests need openssl: ${noOpenssl}`);

const SECRET = 'top-secret-outside-media';
const SEGMENT = Buffer.alloc(100_000, 7);

type Line = ResponseTelemetry & { protocol?: string; server?: string };

/** A media folder (a segment, the ladder's text files, a dotfile, links out of and within it) and a page beside it. */
function makeSite(root: string): { mediaDir: string; playerDir: string } {
  const mediaDir = join(root, 'media');
  const playerDir = join(root, 'player');
  for (const dir of [mediaDir, playerDir]) mkdirSync(dir);
  writeFileSync(join(mediaDir, 'chunk-0-00001.m4s'), SEGMENT);
  writeFileSync(join(mediaDir, 'manifest.mpd'), '<MPD/>');
  writeFileSync(join(mediaDir, 'manifest.m3u8'), '#EXTM3U\n');
  writeFileSync(join(mediaDir, 'segments.json'), '{}');
  writeFileSync(join(mediaDir, '.hidden'), SECRET);
  writeFileSync(join(root, 'secret.m4s'), SECRET);
  symlinkSync(join(root, 'secret.m4s'), join(mediaDir, 'out.m4s'));
  symlinkSync(join(mediaDir, 'chunk-0-00001.m4s'), join(mediaDir, 'within.m4s'));
  writeFileSync(join(playerDir, 'index.html'), '<!doctype html><title>Sammy</title>');
  writeFileSync(join(playerDir, 'main.js'), 'console.log(1);');
  return { mediaDir, playerDir };
}

/** The telemetry line of a response: on the client's port, written after it started (ports are handed out again). */
function lineOf(logFile: string, r: { localPort: number; startedAtEpochMs: number }, path: string): Promise<Line> {
  const ofIt = (t: Line): boolean => t.remotePort === r.localPort && t.time >= r.startedAtEpochMs && t.path === path;
  return waitFor(() => (readTelemetry(logFile) as Line[]).find(ofIt) ?? null, 5000);
}

/** Whether a process runs (a zombie whose parent has not reaped it yet does not). */
function running(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

/** The folder the command line said it runs from. */
const folderOf = (s: ServerProcess): string => /from (\S+);/.exec(s.process.stderr())![1]!;

interface Site {
  root: string;
  mediaDir: string;
  playerDir: string;
}

/** For a describe block: the command line with `args(site)` on a fresh site, stopped and removed after. */
function servedBy(name: string, args: (site: Site) => string[]): { served: ServerProcess; site: Site } {
  const ctx = {} as { served: ServerProcess; site: Site };
  beforeAll(async () => {
    const root = mkdtempSync(join(tmpdir(), 'sammy-nginx-test-'));
    ctx.site = { root, ...makeSite(root) };
    ctx.served = await startServer({ name, cli: NGINX_CLI, args: args(ctx.site), timeoutMs: 120_000 });
  }, 180_000);
  afterAll(async () => {
    if (ctx.served) await stop(ctx.served.process);
    if (ctx.site) rmSync(ctx.site.root, { recursive: true, force: true });
  }, 30_000);
  return ctx;
}

describeNginx('npm run nginx: what it serves', () => {
  const logFileOf = (site: Site): string => join(site.root, 'logs', 'telemetry.jsonl');
  const ctx = servedBy('nginx', (site) => [
    '--media', site.mediaDir, '--player', site.playerDir, '--port', '0', '--workers', '2', '--log', logFileOf(site),
  ]);
  let served: ServerProcess;
  let logFile: string;
  beforeAll(() => {
    served = ctx.served;
    logFile = logFileOf(ctx.site);
  });

  test('the listening line on stdout, the folder and the telemetry file on stderr', () => {
    expect(served.process.stdout()).toBe(`listening on http://127.0.0.1:${served.port}\n`);
    const note = new RegExp(`^nginx: 2 worker\\(s\\) from \\S+/sammy-nginx-\\d+-\\w+; telemetry lines in ${logFile}\\n$`);
    expect(served.process.stderr()).toMatch(note);
  });

  test('/ is the page, revalidated; its script says its charset', async () => {
    const page = await timedGet(served.port, '/', { keepBody: true });
    expect(page.status).toBe(200);
    expect(page.body!.toString()).toContain('<title>Sammy</title>');
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(page.headers['cache-control']).toBe('no-cache');
    expect(page.headers['server-timing']).toBeUndefined();
    const script = await timedGet(served.port, '/main.js');
    expect(script.headers['content-type']).toBe('application/javascript; charset=utf-8');
    expect((await timedGet(served.port, '/missing.js')).status).toBe(404);
  });

  test('a segment: video/mp4, cached for an hour, paced at the rtp it asks for, with its telemetry line', async () => {
    const r = await timedGet(served.port, '/media/chunk-0-00001.m4s', { headers: { 'CMCD-Status': 'rtp=4000' }, keepBody: true });
    expect(r.status).toBe(200);
    expect(r.body!.equals(SEGMENT)).toBe(true);
    expect(r.headers['content-type']).toBe('video/mp4');
    expect(r.headers['cache-control']).toBe('public, max-age=3600');
    expect(r.headers['server-timing']).toBe('pace;dur=4000;desc="paced"');
    expect(r.headers['timing-allow-origin']).toBe('*');
    expect(r.headers['server']).toBe('nginx');
    expect(await lineOf(logFile, r, '/media/chunk-0-00001.m4s')).toMatchObject({
      pacing: 'paced', rtpKbps: 4000, appliedRateKbps: 4000, bytes: SEGMENT.length, status: 200, server: 'nginx', protocol: 'http/1.1',
    });
    const unpaced = await timedGet(served.port, '/media/chunk-0-00001.m4s');
    expect(unpaced.headers['server-timing']).toBe('pace;dur=0;desc="unpaced"');
  });

  test.each([
    ['manifest.mpd', 'application/dash+xml'],
    ['manifest.m3u8', 'application/vnd.apple.mpegurl'],
    ['segments.json', 'application/json'],
  ])('/media/%s is %s and revalidated', async (name, type) => {
    const r = await timedGet(served.port, `/media/${name}`);
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toBe(type);
    expect(r.headers['cache-control']).toBe('no-cache');
  });

  test('/healthz, /metrics and /nginx_status answer', async () => {
    const health = await timedGet(served.port, '/healthz', { keepBody: true });
    expect(health.headers['content-type']).toBe('application/json; charset=utf-8');
    const body = JSON.parse(health.body!.toString()) as Record<string, unknown>;
    expect(body).toMatchObject({ status: 'ok', server: 'nginx', pacing: true, tls: false, http2: false, workers: 2 });
    // The worker that answered, as the Node server names the process.
    const master = Number(readFileSync(join(folderOf(served), 'nginx.pid'), 'utf8'));
    expect(childPids(master)).toContain(body['pid']);
    await timedGet(served.port, '/media/chunk-0-00001.m4s', { headers: { 'CMCD-Status': 'rtp=8000' } });
    const metrics = await timedGet(served.port, '/metrics', { keepBody: true });
    expect(metrics.status).toBe(200);
    expect(metricValue(metrics.body!.toString(), 'sammy_media_responses_total{pacing="paced"}')).toBeGreaterThanOrEqual(1);
    const status = await timedGet(served.port, '/nginx_status', { keepBody: true });
    expect(status.body!.toString()).toMatch(/^Active connections: \d+/);
  });

  test.each([
    ['a link out of the media folder', '/media/out.m4s'],
    ['a link within it (nginx cannot tell the two apart)', '/media/within.m4s'],
    ['a dotfile', '/media/.hidden'],
    ['a climb out of the folder', '/media/../secret.m4s'],
  ])('refused: %s', async (_what, path) => {
    const r = await rawExchange(served.port, requestHead(path));
    expect([403, 404]).toContain(r.status);
    expect(r.text).not.toContain(SECRET);
  });

  test.each(['POST', 'PUT', 'DELETE', 'OPTIONS'])('%s is refused with 405 and Allow: GET, HEAD', async (method) => {
    const head = `${method} /media/chunk-0-00001.m4s HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`;
    const r = await rawExchange(served.port, head);
    expect(r.status).toBe(405);
    expect(r.text).toMatch(/\r\nAllow: GET, HEAD\r\n/);
    const allowed = await timedGet(served.port, '/media/chunk-0-00001.m4s', { method: 'HEAD' });
    expect(allowed.status).toBe(200);
  });
});

describeNginx('npm run nginx --pacing off --cors-origin O, without a built page; SIGTERM', () => {
  const ORIGIN = 'http://app.example:8000';
  const ctx = servedBy('nginx off', (site) => [
    '--media', site.mediaDir, '--player', join(site.root, 'not-built'), '--port', '0', '--workers', '1',
    '--pacing', 'off', '--cors-origin', ORIGIN,
  ]);
  let served: ServerProcess;
  beforeAll(() => (served = ctx.served));

  test('a request with rtp is served unpaced and says disabled', async () => {
    const r = await timedGet(served.port, '/media/chunk-0-00001.m4s', { headers: { 'CMCD-Status': 'rtp=4000' } });
    expect(r.status).toBe(200);
    expect(r.headers['server-timing']).toBe('pace;dur=0;desc="disabled"');
    const telemetryLog = /telemetry lines in (\S+)\n/.exec(served.process.stderr())![1]!;
    const line = await lineOf(telemetryLog, r, '/media/chunk-0-00001.m4s');
    expect(line).toMatchObject({ pacing: 'disabled', rtpKbps: 4000, appliedRateKbps: null });
  });

  test('/ says how to build the page (503, plain text)', async () => {
    const r = await timedGet(served.port, '/', { keepBody: true });
    expect(r.status).toBe(503);
    expect(r.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(r.body!.toString()).toContain('Run `npm run build` in the repository');
  });

  test("CORS as the Node server's: the preflight allows Range and CMCD-*, responses expose Server-Timing", async () => {
    const preflight = await rawExchange(
      served.port,
      `OPTIONS /media/chunk-0-00001.m4s HTTP/1.1\r\nHost: x\r\nOrigin: ${ORIGIN}\r\n` +
        'Access-Control-Request-Method: GET\r\nAccess-Control-Request-Headers: cmcd-status\r\nConnection: close\r\n\r\n',
    );
    expect(preflight.status).toBe(204);
    expect(preflight.text).toContain(`\r\nAccess-Control-Allow-Origin: ${ORIGIN}\r\n`);
    expect(preflight.text).toContain('\r\nAccess-Control-Allow-Headers: Range, CMCD-Object, CMCD-Request, CMCD-Session, CMCD-Status\r\n');
    expect(preflight.text).toContain('\r\nAccess-Control-Allow-Methods: GET, HEAD\r\n');
    expect(preflight.text).toContain('\r\nAccess-Control-Max-Age: 600\r\n');
    const r = await timedGet(served.port, '/media/chunk-0-00001.m4s', { headers: { Origin: ORIGIN } });
    expect(r.headers['access-control-allow-origin']).toBe(ORIGIN);
    expect(r.headers['access-control-expose-headers']).toMatch(/^Server-Timing, /);
    expect(r.headers['vary']).toBe('Origin');
    expect(r.headers['access-control-allow-headers']).toBeUndefined();
  });

  test('SIGTERM stops nginx (master and workers) and removes its folder', async () => {
    const folder = folderOf(served);
    const master = Number(readFileSync(join(folder, 'nginx.pid'), 'utf8'));
    const workers = childPids(master);
    expect(workers).toHaveLength(1);
    expect(await stop(served.process)).toBe(0);
    expect(existsSync(folder)).toBe(false);
    expect([master, ...workers].filter(running)).toEqual([]);
    await expect(timedGet(served.port, '/healthz')).rejects.toThrow();
  }, 30_000);
});

describeTls('npm run nginx over TLS, with HTTP/2', () => {
  const ctx = servedBy('nginx tls', (site) => {
    const { certFile, keyFile } = makeSelfSignedCert(site.root);
    return [
      '--media', site.mediaDir, '--player', site.playerDir, '--port', '0', '--workers', '1', '--log', join(site.root, 'telemetry.jsonl'),
      '--tls-cert', certFile, '--tls-key', keyFile, '--http2', 'on',
    ];
  });
  let served: ServerProcess;
  let cert: Buffer;
  let logFile: string;
  beforeAll(() => {
    served = ctx.served;
    cert = readFileSync(join(ctx.site.root, 'server-cert.pem'));
    logFile = join(ctx.site.root, 'telemetry.jsonl');
  });

  test('the listening line says https; HTTP/1.1 over TLS is paced', async () => {
    expect(served.process.stdout()).toBe(`listening on https://127.0.0.1:${served.port}\n`);
    const r = await timedGet(served.port, '/media/chunk-0-00001.m4s', { ca: cert, headers: { 'CMCD-Status': 'rtp=4000' }, keepBody: true });
    expect(r.status).toBe(200);
    expect(r.body!.equals(SEGMENT)).toBe(true);
    expect(r.headers['server-timing']).toBe('pace;dur=4000;desc="paced"');
    expect(await lineOf(logFile, r, '/media/chunk-0-00001.m4s')).toMatchObject({ pacing: 'paced', protocol: 'http/1.1' });
    const health = await timedGet(served.port, '/healthz', { ca: cert, keepBody: true });
    expect(JSON.parse(health.body!.toString())).toMatchObject({ tls: true, http2: true });
  });

  test("an HTTP/2 stream with rtp is paced: its share of its connection's cap (test/h2.test.ts has the rule)", async () => {
    const startedAtEpochMs = Date.now();
    const session = http2.connect(`https://127.0.0.1:${served.port}`, { ca: cert });
    try {
      type Answer = { headers: http2.IncomingHttpHeaders; body: Buffer; localPort: number };
      const { headers, body, localPort } = await new Promise<Answer>((resolve, reject) => {
        const req = session.request({ ':path': '/media/chunk-0-00001.m4s', 'cmcd-status': 'rtp=4000' });
        const chunks: Buffer[] = [];
        let headers: http2.IncomingHttpHeaders = {};
        req.on('response', (h) => (headers = h));
        req.on('data', (c: Buffer) => chunks.push(c));
        req.on('end', () => resolve({ headers, body: Buffer.concat(chunks), localPort: session.socket.localPort! }));
        req.on('error', reject);
        req.end();
      });
      expect(headers[':status']).toBe(200);
      expect(body.equals(SEGMENT)).toBe(true);
      expect(headers['server-timing']).toBe('pace;dur=4000;desc="paced"');
      expect(await lineOf(logFile, { localPort, startedAtEpochMs }, '/media/chunk-0-00001.m4s')).toMatchObject({
        pacing: 'paced', protocol: 'h2', streamId: 1, rtpKbps: 4000, appliedRateKbps: 4000, bytes: SEGMENT.length, aborted: false,
      });
    } finally {
      session.close();
    }
  });
});

describeNginx('npm run nginx: refusals and failures', () => {
  let root: string;
  let mediaDir: string;

  beforeAll(() => {
    root = mkdtempSync(join(tmpdir(), 'sammy-nginx-test-'));
    ({ mediaDir } = makeSite(root));
  });
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  test.each([
    [['--burst-packets', '4'], 'nginx: SAMMY_NGINX_BAD_ARGS: --burst-packets is not an option of npm run nginx: '],
    [['--port', '70000'], 'nginx: SAMMY_NGINX_INVALID_OPTION: invalid --port: 70000 (accepted: an integer from 0 to 65535)'],
    [['--http2', 'on'], 'nginx: SAMMY_NGINX_INVALID_OPTION: invalid --http2: "on" (accepted: on only with --tls-cert and --tls-key'],
  ])('%j: exit 2, one coded line on stderr, nothing on stdout', async (argv, message) => {
    const cli = start('nginx cli', process.execPath, ['--import', 'tsx', NGINX_CLI, '--media', mediaDir, '--port', '0', ...argv]);
    expect(await cli.exited).toBe(2);
    expect(cli.stderr()).toMatch(new RegExp(`^${message.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
    expect(cli.stderr().trim().split('\n')[0]).toMatch(/^nginx: SAMMY_NGINX_[A-Z_]+: /);
    expect(cli.stdout()).toBe('');
  }, 30_000);

  test("a port taken by another process: SAMMY_NGINX_FAILED with nginx's own words, and no folder left", async () => {
    const taken = net.createServer();
    await new Promise<void>((done) => taken.listen(0, '127.0.0.1', done));
    try {
      const { port } = taken.address() as net.AddressInfo;
      await expect(startNginx({ mediaDir, port, workers: 1 })).rejects.toMatchObject({
        code: 'SAMMY_NGINX_FAILED',
        message: expect.stringMatching(/Address already in use/),
      });
      expect(readdirSync(tmpdir()).filter((n) => n.startsWith(`sammy-nginx-${process.pid}-`))).toEqual([]);
    } finally {
      taken.close();
    }
  }, 60_000);

  test("nginx -t's verdict: a value the module refuses fails with the module's message; every option set passes", async () => {
    const modulePath = await buildNginxModule();
    const options = resolveNginxOptions({ mediaDir, workers: 1, port: 1 });
    const check = async (o: typeof options): Promise<void> => {
      const prefix = mkdtempSync(join(root, 'conf-'));
      const layout = nginxLayout(prefix, null);
      writeFileSync(layout.conf, renderNginxConfig({ options: o, modulePath, layout, user: null, openFilesLimit: 1024 }));
      await checkNginxConfig(layout);
    };
    await expect(check({ ...options, minRateKbps: 0 })).rejects.toMatchObject({
      code: 'SAMMY_NGINX_FAILED',
      message: expect.stringContaining('"sammy_min_rate_kbps": SAMMY_INVALID_OPTION: invalid --min-rate-kbps: "0"'),
    });
    const allOff = { pacing: false, spiralGuard: false, honourQueryCmcd: false, tailHold: false };
    await check({ ...options, ...allOff, spiralGuardMultiplier: 7.25, corsOrigin: '*', host: '::' });
    await check({ ...options, corsOrigin: 'https://a.example', host: 'localhost', minRateKbps: 1, maxRateKbps: 1e12 });
  }, 120_000);

  /** The command line on the media folder, with its folder and nginx's master and workers. */
  async function startWatched(workers: number): Promise<{ cli: ServerProcess; folder: string; master: number; workers: number[] }> {
    const args = ['--media', mediaDir, '--port', '0', '--workers', String(workers)];
    const cli = await startServer({ name: `nginx x${workers}`, cli: NGINX_CLI, args, timeoutMs: 120_000 });
    const folder = folderOf(cli);
    const master = Number(readFileSync(join(folder, 'nginx.pid'), 'utf8'));
    return { cli, folder, master, workers: childPids(master) };
  }

  test("a command line killed outright: nginx follows it, and the next start removes the folder", async () => {
    const { cli: killed, folder, master, workers } = await startWatched(1);
    killed.process.child.kill('SIGKILL');
    await killed.process.exited;
    await waitFor(() => ([master, ...workers].some(running) ? null : true), 10_000);
    expect(existsSync(folder)).toBe(true);
    expect(removeStaleFolders()).toContain(basename(folder));
    expect(existsSync(folder)).toBe(false);
  }, 60_000);

  test('nginx dying under the command line: it exits 1, says why, and leaves no worker and no folder', async () => {
    const { cli, folder, master, workers } = await startWatched(2);
    expect(workers).toHaveLength(2);
    process.kill(master, 'SIGKILL');
    expect(await cli.process.exited).toBe(1);
    expect(cli.process.stderr()).toMatch(/\nnginx: nginx exited unexpectedly \(null\): /);
    await waitFor(() => (workers.some(running) ? null : true), 5000);
    expect(existsSync(folder)).toBe(false);
  }, 60_000);
});
