// HTTP/2 clients that open more streams than the server allows, as an attacker would:
// frames written by hand over TLS (Node's own client queues requests over the peer's
// limit, so it cannot try this), every request for a 10 MB file, and no byte read back
// (the client never sends WINDOW_UPDATE). Each open media stream holds a descriptor and
// body in the server's buffers, so the server advertises a limit
// (limits.maxConcurrentStreams, SETTINGS_MAX_CONCURRENT_STREAMS) and refuses streams over it.
import type tls from 'node:tls';
import http2 from 'node:http2';
import { join } from 'node:path';
import { h2StreamFlood } from '../h2-flood.js';
import { MB, makeDir, makeSelfSignedCert, metricValue, openFds, opensslMissing, randomFile, removeDir, sleep, startServer, timedGet, waitFor, type RunningServer, type SelfSignedCert } from '../helpers.js';

const missing = opensslMissing();
const describeTls = missing === null ? describe : describe.skip;
if (missing !== null) console.log(`SKIP: HTTP/2 stream-limit tests need ${missing}`);

describeTls('HTTP/2: a client opening far more streams than allowed, reading nothing', () => {
  let dir: string;
  let cert: SelfSignedCert;
  let server: RunningServer;
  const LIMIT = 100;
  const STREAMS = 1000;

  beforeAll(async () => {
    dir = makeDir({ 'media/big.m4s': randomFile(10 * MB) });
    cert = makeSelfSignedCert(dir);
    server = await startServer({ mediaDir: join(dir, 'media'), http2: true, tls: { certFile: cert.certFile, keyFile: cert.keyFile } });
  });
  let flooding: tls.TLSSocket | null = null;
  // A failed case must not leave its session holding the server open.
  afterEach(() => flooding?.destroy());
  afterAll(async () => {
    await server.close();
    removeDir(dir);
  });

  test.each([
    ['before acknowledging the SETTINGS', false],
    ['after acknowledging the SETTINGS', true],
  ])('%s: the limit is advertised, at most that many streams are ever held, the rest refused; nothing is left once the client goes', async (_, ack) => {
    const fdsBefore = openFds();
    const pacing = server.app.sammy.http2Pacing!;
    const f = await h2StreamFlood(server.port, cert.cert, { streams: STREAMS, path: '/media/big.m4s', ackSettings: ack });
    flooding = f.socket;
    let peakStreams = 0;
    let peakFds = 0;
    const watch = setInterval(() => {
      peakStreams = Math.max(peakStreams, pacing.activeStreams);
      peakFds = Math.max(peakFds, openFds() ?? 0);
    }, 20);
    // The refusals, or the session's end, arrive; the held streams fill their windows and wait.
    await waitFor(() => (f.goaway !== null || f.socket.destroyed || [...f.resets.values()].reduce((a, b) => a + b, 0) + f.answered.size >= STREAMS ? true : null));
    await sleep(500);
    clearInterval(watch);
    const refused = f.resets.get(http2.constants.NGHTTP2_REFUSED_STREAM) ?? 0;
    console.log(
      `${STREAMS} streams ${ack ? 'after' : 'before'} the SETTINGS ack: advertised ${f.advertisedMaxStreams}, answered ${f.answered.size}, refused ${refused}, ` +
        `other resets ${JSON.stringify(Object.fromEntries([...f.resets].filter(([code]) => code !== http2.constants.NGHTTP2_REFUSED_STREAM)))}, GOAWAY ${f.goaway}, ` +
        `connection ${f.socket.destroyed ? 'closed by the server' : 'open'}; ` +
        `server held at most ${peakStreams} streams, ${fdsBefore === null ? '?' : peakFds - fdsBefore} more descriptors`,
    );
    expect(f.advertisedMaxStreams).toBe(LIMIT);
    expect(peakStreams).toBeLessThanOrEqual(LIMIT);
    expect(f.answered.size).toBeLessThanOrEqual(LIMIT);
    // Either each stream over the limit is refused (before the client acknowledged the
    // limit), or the client loses its session (after: RFC 9113 5.1.2 lets the server
    // treat it as a protocol error, and nghttp2 does).
    expect(refused >= STREAMS - LIMIT || f.goaway !== null || f.socket.destroyed).toBe(true);
    if (fdsBefore !== null) expect(peakFds - fdsBefore).toBeLessThanOrEqual(LIMIT + 10);
    f.socket.destroy();
    await waitFor(() => (pacing.activeStreams === 0 ? true : null));
    if (fdsBefore !== null) await waitFor(() => (openFds()! <= fdsBefore ? true : null));
    const metrics = await timedGet(server.port, '/metrics', { ca: cert.cert, keepBody: true });
    expect(metrics.status).toBe(200);
    expect(metricValue(metrics.body!.toString(), 'sammy_errors_total{kind="server"}') ?? 0).toBe(0);
  }, 30_000);
});
