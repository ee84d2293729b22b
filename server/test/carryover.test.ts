// Keep-alive carry-over on real loopback sockets: the response after a paced one on
// the same connection starts at once. Loopback makes the old behaviour easy to see:
// its 64 KB packets each push the socket's next departure a second ahead at
// 500 kbit/s, and the last one's second used to fall on the next response.
import { Http1Connection, requestHead } from '../bench/http1.js';
import { loadSocketControl } from '../src/socket.js';
import { MB, makeDir, randomFile, removeDir, startServer, waitFor, type RunningServer } from './helpers.js';

const control = loadSocketControl();
const describeLinux = control.available ? describe : describe.skip;
if (!control.available) console.log(`SKIP: carry-over tests need SO_MAX_PACING_RATE: ${control.unavailableReason}`);

const RTP_KBPS = 500;
const RATE_BYTES_PER_S = 62_500;
const PACED_BYTES = 100_000;
const NEXT_BYTES = 23_000;
/** One loopback packet (MSS 65483) at the old rate: what the next response could wait before. */
const ONE_LOOPBACK_PACKET_MS = (65_483 / RATE_BYTES_PER_S) * 1000;

describeLinux.each([['kernel'], ['app']] as const)('the response after a paced one on a keep-alive connection (--burst-mode %s)', (burstMode) => {
  let mediaDir: string;
  let server: RunningServer;

  beforeAll(async () => {
    mediaDir = makeDir({ 'warm.m4s': randomFile(MB), 'paced.m4s': randomFile(PACED_BYTES), 'next.m4s': randomFile(NEXT_BYTES) });
    // N = 1: one loopback packet per application burst (at N = 4 one burst would hold the whole body).
    server = await startServer({ mediaDir, burstMode, burstPackets: 1 });
  });
  afterAll(async () => {
    await server.close();
    removeDir(mediaDir);
  });

  test('starts at once, while the paced one still took its paced time and counted its own bytes', async () => {
    const startedAtEpochMs = Date.now();
    const conn = await Http1Connection.open('127.0.0.1', server.port);
    try {
      // Linux never paces a connection's first 10 packets (640 KB on loopback): use them up unpaced.
      await conn.get(requestHead('127.0.0.1', '/media/warm.m4s'));
      const paced = await conn.get(requestHead('127.0.0.1', '/media/paced.m4s', { 'CMCD-Status': `rtp=${RTP_KBPS}` }));
      const next = await conn.get(requestHead('127.0.0.1', '/media/next.m4s'));
      expect([paced.bodyBytes, next.bodyBytes]).toEqual([PACED_BYTES, NEXT_BYTES]);
      expect(paced.serverTiming).toBe(`pace;dur=${RTP_KBPS};desc="paced"`);
      // The paced body was still paced (1.6 s at the rate; loopback's 64 KB packets and the
      // app writer's 2x kernel cap make it lumpy, 1.3-1.6 s)...
      expect(paced.lastByteMs).toBeGreaterThan(0.6 * (PACED_BYTES / RATE_BYTES_PER_S) * 1000);
      // ...and the next response did not wait for a loopback packet at the old rate (1 s).
      expect(next.firstByteMs).toBeLessThan(ONE_LOOPBACK_PACKET_MS / 10);
      expect(next.lastByteMs).toBeLessThan(ONE_LOOPBACK_PACKET_MS / 10);

      const localPort = conn.socket.localPort!;
      const lines = await waitFor(() => {
        const mine = server.logs.mediaOf({ localPort, startedAtEpochMs });
        return mine.length === 3 ? mine : null;
      });
      // Both body paths hold the last byte back (npm test runs this suite on each).
      const bodyPath = server.app.sammy.sender?.available === true ? 'sendfile' : 'stream';
      expect(lines.map((t) => [t.path, t.pacing, t.bytes, t.bodyPath])).toEqual([
        ['/media/warm.m4s', 'unpaced', MB, bodyPath],
        ['/media/paced.m4s', 'paced', PACED_BYTES, bodyPath],
        ['/media/next.m4s', 'unpaced', NEXT_BYTES, bodyPath],
      ]);
      // The line still reports the cap the body was sent under (removed just before its last byte).
      expect(lines[1]!.maxPacingRateBytesPerS).toBe((burstMode === 'app' ? 2 : 1) * RATE_BYTES_PER_S);
      expect(lines[2]!.maxPacingRateBytesPerS).toBe('unlimited');
      expect(server.app.sammy.pacing.activeResponses).toBe(0);
    } finally {
      conn.close();
    }
  }, 30_000);
});
