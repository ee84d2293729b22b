/**
 * ngx_http_sammy_module over HTTP/2 in a real nginx (TLS, node:http2 with a browser's
 * windows): the rule's tests the Node server runs too (@sammy/server/test/h2-contract:
 * the connection's cap is the sum of the rates of the streams with body left to send,
 * none while a stream without a rate sends or none are left; resets, malformed CMCD,
 * 100 cancelled streams), and a client that never reads then goes away. One nginx for
 * all; measured rates are printed. Skipped, with the reason printed, where nginx, its
 * source tree, a C compiler or openssl are missing.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http2, { type ClientHttp2Session } from 'node:http2';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { h2PacingContract } from '@sammy/server/test/h2-contract';
import { h2StreamFlood } from '@sammy/server/test/h2-flood';
import { readTelemetry } from '@sammy/server/telemetry';
import { MB, h2Get, h2LocalPort, h2RequestsNeverRead, h2Rtp, makeSelfSignedCert, metricValue, openH2Session, opensslMissing, randomFile, timedGet, waitFor } from '@sammy/server/test/helpers';
import { nginxUnavailableReason, startNginx, type RunningNginx } from '../src/nginx.js';
import { crashesIn } from './helpers.js';

const unavailable = nginxUnavailableReason() ?? opensslMissing();
const describeH2 = unavailable === null ? describe : describe.skip;
if (unavailable !== null) console.log(`SKIP: the nginx HTTP/2 pacing tests need nginx, its source tree and openssl: ${unavailable}`);

describeH2('nginx over HTTP/2: streams share their connection by the sum of their rtp', () => {
  let root: string;
  let nginx: RunningNginx;
  let ca: Buffer;
  let session: ClientHttp2Session;

  /** HTTP/2 streams holding a share of their connection's cap, over every worker. */
  const activeStreams = async (): Promise<number> => {
    const metrics = await timedGet(nginx.port, '/metrics', { ca, keepBody: true });
    return metricValue(metrics.body!.toString(), 'sammy_h2_streams_active') ?? -1;
  };

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'sammy-nginx-h2-'));
    const mediaDir = join(root, 'media');
    mkdirSync(mediaDir);
    writeFileSync(join(mediaDir, 'big.m4s'), randomFile(10 * MB));
    writeFileSync(join(mediaDir, 'five.m4s'), randomFile(5 * MB));
    writeFileSync(join(mediaDir, 'one.m4s'), randomFile(MB));
    const cert = makeSelfSignedCert(root);
    ca = cert.cert;
    nginx = await startNginx({
      mediaDir, port: 0, workers: 1, logFile: join(root, 'telemetry.jsonl'), tls: { certFile: cert.certFile, keyFile: cert.keyFile }, http2: true,
    });
    session = await openH2Session(nginx.port, ca);
    // Past the connection's first ten segments, which the kernel never paces.
    await h2Get(session, '/media/one.m4s');
  }, 180_000);

  afterAll(async () => {
    session?.close();
    if (nginx) await nginx.stop();
    rmSync(root, { recursive: true, force: true });
  }, 30_000);

  h2PacingContract({
    name: 'nginx h2',
    session: () => session,
    // The line of a stream of the session: its port and stream id (ports are handed out again).
    lineOf: (streamId) => {
      const port = h2LocalPort(session);
      return waitFor(() => readTelemetry(nginx.telemetryLog).find((t) => t.remotePort === port && t.streamId === streamId) ?? null, 5000);
    },
    activeStreams,
  });

  test('a client that never reads, then goes away: no 5xx, its shares gone, nginx serves on, no worker crashed', async () => {
    // HTTP/2's default 64 KB windows: nginx fills them and waits.
    const idle = await openH2Session(nginx.port, ca, { browserWindows: false });
    const streams = h2RequestsNeverRead(idle, '/media/big.m4s', [h2Rtp(8000), {}, h2Rtp(40_000)]);
    await waitFor(async () => ((await activeStreams()) === streams.length ? true : null));
    const localPort = h2LocalPort(idle);
    idle.destroy();
    await waitFor(async () => ((await activeStreams()) === 0 ? true : null));
    const lines = await waitFor(() => {
      const mine = readTelemetry(nginx.telemetryLog).filter((t) => t.remotePort === localPort);
      return mine.length === streams.length ? mine : null;
    });
    expect(lines.map((t) => [t.aborted, t.status < 500])).toEqual(streams.map(() => [true, true]));
    const after = await h2Get(session, '/media/one.m4s', h2Rtp(8000));
    expect([after.status, after.bytes]).toEqual([200, MB]);
    expect(crashesIn(nginx.errorLog)).toEqual([]);
  }, 30_000);

  test('1,000 streams opened at once by a client that reads nothing: at most the advertised limit held, the rest refused; nothing left once it goes', async () => {
    const flood = await h2StreamFlood(nginx.port, ca, { streams: 1000, path: '/media/big.m4s', ackSettings: true });
    let peak = 0;
    // The refusals arrive; the held streams fill their windows and wait.
    await waitFor(async () => {
      peak = Math.max(peak, await activeStreams());
      const refused = flood.resets.get(http2.constants.NGHTTP2_REFUSED_STREAM) ?? 0;
      return flood.goaway !== null || flood.socket.destroyed || refused + flood.answered.size >= 1000 ? true : null;
    }, 10_000);
    const refused = flood.resets.get(http2.constants.NGHTTP2_REFUSED_STREAM) ?? 0;
    console.log(`nginx h2, 1000 streams: advertised ${flood.advertisedMaxStreams}, answered ${flood.answered.size}, refused ${refused}, GOAWAY ${flood.goaway}, shares held at most ${peak}`);
    const limit = flood.advertisedMaxStreams!;
    expect(limit).toBeLessThan(1000);
    expect(flood.answered.size).toBeLessThanOrEqual(limit);
    expect(peak).toBeLessThanOrEqual(limit);
    expect(refused >= 1000 - limit || flood.goaway !== null || flood.socket.destroyed).toBe(true);
    flood.socket.destroy();
    await waitFor(async () => ((await activeStreams()) === 0 ? true : null));
    const after = await h2Get(session, '/media/one.m4s', h2Rtp(8000));
    expect([after.status, after.bytes]).toEqual([200, MB]);
    expect(crashesIn(nginx.errorLog)).toEqual([]);
  }, 30_000);
});
